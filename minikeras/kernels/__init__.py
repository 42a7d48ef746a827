"""Fused kernels: CUDA sources beside their NumPy references (floor 2).

``kernels.get(name, device)`` returns the callable to run on ``device``: the
compiled CUDA kernel on a real GPU, the NumPy reference elsewhere (the CPU
path, and the simulated GPU's, counted there as one launch). One family per
module:

- ``elementwise``: bias + ReLU forward, the ReLU mask backward;
- ``bias_gradient``: the ReLU mask backward and the bias gradient (its sum over rows) in one launch;
- ``matmul_epilogue``: a small matrix product with its bias and ReLU (a Dense layer's forward) in one launch;
- ``optimizer_updates``: multi-tensor Adam, SGD, RMSprop and weight decay (every variable in one
  launch, PyTorch's ``multi_tensor_apply`` layout: ``multi_tensor``);
- ``batch_norm``: BatchNorm's statistics, normalisation and backward over a (rows, channels) view,
  the reductions two-stage and deterministic (``channel_reduction``);
- ``reductions``: sparse softmax cross-entropy forward and backward;
- ``pooling``: max and average pooling forward and backward;
- ``im2col``: a convolution's patch matrix from the unpadded input, and col2im;
- ``counter_random``: uniform and normal numbers from a counter-based stream whose offset is a device
  word the kernel advances (random layers inside a captured step: ``captured_random.py``).

See ``kernel.py`` for how a Kernel's source, reference and launch fit
together, and ARCHITECTURE.md ("GPU kernels") for an example end to end.
"""
from minikeras.kernels.kernel import Kernel, cuda_source, get, register, registered
from minikeras.kernels import (  # noqa: F401  (they register)
    batch_norm, bias_gradient, elementwise, im2col, matmul_epilogue, optimizer_updates, pooling, reductions)
from minikeras.kernels import counter_random  # noqa: F401,E402  (it registers)

__all__ = ["Kernel", "cuda_source", "get", "register", "registered"]
