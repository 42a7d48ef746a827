"""keras.layers' pooling layers (max, average, global, adaptive)."""
