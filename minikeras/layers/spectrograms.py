"""Audio front ends: STFTSpectrogram and MelSpectrogram, as Keras 3's.

STFTSpectrogram is a strided 1-D convolution whose two kernels
(``real_kernel``, ``imag_kernel``, from the STFT initializer) hold the
windowed cosines and sines, so the transform is trainable and runs through
the convolution op on every device; each input channel is transformed on
its own. MelSpectrogram has no weights: ``ops.stft`` (centred, reflect
padded), the magnitude to the power ``mag_exp``, the HTK mel filter bank
and optionally decibels clipped at ``top_db`` below the batch's maximum;
its output is ``(batch, num_mel_bins, frames)``.
"""
import math
import warnings

import numpy

from minikeras import ops
from minikeras.backend import keras_helpers
from minikeras.backend.dtypes import is_float_dtype
from minikeras.initializers.stft import STFT, get_window
from minikeras.layers.base import Layer
from minikeras.layers.input_spec import InputSpec
from minikeras._support.argument_validation import validate_int

__all__ = ["STFTSpectrogram", "MelSpectrogram"]

_MODES = ("log", "magnitude", "psd", "real", "imag", "angle", "stft")
_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def _data_format(value):
    value = keras_helpers.image_data_format() if value is None else value
    if value not in ("channels_last", "channels_first"):
        raise ValueError(f"STFTSpectrogram: data_format must be 'channels_last' or 'channels_first', received "
                         f"{value!r}.")
    return value


class STFTSpectrogram(Layer):
    """Spectrogram of each channel of ``(batch, time, channels)`` by a
    trainable short-time Fourier transform.

    Args:
        mode: "log" (log magnitude, default), "magnitude", "psd" (power,
            the inner bins doubled), "real", "imag", "angle", or "stft"
            (real and imaginary parts side by side).
        frame_length: samples per frame (default 256).
        frame_step: samples between frames (default frame_length // 2).
        fft_length: FFT size, at least frame_length (default the next
            power of two); ``fft_length // 2 + 1`` bins.
        window: a window name ("hann", "hamming", ...), frame_length
            values, or None.
        periodic: the periodic form of a named window.
        scaling: "density" (default), "spectrum" or None (see the STFT
            initializer).
        padding: "valid" or "same" framing.
        expand_dims: keep channels apart: ``(batch, frames, bins, channels)``
            instead of ``(batch, frames, channels * bins)``.
        data_format: "channels_last" (``(batch, time, channels)``) or
            "channels_first" (``(batch, channels, time)``, outputs
            ``(batch, channels * bins, frames)`` or ``(batch, channels,
            frames, bins)``).

    Weights: real_kernel and imag_kernel ``(frame_length, 1, bins)`` (one
    of them in "imag"/"real" mode), trainable.
    """

    def __init__(self, mode="log", frame_length=256, frame_step=None, fft_length=None, window="hann",
                 periodic=False, scaling="density", padding="valid", expand_dims=False, data_format=None, **kwargs):
        frame_length = validate_int("STFTSpectrogram", "frame_length", frame_length, minimum=1)
        if frame_step is not None and (frame_step > frame_length or frame_step < 1):
            raise ValueError(f"`frame_step` should be a positive integer not greater than `frame_length`. Received "
                             f"frame_step={frame_step}, frame_length={frame_length}")
        if fft_length is not None and fft_length < frame_length:
            raise ValueError(f"`fft_length` should be not less than `frame_length`. Received fft_length="
                             f"{fft_length}, frame_length={frame_length}")
        if fft_length is not None and (fft_length & -fft_length) != fft_length:
            warnings.warn(f"`fft_length` is recommended to be a power of two. Received fft_length={fft_length}")
        if mode not in _MODES:
            raise ValueError(f"Output mode is invalid, it must be one of {', '.join(_MODES)}. Received: mode={mode}")
        if scaling is not None and scaling not in ("density", "spectrum"):
            raise ValueError(f"Scaling is invalid, it must be `None`, 'density' or 'spectrum'. Received "
                             f"scaling={scaling}")
        if padding not in ("valid", "same"):
            raise ValueError(f"Padding is invalid, it should be 'valid', 'same'. Received: padding={padding}")
        if isinstance(window, str):
            get_window(window, 1)  # an unknown name fails here, as in Keras
        super().__init__(**kwargs)
        self.mode, self.frame_length, self.frame_step, self.fft_length = mode, frame_length, frame_step, fft_length
        self._frame_step = frame_step or frame_length // 2
        self._fft_length = fft_length or 2 ** int(math.ceil(math.log2(frame_length)))
        self.window, self.periodic, self.scaling, self.padding = window, periodic, scaling, padding
        self.expand_dims = expand_dims
        self.data_format = _data_format(data_format)
        self.input_spec = InputSpec(ndim=3)
        self.real_kernel = self.imag_kernel = None

    def build(self, input_shape):
        shape = (self.frame_length, 1, self._fft_length // 2 + 1)
        if self.mode != "imag":
            self.real_kernel = self.add_weight("real_kernel", shape, initializer=STFT(
                "real", self.window, self.scaling, self.periodic))
        if self.mode != "real":
            self.imag_kernel = self.add_weight("imag_kernel", shape, initializer=STFT(
                "imag", self.window, self.scaling, self.periodic))
        self.built = True

    def _transform(self, frames, kernel, batch, channels):
        """``(batch * channels, time, 1)`` signals -> ``(batch, channels, frames, bins)``."""
        out = ops.conv(frames, ops.cast(kernel, frames.dtype), self._frame_step, self.padding, "channels_last")
        return ops.reshape(out, (batch, channels) + tuple(out.shape[1:]))

    def _arrange(self, outputs):
        """``(batch, channels, frames, bins)`` in the layout Keras returns."""
        batch, channels, frames, bins = outputs.shape
        if self.data_format == "channels_last":
            if self.expand_dims:
                return ops.transpose(outputs, (0, 2, 3, 1))
            return ops.reshape(ops.transpose(outputs, (0, 2, 1, 3)), (batch, frames, channels * bins))
        if self.expand_dims:
            return outputs
        return ops.reshape(ops.transpose(outputs, (0, 1, 3, 2)), (batch, channels * bins, frames))

    def call(self, inputs):
        if str(inputs.dtype) not in ("float16", "bfloat16", "float32", "float64"):
            raise TypeError(f"Invalid input type. Expected `float16`, `bfloat16`, `float32` or `float64`. Received: "
                            f"input type={inputs.dtype}")
        compute_dtype = inputs.dtype
        if str(compute_dtype) in ("float16", "bfloat16"):
            # 16-bit policies: the transform and its logarithm in float32 (a 16-bit sum over a frame loses
            # the small bins the log mode shows), the result in the compute dtype.
            return ops.cast(self._spectrogram(ops.cast(inputs, "float32")), compute_dtype)
        return self._spectrogram(inputs)

    def _spectrogram(self, inputs):
        if self.data_format == "channels_last":
            batch, time, channels = inputs.shape
            frames = ops.reshape(ops.transpose(inputs, (0, 2, 1)), (batch * channels, time, 1))
        else:
            batch, channels, time = inputs.shape
            frames = ops.reshape(inputs, (batch * channels, time, 1))
        real = imag = None
        if self.mode != "imag":
            real = self._transform(frames, self.real_kernel, batch, channels)
        if self.mode != "real":
            imag = self._transform(frames, self.imag_kernel, batch, channels)
        if self.mode in ("real", "imag"):
            return self._arrange(real if self.mode == "real" else imag)
        if self.mode == "angle":
            return self._arrange(ops.arctan2(imag, real))
        if self.mode == "stft":
            return self._arrange(ops.concatenate([real, imag], axis=-1))
        power = ops.square(real) + ops.square(imag)
        if self.mode == "psd":  # one-sided power: every bin but DC and Nyquist counted twice
            return self._arrange(power + ops.pad(power[..., 1:-1], [(0, 0), (0, 0), (0, 0), (1, 1)]))
        epsilon = keras_helpers.epsilon()
        magnitude = self._arrange(ops.sqrt(ops.maximum(power, epsilon)))
        return magnitude if self.mode == "magnitude" else ops.log(ops.maximum(magnitude, epsilon))

    def compute_output_shape(self, input_shape):
        if self.data_format == "channels_last":
            batch, time, channels = input_shape
        else:
            batch, channels, time = input_shape
        bins = (self._fft_length // 2 + 1) * (2 if self.mode == "stft" else 1)
        if time is None:
            frames = None
        elif self.padding == "same":
            frames = -(-time // self._frame_step)
        else:
            frames = (time - self.frame_length) // self._frame_step + 1
        if self.expand_dims:
            return (batch, frames, bins, channels) if self.data_format == "channels_last" else \
                (batch, channels, frames, bins)
        width = None if channels is None else channels * bins
        return (batch, frames, width) if self.data_format == "channels_last" else (batch, width, frames)

    def get_config(self):
        return {**super().get_config(), "mode": self.mode, "frame_length": self.frame_length,
                "frame_step": self.frame_step, "fft_length": self.fft_length, "window": self.window,
                "periodic": self.periodic, "scaling": self.scaling, "padding": self.padding,
                "data_format": self.data_format, "expand_dims": self.expand_dims}


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
