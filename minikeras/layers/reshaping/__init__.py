"""keras.layers' reshaping layers."""
