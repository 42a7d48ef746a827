"""Ops that run float16/bfloat16 inputs in float32 and round the result back.

Some fused ops (convolution's patch-matrix products, the recurrent
sequences) are written with ``@`` and in-place updates that NumPy cannot do
in bfloat16 (ml_dtypes' bfloat16 product returns float32, in-place updates
would round every step) and does ~300x slower than float32 in float16 (no
16-bit BLAS). :func:`in_float32` runs such an op as one node that casts its
16-bit inputs up, runs the op's own forward and backward in float32, and
rounds the floating outputs (and the input gradients) back to 16 bits: the
result of a 16-bit kernel with float32 accumulation, cuDNN's and the tensor
cores' arithmetic, with Keras's output dtype.

What the op keeps for backward is stored in 16 bits and cast up again in
backward, so activations cost half the memory, as mixed precision promises.
It loses nothing for values that came from 16-bit tensors (the inputs, the
patch matrices made of them, the 16-bit kernels); float32 intermediates an
op keeps (an LSTM's gate activations) are rounded to 16 bits, which is the
precision Keras's 16-bit kernels keep them in. On a GPU these ops run their
GEMMs in float32, not on the 16-bit tensor-core path.
"""
import numpy

from minikeras.autograd import Function, Tensor
from minikeras.backend.dtypes import is_half_dtype

__all__ = []


def in_float32(function, *inputs):
    """``function.apply(*inputs)``, in float32 when an input is 16-bit.

    Args:
        function: a Function instance (not yet applied).
        inputs: its inputs (Tensors, None or constants).

    Returns:
        The output(s), floating ones in the 16-bit dtype of the inputs.
    """
    half = next((value.dtype for value in inputs if isinstance(value, Tensor) and is_half_dtype(value.dtype)), None)
    if half is None:
        return function.apply(*inputs)
    return _InFloat32(function, half).apply(*inputs)


class _InFloat32(Function):
    """``inner`` run in float32 on 16-bit arrays (see the module docstring)."""

    keeps_dtype = False  # it rounds its outputs itself

    def __init__(self, inner, half):
        self.inner, self.half = inner, half

    @property
    def name(self):
        return self.inner.name

    def forward(self, *arrays):
        inner = self.inner
        inner.device, inner.needs_input_grad = self.device, self.needs_input_grad
        self.input_dtypes = [getattr(array, "dtype", None) for array in arrays]
        outputs = inner.forward(*[_up(array) for array in arrays])
        # Kept for backward in 16 bits (and counted so), cast up again there.
        self.save_for_backward(*[_down(array, self.half) for array in inner.saved])
        inner.saved = ()
        if isinstance(outputs, tuple):
            return tuple(_down(out, self.half) for out in outputs)
        return _down(outputs, self.half)

    def backward(self, *grads):
        inner = self.inner
        inner.saved = tuple(_up(array) for array in self.saved)
        try:
            result = inner.backward(*[_up(grad) for grad in grads])
        finally:
            inner.saved = ()
        single = not isinstance(result, (tuple, list))
        result = (result,) if single else tuple(result)
        result = tuple(grad if grad is None or dtype is None or not is_half_dtype(dtype) else grad.astype(dtype)
                       for grad, dtype in zip(result, self.input_dtypes))
        return result[0] if single else result


def _up(array):
    if array is not None and is_half_dtype(getattr(array, "dtype", None)):
        return array.astype(numpy.float32)
    return array


def _down(array, half):
    if array is not None and getattr(array, "dtype", None) == numpy.float32:
        return array.astype(half)
    return array
