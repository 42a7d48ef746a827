"""Fourier transforms through ``xp.fft`` with Keras's interface: complex
values travel as ``(real, imag)`` pairs of real tensors. fft, fft2, ifft2,
rfft, irfft, stft, istft.

All are linear, so their gradients are the adjoint transforms; they are
compositions here: each transform is one Function whose backward applies
the adjoint (``fft``'s adjoint is ``n * ifft``, and so on).
"""

__all__ = ["fft", "fft2", "ifft2", "rfft", "irfft", "stft", "istft"]

import numpy

from minikeras.autograd import Function
from minikeras.backend.dtypes import is_float_dtype
from minikeras.ops.math._elementwise import operand
from minikeras.ops.math._operands import _as_tensor
from minikeras._support.argument_validation import validate_flag, validate_int


def _pair(op_name, x):
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise ValueError(f"{op_name} expects a (real, imag) pair of tensors, received {type(x).__name__}.")
    real, imag = (_as_tensor(op_name, operand(op_name, part)) for part in x)
    if not is_float_dtype(real.dtype) or not is_float_dtype(imag.dtype) or real.dtype != imag.dtype:
        # Keras: both parts floats of one dtype (an int part, or float16 with float32, is refused)
        raise TypeError(f"{op_name} expects real and imag parts of one float dtype, received {real.dtype} and "
                        f"{imag.dtype}.")
    if real.shape != imag.shape:
        raise ValueError(f"{op_name}: real and imag parts must have the same shape, received {real.shape} and "
                         f"{imag.shape}.")
    dtype = real.dtype if is_float_dtype(real.dtype) else numpy.dtype("float32")
    return real.astype(dtype) if real.dtype != dtype else real, imag.astype(dtype) if imag.dtype != dtype else imag


class _ComplexTransform(Function):
    """``forward_transform`` on real+imag*1j over the last ``ndim`` axes; backward is its adjoint."""
    half_in_float32 = True  # xp.fft takes no 16-bit floats

    def __init__(self, axes, inverse):
        self.axes, self.inverse = axes, inverse

    def _apply(self, xp, values, inverse):
        transform = xp.fft.ifftn if inverse else xp.fft.fftn
        return transform(values, axes=self.axes)

    def forward(self, real, imag):
        xp = self.device.xp
        out = self._apply(xp, real + 1j * imag, self.inverse)
        self.dtype = real.dtype
        self.scale = float(numpy.prod([real.shape[a] for a in self.axes]))
        return xp.real(out).astype(real.dtype), xp.imag(out).astype(real.dtype)

    def backward(self, grad_real, grad_imag):
        xp = self.device.xp
        # For y = F x (complex linear), the real gradient is conj(F)^T g = n * ifft(g) for the fft,
        # and fft(g) / n for the inverse.
        g = grad_real + 1j * grad_imag
        back = self._apply(xp, g, not self.inverse)
        back = back * self.scale if not self.inverse else back / self.scale
        return xp.real(back).astype(self.dtype), xp.imag(back).astype(self.dtype)


def fft(x):
    """The 1-D FFT over the last axis of ``x = (real, imag)``; returns ``(real, imag)``."""
    real, imag = _pair("fft", x)
    return _ComplexTransform((-1,), False).apply(real, imag)


def fft2(x):
    """The 2-D FFT over the last two axes; ``(real, imag)`` in and out."""
    real, imag = _pair("fft2", x)
    return _ComplexTransform((-2, -1), False).apply(real, imag)


def ifft2(x):
    """The 2-D inverse FFT over the last two axes; ``(real, imag)`` in and out."""
    real, imag = _pair("ifft2", x)
    return _ComplexTransform((-2, -1), True).apply(real, imag)


class Rfft(Function):
    half_in_float32 = True  # xp.fft takes no 16-bit floats

    def __init__(self, length):
        self.length = length

    def forward(self, x):
        xp = self.device.xp
        self.input_length, self.dtype = x.shape[-1], x.dtype
        out = xp.fft.rfft(x, n=self.length, axis=-1)
        return xp.real(out).astype(x.dtype), xp.imag(out).astype(x.dtype)

    def backward(self, grad_real, grad_imag):
        xp = self.device.xp
        n = self.length
        bins = grad_real.shape[-1]
        # the adjoint of rfft: sum_k g_k e^{-2 pi i k t / n} conjugated, i.e. Re(sum_k conj-weighted)
        t = xp.arange(n, dtype=self.dtype)
        k = xp.arange(bins, dtype=self.dtype)
        angle = (2 * numpy.pi / n) * (k[:, None] * t[None, :])
        grad = grad_real @ xp.cos(angle) - grad_imag @ xp.sin(angle)
        if n >= self.input_length:
            return grad[..., :self.input_length].astype(self.dtype)
        padded = xp.zeros(grad.shape[:-1] + (self.input_length,), dtype=self.dtype)
        padded[..., :n] = grad
        return padded


def rfft(x, fft_length=None):
    """The FFT of a real signal over the last axis (``fft_length`` crops or zero-pads): ``(real, imag)``."""
    x = _as_tensor("rfft", operand("rfft", x))
    if not is_float_dtype(x.dtype) or x.dtype.itemsize < 4:
        x = x.astype("float32")  # Keras (TensorFlow, JAX): the spectrum of a 16-bit signal is float32
    if x.ndim == 0:
        raise ValueError("rfft expects a signal with at least one axis, received a scalar.")
    length = x.shape[-1] if fft_length is None else validate_int("rfft", "fft_length", fft_length, minimum=1)
    if length == 0:  # an empty signal has an empty spectrum (Keras's answer; NumPy refuses n=0)
        return x * 0, x * 0
    return Rfft(length).apply(x)


class Irfft(Function):
    half_in_float32 = True  # xp.fft takes no 16-bit floats

    def __init__(self, length):
        self.length = length

    def forward(self, real, imag):
        xp = self.device.xp
        self.bins, self.dtype = real.shape[-1], real.dtype
        return xp.fft.irfft(real + 1j * imag, n=self.length, axis=-1).astype(real.dtype)

    def backward(self, grad):
        xp = self.device.xp
        n, bins = self.length, self.bins
        t = xp.arange(n, dtype=self.dtype)
        k = xp.arange(bins, dtype=self.dtype)
        angle = (2 * numpy.pi / n) * (k[:, None] * t[None, :])
        # irfft weights: bin 0 (and the Nyquist bin of even n) once, the others twice; imag of bin 0 ignored
        weight = xp.full((bins,), 2.0, dtype=self.dtype)
        weight[0] = 1.0
        if n % 2 == 0 and bins > n // 2:
            weight[n // 2] = 1.0
        if bins > n // 2 + 1:
            weight[n // 2 + 1:] = 0.0
        grad_real = (grad @ xp.cos(angle).T) * weight / n
        grad_imag = -(grad @ xp.sin(angle).T) * weight / n
        grad_imag[..., 0] = 0
        if n % 2 == 0 and bins > n // 2:
            grad_imag[..., n // 2] = 0
        return grad_real, grad_imag


def irfft(x, fft_length=None):
    """The inverse of :func:`rfft` from ``(real, imag)``: a real signal of ``fft_length`` samples."""
    real, imag = _pair("irfft", x)
    if real.ndim == 0:
        raise ValueError("irfft expects (real, imag) with at least one axis, received scalars.")
    length = 2 * (real.shape[-1] - 1) if fft_length is None else validate_int("irfft", "fft_length", fft_length,
                                                                                 minimum=1)
    if length < 1:
        raise ValueError(f"irfft: {real.shape[-1]} frequency bin(s) give no signal; pass fft_length.")
    return Irfft(length).apply(real, imag)


def _frame_arguments(op_name, sequence_length, sequence_stride, fft_length, center):
    """Check the framing arguments shared by stft and istft; return them as ints."""
    sequence_length = validate_int(op_name, "sequence_length", sequence_length, minimum=1)
    sequence_stride = validate_int(op_name, "sequence_stride", sequence_stride, minimum=1)
    fft_length = validate_int(op_name, "fft_length", fft_length, minimum=1)
    if fft_length < sequence_length:
        raise ValueError(f"{op_name}: fft_length must be at least sequence_length, received fft_length={fft_length} "
                         f"and sequence_length={sequence_length}.")
    validate_flag(op_name, "center", center)
    return sequence_length, sequence_stride, fft_length


def _window_array(window, length, op_name="stft"):
    """The analysis window of ``sequence_length`` samples (None: no window, see :func:`_frame_window`)."""
    if window is None:
        return numpy.ones(length)
    if isinstance(window, str):
        if length == 1 and window in ("hann", "hamming"):
            return numpy.ones(1)  # scipy's get_window, torch and TensorFlow: a one-sample window is [1.]
        if window == "hann":
            return numpy.hanning(length + 1)[:-1]
        if window == "hamming":
            return numpy.hamming(length + 1)[:-1]
        raise ValueError(f"{op_name}: window must be 'hann', 'hamming', None or a tensor, received {window!r}.")
    values = window.numpy() if hasattr(window, "numpy") else window
    if isinstance(values, (bool, numpy.bool_)) or not hasattr(values, "shape") and not isinstance(values, (list, tuple)):
        raise TypeError(f"{op_name}: window must be 'hann', 'hamming', None or a tensor, received {window!r}.")
    values = numpy.asarray(values)
    if values.dtype.kind not in "iuf" or values.shape != (length,):
        raise ValueError(f"{op_name}: a window tensor must hold sequence_length ({length}) numbers, received "
                         f"shape {values.shape} of dtype {values.dtype}.")
    return values.astype("float64")


def stft(x, sequence_length, sequence_stride, fft_length, window="hann", center=True):
    """Short-time Fourier transform over the last axis: ``(real, imag)`` of shape ``(..., frames, bins)``."""
    from minikeras.ops.array.padding import pad
    from minikeras.ops.nn.keras_functions import extract_sequences

    x = _as_tensor("stft", operand("stft", x))
    sequence_length, sequence_stride, fft_length = _frame_arguments("stft", sequence_length, sequence_stride,
                                                                    fft_length, center)
    if x.ndim == 0:
        raise ValueError("stft expects a signal with at least one axis, received a scalar.")
    if x.dtype not in (numpy.float32, numpy.float64):
        raise TypeError(f"stft expects a float32 or float64 signal (as Keras), received dtype {x.dtype}.")
    if center and x.shape[-1] <= fft_length // 2:
        raise ValueError(f"stft: with center=True the signal ({x.shape[-1]} samples) must be longer than "
                         f"fft_length // 2 ({fft_length // 2}), the reflection padding.")
    if center:
        widths = [(0, 0)] * (x.ndim - 1) + [(fft_length // 2, fft_length // 2)]
        x = pad(x, widths, mode="reflect")
    # Frames of fft_length, windowed by the window centred in them (TensorFlow's stft).
    frames = extract_sequences(x, fft_length, sequence_stride)
    weights = _frame_window(window, sequence_length, fft_length).astype(x.dtype)
    return rfft(frames * weights, fft_length)


def _frame_window(window, sequence_length, fft_length, op_name="stft"):
    """The window over a whole frame of ``fft_length``: the window centred, zeros around it; no
    window (None) frames all ``fft_length`` samples, as TensorFlow's stft and JAX's do."""
    if window is None:
        return numpy.ones(fft_length)
    left = (fft_length - sequence_length) // 2
    return numpy.pad(_window_array(window, sequence_length, op_name), (left, fft_length - sequence_length - left))


def istft(x, sequence_length, sequence_stride, fft_length, length=None, window="hann", center=True):
    """The inverse of :func:`stft` by weighted overlap-add."""
    from minikeras.ops.array.indexing import getitem
    from minikeras.ops.array.scatter import _scatter
    from minikeras.ops.array.reshaping import moveaxis, reshape

    sequence_length, sequence_stride, fft_length = _frame_arguments("istft", sequence_length, sequence_stride,
                                                                    fft_length, center)
    if length is not None:
        length = validate_int("istft", "length", length, minimum=0)
    weights = _frame_window(window, sequence_length, fft_length, "istft")
    frames = irfft(x, fft_length)  # (..., count, fft_length)
    if frames.ndim < 2:
        raise ValueError(f"istft expects (real, imag) of shape (..., frames, bins), received shape "
                         f"{tuple(x[0].shape) if isinstance(x, (tuple, list)) else '?'}.")
    if window is not None:
        # TensorFlow's inverse_stft_window_fn: the window divided by the sum of the squared
        # windows that overlap each position in steady state (a periodic pattern), 0 where
        # no window reaches. No window (None) is the plain overlap-add, as TensorFlow's.
        squared = numpy.zeros(-(-fft_length // sequence_stride) * sequence_stride)
        squared[:fft_length] = weights ** 2
        overlap = numpy.tile(squared.reshape(-1, sequence_stride).sum(axis=0),
                             len(squared) // sequence_stride)[:fft_length]
        synthesis = numpy.divide(weights, overlap, out=numpy.zeros(fft_length), where=overlap != 0)
        frames = frames * synthesis.astype(frames.dtype)
    count = frames.shape[-2]
    total = fft_length + sequence_stride * (count - 1)
    positions = (numpy.arange(count)[:, None] * sequence_stride + numpy.arange(fft_length)[None, :])
    batch = frames.shape[:-2]
    values = moveaxis(reshape(frames, (-1, count, fft_length)), 0, -1)  # (count, fft_length, B)
    summed = _scatter(positions[..., None], values, (total, values.shape[-1]), checked=False)  # computed
    signal = reshape(moveaxis(summed, -1, 0), batch + (total,))
    start = fft_length // 2 if center else 0
    end = total - (fft_length // 2 if center else 0) if length is None else start + length
    return getitem(signal, (Ellipsis, slice(start, end)))
