"""keras.layers' core family: Dense, EinsumDense, Embedding, Identity, InputLayer, Lambda, Masking,
Wrapper, and the quantized and LoRA forms of the kernel layers.
"""
