"""Bias add and ReLU finished in place, and their gradient in one pass.

A convolution's output is a fresh array that only it holds, so its bias and
ReLU are applied in place: in the convolution itself, block by block while
each block of the product is still in cache (``epilogue``), or as one pass
split over the CPU threads (``apply``). Backward needs only the output's
sign as the ReLU mask; ``gradient`` masks the incoming gradient and sums it
over rows for the bias in one pass.

Everything works on 2-D ``(rows, channels)`` views through ``xp``.
"""

__all__ = ["epilogue", "apply", "mask_block", "mask_and_sum", "sum_rows", "gradient"]

import numpy

from minikeras import kernels
from minikeras.backend.blocks import sum_in_order
from minikeras.backend.dtypes import dtype_name



def _row_blocks(device, work, rows, elements):
    """``device.row_blocks``; an array module (the older calling
    convention) runs everything as one block."""
    if hasattr(device, "row_blocks"):
        return device.row_blocks(work, rows, elements)
    return [work(0, rows)]


def epilogue(device, bias, relu):
    """``finish(rows)`` adding ``bias`` and applying ReLU in place to a 2-D
    block (the fused ``bias_relu`` kernel), or None when there is nothing
    to do."""
    if bias is None and not relu:
        return None
    run = kernels.get("bias_relu", device)

    def finish(block):
        run(block, bias, relu)

    return finish


def apply(device, out, bias, relu):
    """Add ``bias`` to the 2-D ``out`` and apply ReLU, in place, split over
    rows (``device.row_blocks``)."""
    finish = epilogue(device, bias, relu)
    if finish is not None:
        _row_blocks(device, lambda start, stop: finish(out[start:stop]), out.shape[0], out.size)
    return out


def mask_block(device, grad, out, relu, target):
    """Rows of the gradient through ReLU: ``grad * (out > 0)`` written into
    ``target`` when ``relu`` (the fused ``relu_backward`` kernel), else
    ``grad`` itself."""
    if not relu:
        return grad
    return kernels.get("relu_backward", device)(grad, out, target)


def mask_and_sum(device, grad, out, relu, wants_bias, target):
    """``(grad through ReLU, its sum over rows or None)`` for one 2-D block:
    with both, the fused ``relu_bias_backward`` kernel (one launch on a GPU)
    writes the mask into ``target`` and sums it; with one of them, that one.
    On the CPU the sum is a matrix-vector product (``sum_rows``)."""
    if relu and wants_bias and not device.host_kernels:
        return kernels.get("relu_bias_backward", device)(grad, out, target)
    block = mask_block(device, grad, out, relu, target)
    return block, sum_rows(device, block) if wants_bias else None


def sum_rows(device, block):
    """``block.sum(axis=0)`` of a 2-D block; on the CPU, for float32/float64,
    as ``ones @ block`` (one BLAS call: measured 5x faster than NumPy's
    column-wise reduction of a (86528, 32) float32 array, 0.31 vs 1.64 ms)."""
    if device.host_kernels and block.ndim == 2 and dtype_name(block.dtype) in ("float32", "float64"):
        return _ones(block.shape[0], block.dtype) @ block
    return block.sum(axis=0)


_ONES = {}


def _ones(count, dtype):
    """A vector of ``count`` ones (kept per size and dtype: never written to)."""
    key = (count, dtype_name(dtype))
    ones = _ONES.get(key)
    if ones is None:
        if len(_ONES) > 64:
            _ONES.clear()
        ones = _ONES[key] = numpy.ones(count, dtype)
    return ones


def gradient(device, grad, out, relu, wants_bias):
    """``(grad through ReLU, its sum over rows or None)`` for 2-D ``grad``
    and ``out`` (the ReLU output; unused without ``relu``), split over rows
    (``device.row_blocks``)."""
    xp = device.xp
    masked = xp.empty_like(grad) if relu else grad

    def part(start, stop):
        return mask_and_sum(device, grad[start:stop], None if out is None else out[start:stop], relu, wants_bias,
                            masked[start:stop])[1]

    sums = _row_blocks(device, part, grad.shape[0], grad.size)
    grad_bias = sum_in_order(xp, sums, grad.shape[-1], grad.dtype) if wants_bias else None
    return masked, grad_bias
