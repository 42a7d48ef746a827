"""keras.layers' recurrent layers, their cells and the RNN wrappers."""
