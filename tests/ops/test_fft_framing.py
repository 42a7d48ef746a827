"""stft/istft framing where the window is shorter than the frame, and the
dtypes of rfft: the Keras-referenced fuzz (issue 36) found NaN where Keras
3.15 (TensorFlow) gives zeros, a one-sample window of 0, and window=None
read differently. Keras's answers are quoted beside each check."""
import numpy
import pytest

from minikeras import ops


def _signal():
    return (numpy.linspace(-1.0, 1.0, 32).astype("float32") ** 3).reshape(2, 16)


def _host(pair):
    return tuple(part.numpy() for part in pair)


def test_a_one_sample_window_is_one_not_zero():
    # scipy.signal.get_window, torch and TensorFlow: a window of length 1 is [1.] (NumPy's hanning(2)[:-1] is 0)
    real, imag = _host(ops.stft(_signal(), 1, 4, 8))
    assert numpy.abs(real).sum() > 0
    padded = numpy.pad(_signal(), ((0, 0), (4, 4)), mode="reflect")
    frames = numpy.stack([padded[:, i:i + 8] for i in range(0, padded.shape[1] - 7, 4)], axis=1)
    impulse = numpy.zeros(8)
    impulse[3] = 1.0  # the window's one sample, centred in the frame ((8 - 1) // 2 zeros before it)
    expected = numpy.fft.rfft(frames * impulse)
    numpy.testing.assert_allclose(real, expected.real, atol=1e-6)
    numpy.testing.assert_allclose(imag, expected.imag, atol=1e-6)


@pytest.mark.parametrize("window", ["hann", "hamming"])
def test_istft_of_a_short_window_is_finite_and_inverts_where_the_window_reaches(window):
    x = _signal()
    y = ops.istft(ops.stft(x, 4, 4, 8, window=window), 4, 4, 8, window=window).numpy()
    assert numpy.isfinite(y).all()  # was NaN where no window reaches (TensorFlow: 0 there)
    # The 4-sample window sits at offsets 2..5 of frames 4 apart; hann's first sample is 0, so with it
    # every 4th sample is reached by no window (hamming's first sample is 0.08).
    reached = numpy.arange(16) % 4 != 2 if window == "hann" else numpy.ones(16, bool)
    numpy.testing.assert_allclose(y[:, reached], x[:, reached], atol=1e-5)
    numpy.testing.assert_array_equal(y[:, ~reached], 0.0)


def test_istft_without_a_window_overlap_adds_the_frames():
    # TensorFlow's inverse_stft with no window function (and Keras's JAX backend): the plain overlap-add,
    # so half-overlapping frames give twice the signal (was the signal itself)
    x = _signal()
    y = ops.istft(ops.stft(x, 8, 4, 8, window=None), 8, 4, 8, window=None).numpy()
    numpy.testing.assert_allclose(y[:, 4:12], 2 * x[:, 4:12], atol=1e-5)


def test_stft_without_a_window_frames_the_whole_fft_length():
    # TensorFlow and JAX: window=None is no window at all, whatever sequence_length says
    numpy.testing.assert_allclose(_host(ops.stft(_signal(), 3, 4, 8, window=None))[0],
                                  _host(ops.stft(_signal(), 8, 4, 8, window=None))[0], atol=1e-6)


def test_rfft_of_half_precision_is_float32_and_float64_stays():
    x = numpy.linspace(-1, 1, 8).astype("float16")
    real, imag = ops.rfft(x)
    assert real.dtype == numpy.float32 and imag.dtype == numpy.float32  # Keras (TF and JAX): float32; was float16
    numpy.testing.assert_allclose(real.numpy(), numpy.fft.rfft(x.astype("float32")).real, atol=1e-3)
    assert ops.rfft(x.astype("float64"))[0].dtype == numpy.float64  # NumPy and Keras's torch backend
