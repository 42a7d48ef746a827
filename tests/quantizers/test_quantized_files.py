"""Quantized models in Keras's files, both ways: Keras 3.15's recorded files
load in minikeras with Keras's outputs, training continues as Keras's, a
crafted file (float values for an int8 kernel) is refused, and the files
minikeras writes load in Keras (that last test runs where TensorFlow is)."""
import io
import shutil
import warnings
import zipfile

import h5py
import numpy
import pytest

import minikeras as mk
from minikeras import layers, quantizers
from minikeras.saving import FileLoadError
from tests.quantizers.keras_fixtures import fixture, models

# (name, rtol, atol): Keras's outputs are matched to float32 rounding; bfloat16 compute to its own.
RECORDED = [("dense_int8", 1e-6, 1e-6), ("dense_int8_weight_only", 1e-6, 1e-6), ("dense_int8_bf16", 0, 1e-2),
            ("einsum_int8", 1e-6, 1e-6), ("embedding_int8", 1e-6, 1e-6), ("einsum_int4", 1e-6, 1e-6),
            ("embedding_int4", 1e-6, 1e-6), ("dense_int4_per_channel", 1e-6, 1e-6), ("dense_float8", 1e-6, 1e-6)]


def _dense_model():
    return mk.Sequential([layers.Input((8,)), layers.Dense(16, activation="relu"), layers.Dense(4)])


def _einsum_model():
    inputs = layers.Input((5, 6))
    x = layers.EinsumDense("abc,cde->abde", output_shape=(5, 2, 3), bias_axes="de")(inputs)
    x = layers.Reshape((5, 6))(x)
    x = layers.EinsumDense("abc,cd->abd", output_shape=(5, 4), bias_axes="d", activation="tanh")(x)
    return mk.Model(inputs, layers.Dense(2)(layers.Flatten()(x)))


def _quantized(build, mode=None, config=None):
    model = build()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Reshape, Flatten: "does not have a `quantize` method"
        model.quantize(mode, config=config)
    return model


@pytest.mark.parametrize("name, rtol, atol", RECORDED, ids=[name for name, _, _ in RECORDED])
def test_keras_files_load_with_keras_outputs(name, rtol, atol):
    recorded = models()
    model = mk.models.load_model(fixture(f"keras_quantized_{name}.keras"))
    outputs = model.predict(recorded[f"{name}_x"], verbose=0)
    numpy.testing.assert_allclose(numpy.asarray(outputs, "float32"), recorded[f"{name}_y"], rtol=rtol, atol=atol)
    assert all(layer.dtype_policy.quantization_mode is not None for layer in model.layers
               if type(layer).__name__ in ("Dense", "EinsumDense", "Embedding"))


def test_a_keras_lora_file_loads_its_merged_kernel():
    recorded = models()
    model = mk.models.load_model(fixture("keras_quantized_dense_int8_lora.keras"))
    assert all(layer.lora_enabled for layer in model.layers)
    numpy.testing.assert_allclose(model.predict(recorded["dense_int8_lora_x"], verbose=0),
                                  recorded["dense_int8_lora_reloaded_y"], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name, build, mode, config", [
    ("dense_int8", _dense_model, "int8", None),
    ("einsum_int4", _einsum_model, None, quantizers.Int4QuantizationConfig(block_size=4)),
    ("dense_float8", _dense_model, "float8", None),
])
def test_keras_weights_files_load_into_a_model_quantized_in_code(name, build, mode, config):
    recorded = models()
    model = _quantized(build, mode, config)
    model.load_weights(fixture(f"keras_quantized_{name}.weights.h5"))
    numpy.testing.assert_allclose(model.predict(recorded[f"{name}_x"], verbose=0), recorded[f"{name}_y"],
                                  rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", ["int8", "float8"])
def test_quantized_training_follows_keras(mode):
    # Keras's float model, quantized and trained three SGD steps in both libraries.
    recorded = models()
    model = mk.models.load_model(fixture("keras_quantized_start.keras"))
    model.quantize(mode)
    model.compile(mk.optimizers.SGD(0.05), "mse")
    losses = [float(model.train_on_batch(x, y)) for x, y in zip(recorded["train_x"], recorded["train_y"])]
    numpy.testing.assert_allclose(losses, recorded[f"train_{mode}_losses"], rtol=1e-5)
    for index, layer in enumerate(model.layers):
        for weight in layer.weights:
            expected = recorded[f"train_{mode}_{index}_{weight.name.split('/')[-1]}"]
            numpy.testing.assert_allclose(weight.numpy().astype("float64"), expected, rtol=1e-5, atol=1e-6,
                                          err_msg=weight.name)
    numpy.testing.assert_allclose(model.predict(recorded["dense_int8_x"], verbose=0), recorded[f"train_{mode}_predict"],
                                  rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("build, mode, config", [
    (_dense_model, "int8", None), (_dense_model, "int4", None), (_dense_model, "float8", None),
    (_einsum_model, "int8", None), (_einsum_model, None, quantizers.Int4QuantizationConfig(block_size=None)),
    (_einsum_model, "float8", None),
])
@pytest.mark.parametrize("suffix", [".keras", ".weights.h5"])
def test_minikeras_round_trip(tmp_path, build, mode, config, suffix):
    model = _quantized(build, mode, config)
    x = numpy.random.default_rng(0).normal(size=(3,) + tuple(model.inputs[0].shape[1:])).astype("float32")
    expected = model.predict(x, verbose=0)
    path = str(tmp_path / f"m{suffix}")
    if suffix == ".keras":
        model.save(path)
        again = mk.models.load_model(path)
    else:
        model.save_weights(path)
        again = _quantized(build, mode, config)
        again.load_weights(path)
    numpy.testing.assert_array_equal(again.predict(x, verbose=0), expected)
    # By name: a model built under a quantized policy creates float8's scales before its kernel (as Keras).
    for layer, loaded_layer in zip(model.layers, again.layers):
        loaded = {weight.name.split("/")[-1]: weight for weight in loaded_layer.weights}
        assert sorted(loaded) == sorted(weight.name.split("/")[-1] for weight in layer.weights)
        for original in layer.weights:
            twin = loaded[original.name.split("/")[-1]]
            assert original.dtype == twin.dtype
            numpy.testing.assert_array_equal(original.numpy(), twin.numpy())


def test_an_int8_lora_layer_saves_its_merged_kernel_and_loads_it_back(tmp_path):
    model = _quantized(_dense_model, "int8")
    for layer in model.layers:
        layer.enable_lora(2)
        layer.lora_kernel_b.assign(numpy.random.default_rng(1).normal(size=layer.lora_kernel_b.shape) * 0.1)
    x = numpy.random.default_rng(2).normal(size=(4, 8)).astype("float32")
    expected = model.predict(x, verbose=0)
    model.save(str(tmp_path / "lora.keras"))
    again = mk.models.load_model(str(tmp_path / "lora.keras"))
    assert all(not numpy.any(layer.lora_kernel_b.numpy()) for layer in again.layers)  # merged, adapters zeroed
    # The merged kernel is quantized again: within int8 rounding of the adapted layer.
    assert numpy.abs(again.predict(x, verbose=0) - expected).max() < 0.02 * numpy.abs(expected).max()


def _with_float_kernel(source, target):
    """``source`` (a .keras file) with its first Dense's int8 kernel rewritten as float32 values."""
    with zipfile.ZipFile(source) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    buffer = io.BytesIO(members["model.weights.h5"])
    with h5py.File(buffer, "r+") as handle:
        variables = handle["layers/dense/vars"]
        shape = variables["0"].shape
        del variables["0"]
        variables.create_dataset("0", data=numpy.full(shape, 0.4, "float32"))
    members["model.weights.h5"] = buffer.getvalue()
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return target


def test_a_crafted_file_with_float_values_for_an_int8_kernel_is_refused(tmp_path):
    crafted = _with_float_kernel(fixture("keras_quantized_dense_int8.keras"), str(tmp_path / "crafted.keras"))
    with pytest.raises(FileLoadError, match=r"Layer 'dense' \(Dense, dtype policy 'int8_from_float32'\) keeps its "
                                            "weight 'dense/kernel' as int8, but the file stores it as float32"):
        mk.models.load_model(crafted)
    weights = str(tmp_path / "crafted.weights.h5")
    shutil.copy(fixture("keras_quantized_dense_int8.weights.h5"), weights)
    with h5py.File(weights, "r+") as handle:
        del handle["layers/dense/vars/0"]
        handle["layers/dense/vars"].create_dataset("0", data=numpy.full((8, 16), 0.4, "float32"))
    model = _quantized(_dense_model, "int8")
    before = [w.numpy().copy() for w in model.weights]
    with pytest.raises(FileLoadError, match="keeps its weight '.*kernel' as int8"):
        model.load_weights(weights)
    for weight, value in zip(model.weights, before):
        numpy.testing.assert_array_equal(weight.numpy(), value)


def test_a_float_file_does_not_load_into_a_quantized_model(tmp_path):
    float_model = _dense_model()
    float_model.save_weights(str(tmp_path / "float.weights.h5"))
    with pytest.raises(ValueError, match="expects 3 weight|shape|count"):
        _quantized(_dense_model, "int8").load_weights(str(tmp_path / "float.weights.h5"))


def test_keras_loads_the_files_minikeras_writes(tmp_path):
    keras = pytest.importorskip("keras", reason="Keras is not installed here: Keras reading minikeras's quantized "
                                                "files runs only where Keras 3 is (not in CI)")
    pytest.importorskip("tensorflow", reason="the Keras check needs the TensorFlow backend")
    rng = numpy.random.default_rng(4)
    for build, mode, config in ((_dense_model, "int8", None), (_dense_model, "float8", None),
                                (_einsum_model, "int8", None), (_einsum_model, "int4", None),
                                (_dense_model, None, quantizers.Int8QuantizationConfig(activation_quantizer=None))):
        model = _quantized(build, mode, config)
        x = rng.normal(size=(3,) + tuple(model.inputs[0].shape[1:])).astype("float32")
        expected = model.predict(x, verbose=0)
        model.save(str(tmp_path / "m.keras"))
        loaded = keras.saving.load_model(str(tmp_path / "m.keras"))
        numpy.testing.assert_allclose(numpy.asarray(loaded.predict(x, verbose=0)), expected, rtol=1e-6, atol=1e-6)
        model.save_weights(str(tmp_path / "m.weights.h5"))
        loaded.load_weights(str(tmp_path / "m.weights.h5"))
        numpy.testing.assert_allclose(numpy.asarray(loaded.predict(x, verbose=0)), expected, rtol=1e-6, atol=1e-6)
    embedding = mk.Sequential([layers.Input((7,), dtype="int32"), layers.Embedding(30, 12),
                               layers.GlobalAveragePooling1D(), layers.Dense(3)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        embedding.quantize("int8")
    ids = rng.integers(0, 30, size=(4, 7)).astype("int32")
    embedding.save(str(tmp_path / "e.keras"))
    loaded = keras.saving.load_model(str(tmp_path / "e.keras"))
    numpy.testing.assert_allclose(numpy.asarray(loaded.predict(ids, verbose=0)), embedding.predict(ids, verbose=0),
                                  rtol=1e-6, atol=1e-6)
