"""keras.layers' activation layers."""
