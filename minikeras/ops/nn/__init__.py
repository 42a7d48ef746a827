"""Neural-network ops: activations, softmax, conv, pooling, dropout, embedding."""
