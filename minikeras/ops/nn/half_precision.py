"""Ops that run float16/bfloat16 inputs in float32 and round the result back.

Some fused ops (convolution's patch-matrix products, the recurrent
sequences) are written with ``@`` and in-place updates that NumPy cannot
do in bfloat16 (ml_dtypes' bfloat16 product returns float32, in-place
updates would then round every step) and does ~300x slower than float32 in
float16 (no 16-bit BLAS). They take 16-bit inputs through :func:`in_float32`:
inputs cast up, the op in float32, floating outputs cast back to the input's
16-bit dtype. The casts are differentiable, so gradients reach 16-bit
inputs and float32 variables alike. The result is what a 16-bit kernel with
float32 accumulation gives (cuDNN's and the tensor cores' arithmetic), and
the output dtype is the compute dtype, as in Keras. On a GPU these ops
therefore run their GEMMs in float32, not on the 16-bit tensor-core path.
"""
import numpy

from minikeras.autograd import Tensor
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
    from minikeras.ops.array.dtype import cast

    upcast = [cast(value, numpy.float32) if isinstance(value, Tensor) and is_half_dtype(value.dtype) else value
              for value in inputs]
    outputs = function.apply(*upcast)
    if isinstance(outputs, tuple):
        return tuple(cast(out, half) if out.dtype == numpy.float32 else out for out in outputs)
    return cast(outputs, half) if outputs.dtype == numpy.float32 else outputs
