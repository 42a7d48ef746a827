"""keras.layers' normalization layers."""
