"""The STFT initializer: the real or imaginary part of a windowed DFT
kernel, so that a 1-D convolution with it computes a short-time Fourier
transform (Keras's STFTSpectrogram layer starts from it).

The named windows are computed here with the formulas SciPy's
``get_window`` uses (SciPy is not a dependency): symmetric windows, or
periodic ones (``periodic=True``: a window of ``N + 1`` points without its
last one, right for spectral analysis).
"""
import math

import numpy

from minikeras.initializers.base import Initializer, _check_shape

__all__ = ["STFT"]


def _cosine_sum(coefficients):
    def window(length):
        phase = 2 * math.pi * numpy.arange(length) / (length - 1) if length > 1 else numpy.zeros(length)
        return sum(((-1) ** k) * a * numpy.cos(k * phase) for k, a in enumerate(coefficients))

    return window


def _bartlett(length):
    if length == 1:
        return numpy.ones(1)
    n = numpy.arange(length)
    return 1 - numpy.abs(2 * n / (length - 1) - 1)


_WINDOWS = {
    "hann": _cosine_sum([0.5, 0.5]), "hanning": _cosine_sum([0.5, 0.5]),
    "hamming": _cosine_sum([0.54, 0.46]), "blackman": _cosine_sum([0.42, 0.50, 0.08]),
    "bartlett": _bartlett, "boxcar": numpy.ones, "rectangular": numpy.ones, "ones": numpy.ones,
}


def get_window(name, length, periodic=False):
    """The window ``name`` of ``length`` points (as ``scipy.signal.get_window``
    with ``fftbins=periodic``).

    Raises:
        ValueError: an unknown window name.
    """
    if name not in _WINDOWS:
        raise ValueError(f"Unknown window {name!r}; known windows: {sorted(_WINDOWS)} (or pass the window values).")
    if periodic:
        return _WINDOWS[name](length + 1)[:-1]
    return _WINDOWS[name](length)


class STFT(Initializer):
    """The kernel of a short-time Fourier transform, for a ``(frame_length,
    input_channels, fft_length)`` weight: ``cos`` (``side="real"``) or
    ``sin`` (``"imag"``) of ``-2 pi t f / (2 (fft_length - 1))``, times the
    window and divided by its scaling.

    Args:
        side: ``"real"`` (default) or ``"imag"``.
        window: a window name (``"hann"``, ``"hamming"``, ``"blackman"``,
            ``"bartlett"``, ``"boxcar"``), a sequence of ``frame_length``
            values, or None.
        scaling: ``"density"`` (divide by the window's L2 norm, default),
            ``"spectrum"`` (by its sum) or None.
        periodic: use the periodic form of a named window.
    """

    def __init__(self, side="real", window="hann", scaling="density", periodic=False):
        if side not in ("real", "imag"):
            raise ValueError(f"side should be 'real' or 'imag', not {side}")
        if isinstance(window, str):
            get_window(window, 1)
        if scaling is not None and scaling not in ("density", "spectrum"):
            raise ValueError(f"Scaling is invalid, it must be `None`, 'density' or 'spectrum'. Received "
                             f"scaling={scaling}")
        self.side, self.window, self.scaling, self.periodic = side, window, scaling, periodic

    def __call__(self, shape, dtype="float32"):
        shape = _check_shape("STFT", shape)
        if len(shape) != 3:
            raise ValueError(f"STFT initializer needs a (frame_length, input_channels, fft_length) shape, received "
                             f"shape={shape}.")
        frame_length, _, fft_length = shape
        dtype = numpy.dtype(dtype or "float32")
        time = numpy.arange(frame_length, dtype=dtype).reshape(frame_length, 1, 1)
        frequency = numpy.arange(fft_length, dtype=dtype).reshape(1, 1, fft_length) / dtype.type((fft_length - 1) * 2)
        angles = (-2 * time * frequency) * dtype.type(math.pi)
        kernel = (numpy.cos(angles) if self.side == "real" else numpy.sin(angles)).astype(dtype)
        if self.window is not None:
            window = self.window
            if isinstance(window, str):
                window = get_window(window, frame_length, self.periodic)
            window = numpy.asarray(window, dtype=dtype)
            if window.ndim != 1 or window.shape[-1] != frame_length:
                raise ValueError(f"The shape of `window` must be equal to [frame_length].Received: window "
                                 f"shape={window.shape}")
            window = window.reshape(frame_length, 1, 1)
            scale = 1
            if self.scaling == "density":
                scale = numpy.sqrt(numpy.sum(numpy.square(window)))
            elif self.scaling == "spectrum":
                scale = numpy.sum(numpy.abs(window))
            kernel = kernel * window / scale
        return numpy.broadcast_to(kernel, shape).astype(dtype) if kernel.shape != shape else kernel.astype(dtype)

    def get_config(self):
        return {"side": self.side, "window": self.window, "periodic": self.periodic, "scaling": self.scaling}
