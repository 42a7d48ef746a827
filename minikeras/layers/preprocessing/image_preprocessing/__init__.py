"""keras.layers' image preprocessing and augmentation layers."""
