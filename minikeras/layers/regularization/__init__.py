"""keras.layers' regularization layers (dropout, noise, activity regularization)."""
