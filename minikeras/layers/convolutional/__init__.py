"""keras.layers' convolution layers."""
