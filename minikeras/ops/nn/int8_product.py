"""The int8 products behind quantized Dense and EinsumDense (Keras 3's int8 mode).

Keras multiplies int8 inputs by the int8 kernel with int32 accumulation
(TensorFlow's ``tf.matmul(..., output_type=int32)``), casts the exact
integer result to the compute dtype and divides by the product of the
inputs' per-row scale and the kernel's per-channel scale. The input
gradient passes straight through the input quantization: ``upstream @
(kernel / kernel_scale).T``. The kernel and its scale get no gradient.

Neither NumPy nor CuPy has an int8 GEMM that accumulates in int32 (both
keep int8 and wrap around, and NumPy's integer matmul does not use BLAS),
so the product runs on the float32 GEMM of the device with the result
still exact: int8 values and their products (at most 127 * 127 < 2**14)
are exact in float32 (and in TF32, whose 10-bit mantissa holds 7-bit
values), and a sum of at most 1024 such products stays below 2**24, so
the contraction is cut into blocks of 1024 whose float32 results are
integers, added in int32. A general einsum (not a plain matrix product)
runs once in float64, exact for any realistic size. On a GPU this costs a
float32 copy of the kernel per call; cuBLAS's own int8 GEMM
(``cublasGemmEx`` with ``CUDA_R_8I`` inputs and ``CUDA_R_32I`` output,
IMMA tensor cores) would avoid it and needs a card to validate.
"""
import numpy

from minikeras.autograd import Function
from minikeras.backend.dtypes import as_numpy_dtype

__all__ = []

#: Contraction length whose float32 sum of int8 products is exact: 1024 * 127**2 < 2**24.
EXACT_BLOCK = 1024


def exact_int8_matmul(device, left, right):
    """``left @ right`` of 2-D int8 arrays as an exact int32 array, on the
    device's float32 GEMM (module docstring)."""
    xp = device.xp
    inner = left.shape[1]
    total = None
    for start in range(0, max(inner, 1), EXACT_BLOCK):
        stop = min(start + EXACT_BLOCK, inner)
        block = device.matmul(left[:, start:stop].astype(numpy.float32), right[start:stop].astype(numpy.float32))
        block = block.astype(numpy.int32)
        if total is None:
            total = block
        else:
            xp.add(total, block, out=total)
    return total


def exact_int8_einsum(device, equation, left, right):
    """``einsum(equation, left, right)`` of int8 arrays, exact, as float64
    (an explicit equation: letters only, no ``...``)."""
    return device.xp.einsum(equation, left.astype(numpy.float64), right.astype(numpy.float64), optimize=True)


class Int8Contraction(Function):
    """Keras's int8 Dense / EinsumDense product, with its custom gradient.

    ``apply(inputs, quantized_inputs, inputs_scale, kernel, kernel_scale)``:
    ``inputs`` is only there to receive the gradient (the straight-through
    estimator Keras's ``custom_gradient`` defines); the product uses
    ``quantized_inputs`` (int8) and ``inputs_scale``, already aligned with
    the output. Without an input quantizer (weight-only int8) pass None for
    both: the float inputs then meet the kernel cast to their dtype. A None
    ``kernel_scale`` means the kernel is already float (EinsumDense's int4
    with an input quantizer).

    Args:
        compute_dtype: the layer's compute dtype (the result's).
        equation: None for Dense (the last axis of the inputs with the
            kernel's first), else an explicit einsum equation.
        gradient_equation: for an einsum, ``"<out>,<kernel>-><inputs>"``.
        kernel_scale_layout: for an einsum, what lays the stored kernel
            scale out against the kernel (``for_operand(xp, scale)``,
            layers/core/einsum_quantization_layout.py); Dense's needs none.
    """

    def __init__(self, compute_dtype, equation=None, gradient_equation=None, kernel_scale_layout=None):
        self.compute_dtype = as_numpy_dtype(compute_dtype)
        self.equation = equation
        self.gradient_equation = gradient_equation
        self.kernel_scale_layout = kernel_scale_layout

    def forward(self, inputs, quantized_inputs, inputs_scale, kernel, kernel_scale):
        device = self.device
        dtype = self.compute_dtype
        self.input_shape = inputs.shape
        if self.needs_input_grad[0]:
            self.save_for_backward(kernel, kernel_scale)
        if quantized_inputs is None:  # weight-only: float inputs, kernel cast to their dtype, then de-scaled
            product = self._float_product(inputs, kernel.astype(dtype))
            return product if kernel_scale is None else product / kernel_scale.astype(dtype)
        if self.equation is None:
            flat = quantized_inputs.reshape(-1, quantized_inputs.shape[-1])
            product = exact_int8_matmul(device, flat, kernel).reshape(quantized_inputs.shape[:-1] + (kernel.shape[1],))
        else:
            product = exact_int8_einsum(device, self.equation, quantized_inputs, kernel)
        scale = inputs_scale.astype(dtype)
        if kernel_scale is not None:
            scale = scale * kernel_scale.astype(dtype)
        return product.astype(dtype) / scale

    def _float_product(self, inputs, kernel):
        if self.equation is None:
            flat = inputs.reshape(-1, inputs.shape[-1])
            return self.device.matmul(flat, kernel).reshape(inputs.shape[:-1] + (kernel.shape[1],))
        return self._einsum(self.equation, inputs, kernel)

    def _einsum(self, equation, left, right):
        if left.dtype.itemsize == 2:  # CuPy contracts no 16-bit floats (ops/nn/einsum_dense.py)
            return self.device.xp.einsum(equation, left.astype(numpy.float32), right.astype(numpy.float32),
                                         optimize=True).astype(left.dtype)
        return self.device.xp.einsum(equation, left, right, optimize=True)

    def backward(self, grad):
        kernel, kernel_scale = self.saved
        dtype = grad.dtype
        float_kernel = kernel.astype(dtype)
        if kernel_scale is not None:
            if self.kernel_scale_layout is not None:
                kernel_scale = self.kernel_scale_layout.for_operand(self.device.xp, kernel_scale)
            float_kernel = float_kernel / kernel_scale.astype(dtype)
        if self.equation is None:
            flat = grad.reshape(-1, grad.shape[-1])
            grad_inputs = self.device.matmul(flat, float_kernel.T).reshape(self.input_shape)
        else:
            grad_inputs = self._einsum(self.gradient_equation, grad, float_kernel)
        return grad_inputs, None, None, None, None


def int8_contraction(inputs, quantized_inputs, inputs_scale, kernel, kernel_scale, compute_dtype, equation=None,
                     gradient_equation=None, kernel_scale_layout=None):
    """Keras's int8 product (see :class:`Int8Contraction`) on Tensors.

    Returns:
        A Tensor in ``compute_dtype`` whose gradient reaches ``inputs`` only.
    """
    function = Int8Contraction(compute_dtype, equation, gradient_equation, kernel_scale_layout)
    return function.apply(inputs, quantized_inputs, inputs_scale, kernel, kernel_scale)
