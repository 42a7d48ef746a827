"""keras.layers.STFTSpectrogram."""
import math
import warnings

from minikeras import ops
from minikeras.backend import keras_helpers
from minikeras.initializers.stft import STFT, get_window
from minikeras.layers.base import Layer
from minikeras.layers.input_spec import InputSpec
from minikeras._support.argument_validation import validate_int

__all__ = ["STFTSpectrogram"]

_MODES = ("log", "magnitude", "psd", "real", "imag", "angle", "stft")


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
