"""keras.layers.MelSpectrogram, and ``linear_to_mel_weight_matrix``."""
import math

import numpy

from minikeras import ops
from minikeras.backend.dtypes import is_float_dtype
from minikeras.layers.base import Layer
from minikeras._support.argument_validation import validate_int

__all__ = ["MelSpectrogram"]

_MEL_BREAK_FREQUENCY_HERTZ = 700.0

_MEL_HIGH_FREQUENCY_Q = 1127.0


def _hertz_to_mel(frequencies):
    return _MEL_HIGH_FREQUENCY_Q * numpy.log(1.0 + frequencies / _MEL_BREAK_FREQUENCY_HERTZ)


def linear_to_mel_weight_matrix(num_mel_bins, num_spectrogram_bins, sampling_rate, lower_edge_hertz,
                                upper_edge_hertz, dtype="float32"):
    """The HTK mel filter bank ``(num_spectrogram_bins, num_mel_bins)``:
    triangles peaking at 1 on mel-spaced centres, the DC bin zeroed (as
    Keras's / TensorFlow's ``linear_to_mel_weight_matrix``)."""
    dtype = numpy.dtype(dtype)
    nyquist = dtype.type(sampling_rate) / dtype.type(2.0)
    linear = numpy.linspace(dtype.type(0), nyquist, num_spectrogram_bins, dtype=dtype)[1:]
    spectrogram_mel = _hertz_to_mel(linear)[:, None]
    edges = numpy.linspace(_hertz_to_mel(dtype.type(lower_edge_hertz)), _hertz_to_mel(dtype.type(upper_edge_hertz)),
                           num_mel_bins + 2, dtype=dtype)
    lower, center, upper = edges[:-2][None], edges[1:-1][None], edges[2:][None]
    lower_slopes = (spectrogram_mel - lower) / (center - lower)
    upper_slopes = (upper - spectrogram_mel) / (upper - center)
    weights = numpy.maximum(dtype.type(0), numpy.minimum(lower_slopes, upper_slopes))
    return numpy.pad(weights, [(1, 0), (0, 0)]).astype(dtype)


class MelSpectrogram(Layer):
    """Mel spectrogram of raw audio ``(batch, samples)`` (or ``(samples,)``).

    Args:
        fft_length: FFT size (default 2048).
        sequence_stride: samples between frames (default 512).
        sequence_length: window length (default fft_length).
        window: "hann" (default), "hamming" or None.
        sampling_rate: samples per second (default 16000).
        num_mel_bins: mel bands (default 128).
        min_freq, max_freq: the filter bank's edges in Hz (max_freq
            defaults to sampling_rate / 2).
        power_to_db: convert to decibels (default True), relative to
            ``ref_power``, floored at ``min_power`` and clipped at
            ``top_db`` below the maximum over the batch.
        top_db, mag_exp, min_power, ref_power: as Keras (80, 2, 1e-10, 1).

    Output: ``(batch, num_mel_bins, frames)``, ``frames = 1 + samples //
    sequence_stride`` (the signal is centred with reflect padding).
    """

    def __init__(self, fft_length=2048, sequence_stride=512, sequence_length=None, window="hann",
                 sampling_rate=16000, num_mel_bins=128, min_freq=20.0, max_freq=None, power_to_db=True, top_db=80.0,
                 mag_exp=2.0, min_power=1e-10, ref_power=1.0, **kwargs):
        self.fft_length = validate_int("MelSpectrogram", "fft_length", fft_length, minimum=1)
        self.sequence_stride = validate_int("MelSpectrogram", "sequence_stride", sequence_stride, minimum=1)
        self.sequence_length = sequence_length or fft_length
        if self.fft_length < self.sequence_length:
            raise ValueError(f"`fft_length` must be greater than or equal to `sequence_length`. Received: "
                             f"`sequence_length`={self.sequence_length}, `fft_length`={self.fft_length}.")
        if window not in ("hann", "hamming", None):
            raise ValueError(f"MelSpectrogram: window must be 'hann', 'hamming' or None, received {window!r}.")
        self.num_mel_bins = validate_int("MelSpectrogram", "num_mel_bins", num_mel_bins, minimum=1)
        self.window, self.sampling_rate = window, sampling_rate
        self.min_freq, self.max_freq = min_freq, max_freq or int(sampling_rate / 2)
        self.power_to_db, self.top_db, self.mag_exp = power_to_db, top_db, mag_exp
        self.min_power, self.ref_power = min_power, ref_power
        super().__init__(**kwargs)

    def call(self, inputs):
        dtype = self.compute_dtype if self.compute_dtype in ("float32", "float64") else "float32"
        if not is_float_dtype(inputs.dtype) or str(inputs.dtype) != dtype:
            inputs = ops.cast(inputs, dtype)
        real, imag = ops.stft(inputs, self.sequence_length, self.sequence_stride, self.fft_length, self.window,
                              center=True)
        spectrum = ops.power(ops.sqrt(ops.square(real) + ops.square(imag)), self.mag_exp)
        matrix = linear_to_mel_weight_matrix(self.num_mel_bins, spectrum.shape[-1], self.sampling_rate,
                                             self.min_freq, self.max_freq, dtype)
        outputs = ops.tensordot(spectrum, ops.convert_to_tensor(matrix), axes=1)
        if self.power_to_db:
            outputs = self._decibels(outputs)
        return ops.cast(ops.swapaxes(outputs, -1, -2), self.compute_dtype)

    def _decibels(self, power):
        log_spec = 10.0 * ops.log10(ops.maximum(power, self.min_power))
        log_spec = log_spec - 10.0 * math.log10(max(abs(self.ref_power), self.min_power))
        return ops.maximum(log_spec, ops.max(log_spec) - self.top_db)

    def compute_output_shape(self, input_shape):
        # The frames ops.stft makes of the centred signal (Keras's own formula is off by one for some lengths).
        samples = input_shape[-1]
        frames = None if samples is None else 1 + (samples + 2 * (self.fft_length // 2) - self.fft_length) // \
            self.sequence_stride
        return tuple(input_shape[:-1]) + (self.num_mel_bins, frames)

    def get_config(self):
        return {**super().get_config(), "fft_length": self.fft_length, "sequence_stride": self.sequence_stride,
                "sequence_length": self.sequence_length, "window": self.window,
                "sampling_rate": self.sampling_rate, "num_mel_bins": self.num_mel_bins, "min_freq": self.min_freq,
                "max_freq": self.max_freq, "power_to_db": self.power_to_db, "top_db": self.top_db,
                "mag_exp": self.mag_exp, "min_power": self.min_power, "ref_power": self.ref_power}
