"""keras.layers' preprocessing layers (lookups, hashing, encodings, text, audio, FeatureSpace)."""
