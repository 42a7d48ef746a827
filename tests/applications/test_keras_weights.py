"""Keras's weight files load into minikeras's applications and give Keras's
outputs: a committed fixture (MobileNet alpha=0.25, 32x32, written by Keras
3.15 with random weights, fixtures/keras_outputs.py), and, where the side
environment with Keras is present, one model per family in both of Keras's
layouts (``.weights.h5`` and tf.keras's weights-only ``.h5`` of the ImageNet
files), generated on the fly (``MINIKERAS_LIVE_KERAS=1``: ten models, about
ten minutes on a loaded 2-core machine)."""
import json
import os
import pathlib
import shutil
import subprocess
import zipfile

import numpy
import pytest

import minikeras as mk

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
SIDE_PYTHON = os.environ.get("MINIKERAS_KERAS_PYTHON", "/work/side/bin/python")


def _compare(model, folder, file_name, atol):
    recorded = numpy.load(folder / "io.npz")
    model.load_weights(folder / file_name)
    assert model.count_params() == int(recorded["params"])
    outputs = model.predict(recorded["inputs"], verbose=0)
    scale = max(float(numpy.abs(recorded["outputs"]).max()), 1.0)
    numpy.testing.assert_allclose(outputs, recorded["outputs"], atol=atol * scale, rtol=0)


def _compare_both_layouts(model, folder):
    """Keras's outputs after loading each of its layouts, the weights zeroed
    in between so the second file must set every one of them."""
    for file_name in ("model.weights.h5", "model.h5"):
        model.set_weights([numpy.zeros(weight.shape, "float32") for weight in model.weights])
        _compare(model, folder, file_name, atol=1e-5)


def test_keras_weights_file_gives_keras_outputs():
    model = mk.applications.MobileNet(weights=None, alpha=0.25, include_top=False, input_shape=(32, 32, 3))
    _compare(model, FIXTURES / "mobilenet_025", "model.weights.h5", atol=1e-5)


def test_keras_convnext_weights_in_both_layouts_give_keras_outputs():
    """A small ConvNeXt (Keras's builder with depths [1, 1, 2, 1], 8-32
    channels, logits) saved by Keras 3.15: its nested Sequential blocks,
    grouped 7x7 convolutions, LayerScale and residual operations load by
    name from .weights.h5 and by order from tf.keras's .h5."""
    model = mk.applications.convnext.ConvNeXt([1, 1, 2, 1], [8, 16, 24, 32], name="convnext_mini",
                                              input_shape=(32, 32, 3), classes=5, classifier_activation=None)
    _compare_both_layouts(model, FIXTURES / "convnext_mini")


def test_keras_efficientnet_v2_weights_in_both_layouts_give_keras_outputs():
    """A small EfficientNetV2 (Keras's builder on B0's stages, width 0.125,
    depth 0.34, logits): Fused-MBConv and MBConv blocks with
    squeeze-and-excitation and the in-model Normalization."""
    model = mk.applications.efficientnet_v2.EfficientNetV2(
        0.125, 0.34, 32, name="efficientnetv2-b0", weights=None, input_shape=(32, 32, 3), classes=5,
        classifier_activation=None)
    _compare_both_layouts(model, FIXTURES / "efficientnetv2_mini")


def test_keras_nasnet_weights_in_both_layouts_give_keras_outputs():
    """A small NASNet-A (Keras's builder, 1 @ 96, stem 8, logits): the
    factorised reductions, projections and cells load by name from
    .weights.h5 and by Keras's layer order from tf.keras's .h5."""
    model = mk.applications.nasnet.NASNet((32, 32, 3), penultimate_filters=96, num_blocks=1, stem_block_filters=8,
                                          skip_reduction=False, weights=None, classes=5, default_size=32,
                                          classifier_activation=None, name="nasnet_mini")
    _compare_both_layouts(model, FIXTURES / "nasnet_mini")


def test_a_keras_saved_convnext_file_loads_and_is_saved_as_keras_saves_it(tmp_path):
    """A whole .keras file of a small ConvNeXt saved by Keras 3.15
    (fixtures/record_convnext_keras_file.py): nested Sequential blocks,
    LayerScale layers and the residual operation nodes load, give Keras's
    outputs, and are written back under Keras's modules."""
    recorded = numpy.load(FIXTURES / "convnext_mini_model.npz")
    model = mk.models.load_model(FIXTURES / "convnext_mini_model.keras")
    numpy.testing.assert_allclose(model.predict(recorded["inputs"], verbose=0), recorded["outputs"], atol=1e-5)
    model.save(tmp_path / "again.keras")
    with zipfile.ZipFile(tmp_path / "again.keras") as archive:
        layers = json.loads(archive.read("config.json"))["config"]["layers"]
    modules = {(spec["class_name"], spec["module"], spec["registered_name"]) for spec in layers}
    assert ("LayerScale", "keras.src.applications.convnext", "LayerScale") in modules
    assert ("Add", "keras.src.ops.numpy", "Add") in modules
    again = mk.models.load_model(tmp_path / "again.keras")
    numpy.testing.assert_allclose(again.predict(recorded["inputs"], verbose=0), recorded["outputs"], atol=1e-5)


def test_weights_argument_takes_a_path_and_imagenet_reads_the_keras_cache(tmp_path, monkeypatch):
    path = FIXTURES / "mobilenet_025" / "model.weights.h5"
    recorded = numpy.load(FIXTURES / "mobilenet_025" / "io.npz")
    model = mk.applications.MobileNet(weights=str(path), alpha=0.25, include_top=False, input_shape=(32, 32, 3))
    numpy.testing.assert_allclose(model.predict(recorded["inputs"], verbose=0), recorded["outputs"], atol=1e-5)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MINIKERAS_HOME", str(tmp_path / ".minikeras"))
    from minikeras.datasets import _files

    def offline(url, target):
        raise OSError("no network in this test")

    monkeypatch.setattr(_files, "_download", offline)
    with pytest.raises(Exception) as raised:
        mk.applications.MobileNet(weights="imagenet", alpha=0.25, include_top=False, input_shape=(32, 32, 3))
    message = str(raised.value)
    assert "mobilenet_2_5_224_tf_no_top.h5" in message
    assert "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet/" in message
    (tmp_path / ".keras" / "models").mkdir(parents=True)
    shutil.copy(path, tmp_path / ".keras" / "models" / "mobilenet_2_5_224_tf_no_top.h5")
    with pytest.warns(UserWarning, match="Weights for input shape \\(224, 224\\)"):
        cached = mk.applications.MobileNet(weights="imagenet", alpha=0.25, include_top=False,
                                           input_shape=(32, 32, 3))
    numpy.testing.assert_allclose(cached.predict(recorded["inputs"], verbose=0), recorded["outputs"], atol=1e-5)


def _keras_available():
    """Checked when a live test runs (importing Keras takes seconds), once."""
    if not _KERAS_AVAILABLE:
        _KERAS_AVAILABLE.append(os.path.exists(SIDE_PYTHON) and subprocess.run(
            [SIDE_PYTHON, "-c", "import keras"], capture_output=True).returncode == 0)
    return _KERAS_AVAILABLE[0]


_KERAS_AVAILABLE = []


LIVE = [
    ("VGG16", {"include_top": False, "input_shape": [32, 32, 3]}),
    ("ResNet50", {"include_top": True, "input_shape": [32, 32, 3], "classes": 10}),
    ("ResNet50V2", {"include_top": False, "input_shape": [32, 32, 3], "pooling": "avg"}),
    ("MobileNetV2", {"alpha": 0.35, "include_top": True, "input_shape": [32, 32, 3], "classes": 10}),
    ("DenseNet121", {"include_top": False, "input_shape": [32, 32, 3]}),
    ("MobileNetV3Small", {"alpha": 0.75, "include_top": True, "input_shape": [32, 32, 3], "classes": 10}),
    ("EfficientNetB0", {"include_top": True, "input_shape": [32, 32, 3], "classes": 10}),
    ("Xception", {"include_top": False, "input_shape": [71, 71, 3]}),
    ("InceptionV3", {"include_top": False, "input_shape": [75, 75, 3], "pooling": "max"}),
    ("InceptionResNetV2", {"include_top": False, "input_shape": [75, 75, 3]}),
    ("ConvNeXtTiny", {"include_top": False, "input_shape": [32, 32, 3], "pooling": "avg"}),
    ("EfficientNetV2B0", {"include_top": True, "input_shape": [32, 32, 3], "classes": 10}),
    ("EfficientNetV2S", {"include_top": False, "input_shape": [32, 32, 3], "pooling": "max"}),
    ("NASNetMobile", {"include_top": True, "input_shape": [32, 32, 3], "classes": 10}),
]


@pytest.mark.slow
@pytest.mark.parametrize("constructor, arguments", LIVE, ids=[name for name, _ in LIVE])
def test_live_keras_weights_in_both_layouts(tmp_path, constructor, arguments):
    if os.environ.get("MINIKERAS_LIVE_KERAS") != "1":
        pytest.skip("live Keras parity (minutes): run with MINIKERAS_LIVE_KERAS=1 and a Python with Keras at "
                    "MINIKERAS_KERAS_PYTHON (default /work/side/bin/python)")
    if not _keras_available():
        pytest.skip(f"no Python with Keras at {SIDE_PYTHON} (the side environment; set MINIKERAS_KERAS_PYTHON)")
    script = FIXTURES / "keras_outputs.py"
    result = subprocess.run([SIDE_PYTHON, str(script), str(tmp_path), constructor, json.dumps(arguments)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    for file_name in ("model.weights.h5", "model.h5"):
        mk.backend.clear_session()
        model = getattr(mk.applications, constructor)(weights=None, **arguments)
        _compare(model, tmp_path, file_name, atol=2e-5)
