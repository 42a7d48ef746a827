"""The simulated GPU's cuDNN: the two convolution calls of ``cudnn.py``,
computed with NumPy on the host view, issued like any simulated kernel
(stream order, race detector, launch count, graph capture).

It checks what the ctypes calls cannot: cuDNN reads raw pointers with the
shapes of its descriptors, so an array of another dtype, shape or layout
would be read as garbage on a real GPU, not refused. Here it is refused.

The arithmetic is written apart from the im2col path it stands in for
(windows of the padded input and one tensordot per call), so that the
suite compares two implementations.
"""
import numpy
from numpy.lib.stride_tricks import sliding_window_view

from minikeras.device import simulated_array


def _check(name, array, shape):
    if array.dtype != numpy.float32 or not array.flags.c_contiguous or array.shape != shape:
        raise RuntimeError(
            f"Simulated GPU: cuDNN's {name} was given a {array.dtype} array of shape {array.shape} "
            f"({'C-contiguous' if array.flags.c_contiguous else 'not C-contiguous'}); its descriptors say "
            f"float32 {shape}, C-contiguous. cuDNN reads raw pointers: on a real GPU this reads garbage.")


def _windows(spec, x):
    """(N, Ho, Wo, C, kh, kw) windows of the input padded on both sides."""
    (ph, pw), (sh, sw), (dh, dw) = spec.pads, spec.strides, spec.dilation
    (kh, kw), (ho, wo) = spec.window, spec.out
    padded = numpy.pad(x, ((0, 0), (ph, ph), (pw, pw), (0, 0)))
    extent = ((kh - 1) * dh + 1, (kw - 1) * dw + 1)
    windows = sliding_window_view(padded, extent, axis=(1, 2))[:, ::sh, ::sw, :, ::dh, ::dw]
    return windows[:, :ho, :wo]


def _forward(spec, x, kernel):
    windows = _windows(spec, x)  # (N, Ho, Wo, C, kh, kw) x (K, kh, kw, C)
    return numpy.ascontiguousarray(
        numpy.tensordot(windows, kernel, axes=([3, 4, 5], [3, 1, 2])).astype(numpy.float32))


def _backward_data(spec, kernel, grad):
    (ph, pw), (sh, sw), (dh, dw) = spec.pads, spec.strides, spec.dilation
    (kh, kw), (ho, wo) = spec.window, spec.out
    padded = numpy.zeros((spec.batch, spec.height + 2 * ph, spec.width + 2 * pw, spec.channels), numpy.float32)
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dh, i * dh + sh * (ho - 1) + 1, sh)
            cols = slice(j * dw, j * dw + sw * (wo - 1) + 1, sw)
            padded[:, rows, cols, :] += grad @ kernel[:, i, j, :]
    return numpy.ascontiguousarray(padded[:, ph:ph + spec.height, pw:pw + spec.width])


class SimulatedConvolutions:
    """``cudnn.Convolutions``'s interface on the simulated GPU."""

    def usable(self, xp, spec):
        return True

    def _call(self, name, function, spec, arrays, shapes):
        for array, shape in zip(arrays, shapes):
            _check(name, array._array if type(array) is simulated_array.SimulatedArray else array, shape)
        return simulated_array._call(lambda *host: function(spec, *host), f"cudnn.{name}", arrays, {})[0]

    def forward(self, xp, x, kernel, spec):
        return self._call("convolution_forward", _forward, spec, (x, kernel),
                          (_input_shape(spec), _kernel_shape(spec)))

    def backward_data(self, xp, grad, kernel, spec):
        return self._call("convolution_backward_data", _backward_data, spec, (kernel, grad),
                          (_kernel_shape(spec), _output_shape(spec)))


def _input_shape(spec):
    return (spec.batch, spec.height, spec.width, spec.channels)


def _kernel_shape(spec):
    return (spec.filters,) + spec.window + (spec.channels,)


def _output_shape(spec):
    return (spec.batch,) + spec.out + (spec.filters,)
