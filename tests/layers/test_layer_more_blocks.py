"""Issue 25's second batch of layers (ConvLSTM1D/2D/3D, Conv3DTranspose, ...):
forward parity with Keras 3.15 on copied weights (recorded; live where
Keras is installed), Keras's config, and the shared layer check (shapes,
devices, config and save round trips, float64 gradients) on every device."""
import json

import numpy
import pytest

import minikeras as mk
from minikeras import layers
from tests.layers.keras_blocks_layer_cases import build_layer
from tests.layers.keras_layer_cases import call_case
from tests.layers.keras_more_blocks_cases import CASES, CONFIGS, FIXTURE, INTEROP_MODELS, RECORDED_INTEROP, interop_files, keras_output
from tests.layers.layer_check import run_layer_test
from tests.layers.test_layer_blocks import TOLERANCE, _weights



@pytest.fixture(scope="module")
def recorded():
    with numpy.load(FIXTURE) as data:
        return {key: data[key] for key in data.files}


def minikeras_output(name, weights):
    class_name, config, inputs, call_kwargs = CASES[name]
    layer = build_layer(layers, class_name, config)
    call_case(layer, inputs, call_kwargs)
    assert [tuple(w.shape) for w in layer.weights] == [w.shape for w in weights], f"{class_name}: weights differ"
    layer.set_weights(weights)
    return numpy.asarray(call_case(layer, inputs, call_kwargs).numpy()), layer


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_recorded_keras_output(name, recorded):
    output, _ = minikeras_output(name, _weights(recorded, name))
    expected = recorded[f"{name}/output"]
    assert output.dtype == expected.dtype
    if expected.dtype.kind in "iu":
        numpy.testing.assert_array_equal(output, expected)
    else:
        numpy.testing.assert_allclose(output, expected, **TOLERANCE)


@pytest.mark.parametrize("name", sorted(CASES))
def test_config_has_keras_keys_and_values(name, recorded):
    with open(CONFIGS) as handle:
        theirs = json.load(handle)[name]
    _, layer = minikeras_output(name, _weights(recorded, name))
    ours = json.loads(json.dumps({k: v for k, v in layer.get_config().items() if k not in ("name", "dtype")},
                                 default=str))
    # Dense's and the lookups' other keys are their own tests' business.
    checked = {"Dense": ("lora_rank", "lora_alpha"), "StringLookup": ("num_oov_indices", "oov_method", "salt"),
               "IntegerLookup": ("num_oov_indices", "oov_method", "salt")}.get(CASES[name][0])
    if checked:
        ours, theirs = {key: ours[key] for key in checked}, {key: theirs[key] for key in checked}
    assert set(ours) == set(theirs)
    for key in ours:
        if key.endswith("initializer") or key in ("trainable",):
            continue
        assert ours[key] == theirs[key], f"{name}: {key} is {ours[key]!r}, Keras has {theirs[key]!r}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_live_keras_output(name):
    pytest.importorskip("tensorflow")
    pytest.importorskip("keras")
    if name.startswith("stft"):
        pytest.importorskip("scipy", reason="Keras's STFTSpectrogram needs scipy for its windows")
    expected, weights, _ = keras_output(name)
    output = minikeras_output(name, weights)[0]
    if expected.dtype.kind in "iu":
        numpy.testing.assert_array_equal(output, expected)
    else:
        numpy.testing.assert_allclose(output, expected, **TOLERANCE)


LAYER_CHECKS = {
    "conv_lstm1d": (lambda **kw: layers.ConvLSTM1D(1, 2, return_sequences=True, **kw), (1, 2, 3, 1)),
    "conv_lstm2d": (lambda **kw: layers.ConvLSTM2D(1, 2, padding="same", **kw), (1, 2, 2, 2, 2)),
    "conv_lstm2d_first": (lambda **kw: layers.ConvLSTM2D(1, 2, return_state=True, data_format="channels_first",
                                                        **kw), (1, 2, 1, 3, 2)),
    "conv_lstm3d": (lambda **kw: layers.ConvLSTM3D(1, 2, strides=2, go_backwards=True, **kw), (1, 2, 3, 2, 2, 1)),
    "conv3d_transpose": (lambda **kw: layers.Conv3DTranspose(2, 2, strides=2, output_padding=1, **kw),
                         (1, 2, 2, 1, 2)),
    "conv3d_transpose_same": (lambda **kw: layers.Convolution3DTranspose(2, (3, 2, 1), padding="same",
                                                                        dilation_rate=(1, 2, 1), **kw),
                              (1, 2, 3, 2, 2)),
    "stft_magnitude": (lambda **kw: layers.STFTSpectrogram("magnitude", frame_length=6, frame_step=3, **kw),
                       (2, 14, 2)),
    "stft_psd_first": (lambda **kw: layers.STFTSpectrogram("psd", frame_length=4, padding="same",
                                                           data_format="channels_first", **kw), (1, 2, 9)),
    "einsum_dense_lora": (lambda **kw: layers.EinsumDense("abc,cd->abd", (None, 3), bias_axes="d", lora_rank=2,
                                                          lora_alpha=3.0, **kw), (2, 3, 4)),
    "dense_lora": (lambda **kw: layers.Dense(3, lora_rank=1, **kw), (2, 4)),
    "mel": (lambda **kw: layers.MelSpectrogram(fft_length=16, sequence_stride=8, num_mel_bins=4, **kw), (2, 40)),
}


@pytest.mark.parametrize("name", sorted(LAYER_CHECKS))
def test_layer_check(name, tmp_path):
    make_layer, shape = LAYER_CHECKS[name]
    run_layer_test(make_layer, input_shape=shape, tmp_path=tmp_path)


def test_conv_lstm_dropout_trains_only_and_state_is_kept_when_stateful():
    x = numpy.random.default_rng(0).normal(size=(2, 3, 4, 4, 2)).astype("float32")
    layer = layers.ConvLSTM2D(3, 2, dropout=0.5, recurrent_dropout=0.5, padding="same")
    inference = layer(x).numpy()
    numpy.testing.assert_array_equal(layer(x, training=False).numpy(), inference)
    assert not numpy.allclose(layer(x, training=True).numpy(), inference)
    stateful = layers.ConvLSTM2D(3, 2, stateful=True)
    first = stateful(x).numpy()
    assert not numpy.allclose(stateful(x).numpy(), first)  # the second batch starts from the kept state
    stateful.reset_state()
    numpy.testing.assert_allclose(stateful(x).numpy(), first, rtol=1e-6, atol=1e-6)


def test_conv_lstm_initial_state_and_unit_forget_bias():
    layer = layers.ConvLSTM1D(2, 3, padding="same", return_state=True)
    x = numpy.ones((1, 2, 5, 1), "float32")
    _, h, c = layer(x)
    numpy.testing.assert_array_equal(layer.bias.numpy(), [0, 0, 1, 1, 0, 0, 0, 0])
    again, _, _ = layer(x, initial_state=[h, c])
    assert not numpy.allclose(again.numpy(), h.numpy())
    with pytest.raises(ValueError, match=r"initial_state \[h, c\]"):
        layer(x, initial_state=[h])


def test_bad_arguments_are_refused_clearly():
    with pytest.raises(ValueError, match="ConvLSTM2D.*dilation_rate"):
        layers.ConvLSTM2D(2, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="ConvLSTM1D.*padding"):
        layers.ConvLSTM1D(2, 3, padding="causal")
    with pytest.raises(ValueError, match="ConvLSTM3D.*dropout"):
        layers.ConvLSTM3D(2, 3, dropout=1.5)
    with pytest.raises(ValueError, match="data_format"):
        layers.ConvLSTM2D(2, 3, data_format="channels_middle")
    with pytest.raises(ValueError, match=r"ConvLSTM2D.*\(batch, timesteps"):
        layers.ConvLSTM2D(2, 3)(numpy.zeros((2, 4, 4, 1), "float32"))
    with pytest.raises(ValueError, match="Conv3DTranspose.*output_padding"):
        layers.Conv3DTranspose(2, 3, strides=2, output_padding=2)
    with pytest.raises(ValueError, match="conv3d_transpose.*kernel"):
        mk.ops.conv3d_transpose(numpy.zeros((1, 2, 2, 2, 3), "float32"), numpy.zeros((2, 2, 2, 4, 2), "float32"))


def test_conv3d_transpose_is_the_adjoint_of_conv3d():
    """<conv3d(y), x> == <y, conv3d_transpose(x)>: the transposed convolution
    is conv3d's adjoint (with strides, dilation, "same" padding, output_padding)."""
    rng = numpy.random.default_rng(1)
    for strides, dilation, padding, output_padding in (((2, 1, 2), 1, "same", None), (1, (2, 1, 2), "valid", None),
                                                       (2, 1, "valid", (1, 0, 1)), (3, 1, "same", 2)):
        kernel = rng.normal(size=(2, 3, 2, 3, 2))
        x = rng.normal(size=(2, 3, 2, 3, 2))
        transposed = mk.ops.conv3d_transpose(x, kernel, strides, padding, output_padding, dilation).numpy()
        keras_form = mk.ops.conv_transpose(x, kernel, strides, padding, output_padding, dilation_rate=dilation)
        numpy.testing.assert_array_equal(keras_form.numpy(), transposed)  # keras.ops.conv_transpose takes 3-D too
        y = rng.normal(size=transposed.shape)
        convolved = mk.ops.conv3d(y, kernel, strides, padding, dilation).numpy()
        assert convolved.shape == x.shape
        numpy.testing.assert_allclose((convolved * x).sum(), (y * transposed).sum(), rtol=1e-10)


@pytest.mark.parametrize("name", sorted(name for name in CASES if CASES[name][0] == "STFTSpectrogram"))
def test_stft_spectrogram_initial_kernels_are_keras(name, recorded):
    class_name, config, inputs, _ = CASES[name]
    layer = build_layer(layers, class_name, config)
    layer(inputs)
    for ours, theirs in zip(layer.get_weights(), _weights(recorded, name), strict=True):
        numpy.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode,expand_dims", [("log", False), ("stft", True), ("imag", False), ("angle", True)])
def test_stft_spectrogram_channels_first_is_channels_last_transposed(mode, expand_dims):
    x = numpy.random.default_rng(2).normal(size=(2, 30, 3)).astype("float32")
    last = layers.STFTSpectrogram(mode, frame_length=8, frame_step=3, expand_dims=expand_dims)
    first = layers.STFTSpectrogram(mode, frame_length=8, frame_step=3, expand_dims=expand_dims,
                                   data_format="channels_first")
    expected = last(x).numpy()
    got = first(numpy.ascontiguousarray(x.transpose(0, 2, 1))).numpy()
    axes = (0, 3, 1, 2) if expand_dims else (0, 2, 1)  # (batch, frames, bins, ch) vs (batch, ch, frames, bins)
    numpy.testing.assert_allclose(got, expected.transpose(axes), rtol=1e-6, atol=1e-6)
    assert first.compute_output_shape((2, 3, 30)) == got.shape


def test_spectrogram_bad_arguments_are_refused_clearly():
    with pytest.raises(ValueError, match="frame_step"):
        layers.STFTSpectrogram(frame_length=8, frame_step=9)
    with pytest.raises(ValueError, match="fft_length"):
        layers.STFTSpectrogram(frame_length=8, fft_length=4)
    with pytest.raises(ValueError, match="mode"):
        layers.STFTSpectrogram(mode="power")
    with pytest.raises(ValueError, match="[Ss]caling"):
        layers.STFTSpectrogram(scaling="energy")
    with pytest.raises(ValueError, match="[Pp]adding"):
        layers.STFTSpectrogram(padding="causal")
    with pytest.raises(ValueError, match="window"):
        layers.STFTSpectrogram(window="gaussian-ish")
    with pytest.warns(UserWarning, match="power of two"):
        layers.STFTSpectrogram(frame_length=8, fft_length=12)
    with pytest.raises(TypeError, match="float32"):
        layers.STFTSpectrogram(frame_length=4)(numpy.ones((1, 8, 1), "int32"))
    with pytest.raises(ValueError, match="sequence_length"):
        layers.MelSpectrogram(fft_length=32, sequence_length=64)
    with pytest.raises(ValueError, match="window"):
        layers.MelSpectrogram(window="blackman")


def test_stft_spectrogram_log_mode_gradients():
    """The log mode's gradients in float64 (its 16-bit forward is not in the
    layer check: a float16 input's rounding is amplified by the log of the
    near-empty bins)."""
    x = numpy.random.default_rng(3).normal(size=(1, 12, 2))
    layer = layers.STFTSpectrogram(frame_length=6, frame_step=3, dtype="float64")
    layer(x)
    mk.autograd.gradcheck(lambda inputs, real, imag: _with_kernels(layer, inputs, real, imag),
                          [x, layer.real_kernel.numpy(), layer.imag_kernel.numpy()])


def _with_kernels(layer, inputs, real, imag):
    layer.real_kernel, layer.imag_kernel = real, imag
    return layer.call(inputs)


@pytest.mark.filterwarnings("ignore:No training configuration")
@pytest.mark.parametrize("name", sorted(INTEROP_MODELS))
def test_live_keras_reads_minikeras_files(name, tmp_path):
    """A minikeras .keras file loads in Keras 3.15 and computes the same (live; skipped without Keras)."""
    pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    if name.startswith("stft"):
        pytest.importorskip("scipy", reason="Keras's STFTSpectrogram needs scipy for its windows")
    build, shape = INTEROP_MODELS[name]
    x = numpy.random.default_rng(5).normal(size=shape).astype("float32")
    model = build(mk)
    model(x)
    if name == "lora":  # trained-looking adapters: the file must hold the merged kernel
        model.set_weights([w + 0.1 for w in model.get_weights()])
    model.save(tmp_path / "model.keras")
    theirs = keras.models.load_model(tmp_path / "model.keras")
    numpy.testing.assert_allclose(numpy.asarray(theirs(x)), model(x).numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("rank", [1, 2])
def test_conv_lstm_channels_first_is_channels_last_transposed(rank):
    """Same weights, same numbers: inputs, initial states, sequences and
    final states all in the (batch, [time,] channels, spatial...) layout."""
    make = layers.ConvLSTM1D if rank == 1 else layers.ConvLSTM2D
    spatial = (5,) if rank == 1 else (4, 3)
    x = numpy.random.default_rng(6).normal(size=(2, 3) + spatial + (2,)).astype("float32")
    state = numpy.random.default_rng(7).normal(size=(2,) + spatial + (3,)).astype("float32")
    to_first = lambda a, lead: numpy.moveaxis(a, -1, lead)  # noqa: E731
    last = make(3, 2, padding="same", return_sequences=True, return_state=True)
    first = make(3, 2, padding="same", return_sequences=True, return_state=True, data_format="channels_first")
    expected = last(x, initial_state=[state, state * 0.5])
    first(to_first(x, 2), initial_state=[to_first(state, 1), to_first(state * 0.5, 1)])
    first.set_weights(last.get_weights())
    got = first(to_first(x, 2), initial_state=[to_first(state, 1), to_first(state * 0.5, 1)])
    numpy.testing.assert_allclose(got[0].numpy(), to_first(expected[0].numpy(), 2), rtol=1e-5, atol=1e-6)
    for ours, theirs in zip(got[1:], expected[1:]):
        numpy.testing.assert_allclose(ours.numpy(), to_first(theirs.numpy(), 1), rtol=1e-5, atol=1e-6)
    assert [tuple(o.shape) for o in got] == [tuple(s) for s in first.compute_output_shape(to_first(x, 2).shape)]


@pytest.mark.filterwarnings("ignore:No training configuration")
@pytest.mark.parametrize("name", RECORDED_INTEROP)
def test_reads_keras_written_files(name):
    """Keras's .keras and .weights.h5 files of each model (recorded) load here and compute Keras's output."""
    build, _ = INTEROP_MODELS[name]
    keras_file, weights_file, arrays = interop_files(name)
    with numpy.load(arrays) as data:
        x, expected = data["x"], data["y"]
    numpy.testing.assert_allclose(mk.models.load_model(keras_file)(x).numpy(), expected, rtol=1e-4, atol=1e-5)
    model = build(mk)
    model.load_weights(weights_file)
    numpy.testing.assert_allclose(model(x).numpy(), expected, rtol=1e-4, atol=1e-5)
