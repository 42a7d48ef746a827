"""keras.layers' merging layers and their functional forms (``add``, ``concatenate``...)."""
