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

The families load on the first ``get`` of a kernel (on any device: the CPU runs
their references) or on first use of ``kernels.<family>``; importing this
package loads ``kernel.py`` only.
"""
import importlib

from minikeras.kernels.kernel import FAMILIES, Kernel, cuda_source, get, register, registered

__all__ = ["Kernel", "cuda_source", "get", "register", "registered"]

# Every module of the package, as a lazy attribute: the families and their shared pieces.
_SUBMODULES = FAMILIES + ("captured_random", "channel_reduction", "cuda_common", "multi_tensor")


def __getattr__(name):
    # PEP 562: ``kernels.batch_norm``, ``kernels.captured_random``, ... on first use.
    if name in _SUBMODULES:
        return importlib.import_module(f"minikeras.kernels.{name}")
    raise AttributeError(f"module 'minikeras.kernels' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))
