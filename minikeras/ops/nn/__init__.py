"""Neural-network ops: activations, softmax, conv, pooling, dropout, embedding, dense, normalization,
recurrent sequences, upsampling, weight penalties."""
