"""keras.layers' attention layers."""
