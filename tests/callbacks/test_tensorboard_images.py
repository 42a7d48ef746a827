"""TensorBoard(write_images=True): weights written as images exactly as
Keras 3.15 writes them (recorded by fixtures/record_tensorboard_images.py:
the same weights through Keras's callback, read back by TensorBoard's
EventAccumulator and decoded by Pillow), and the PNG encoder on its own."""
import io
import pathlib

import numpy
import pytest

import minikeras as mk
from minikeras.callbacks import TensorBoard
from minikeras.callbacks.tensorboard_images import encode_png, to_uint8, weight_as_images

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "tensorboard_images.npz"


def test_weight_images_equal_keras(tmp_path):
    event_accumulator = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator", reason="the tensorboard package is not installed")
    image_module = pytest.importorskip("PIL.Image", reason="Pillow decodes the PNGs in this test")
    recorded = numpy.load(FIXTURE)
    model = mk.Sequential([mk.Input((5, 5, 2)), mk.layers.Conv2D(4, 3, name="conv"), mk.layers.Flatten(),
                           mk.layers.Dense(3, name="dense")], name="sequential")  # Keras's model's name
    model.set_weights([recorded[f"weight_{i}"] for i in range(4)])
    model.compile(optimizer=mk.optimizers.SGD(learning_rate=0.0), loss="mse")
    model.fit(numpy.zeros((2, 5, 5, 2), "float32"), numpy.zeros((2, 3), "float32"), epochs=1, verbose=0,
              callbacks=[TensorBoard(tmp_path, histogram_freq=1, write_images=True, write_graph=False)])
    accumulator = event_accumulator.EventAccumulator(str(tmp_path / "train"), size_guidance={"tensors": 0})
    accumulator.Reload()
    for index in range(4):
        tag = str(recorded[f"tag_{index}"])  # Keras's: the weight's path ("sequential/conv/kernel/image")
        assert tag in accumulator.Tags()["tensors"], (tag, accumulator.Tags()["tensors"])
        assert tag.endswith("/image") and accumulator.SummaryMetadata(tag).plugin_data.plugin_name == "images"
        strings = accumulator.Tensors(tag)[0].tensor_proto.string_val
        assert (int(strings[0]), int(strings[1])) == (recorded[f"width_{index}"], recorded[f"height_{index}"])
        images = numpy.stack([numpy.asarray(image_module.open(io.BytesIO(png))) for png in strings[2:]])
        numpy.testing.assert_array_equal(images, recorded[f"images_{index}"])


def test_without_histogram_freq_no_images_are_written(tmp_path):
    event_accumulator = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator", reason="the tensorboard package is not installed")
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(numpy.zeros((2, 2), "float32"), numpy.zeros((2, 1), "float32"), verbose=0,
              callbacks=[TensorBoard(tmp_path, write_images=True, write_graph=False)])
    accumulator = event_accumulator.EventAccumulator(str(tmp_path / "train"), size_guidance={"tensors": 0})
    accumulator.Reload()
    assert not [tag for tag in accumulator.Tags()["tensors"] if tag.endswith("/image")]


def test_keras_image_layouts_and_the_png_encoder():
    assert weight_as_images(numpy.zeros(5)).shape == (1, 5, 1, 1)
    assert weight_as_images(numpy.zeros((7, 2))).shape == (1, 2, 7, 1)  # transposed: wider than tall
    assert weight_as_images(numpy.zeros((3, 3, 1, 8))).shape == (8, 3, 3, 1)  # squeezed, one per channel
    assert weight_as_images(numpy.zeros((3, 3, 2, 5))) is None  # 5 "channels": Keras writes none
    numpy.testing.assert_array_equal(to_uint8(numpy.array([-1.0, 0.0, 0.5, 1.0, 2.0])), [0, 0, 127, 255, 255])
    image_module = pytest.importorskip("PIL.Image", reason="Pillow decodes the PNG in this test")
    for channels in (1, 3, 4):
        pixels = numpy.random.default_rng(channels).integers(0, 256, (5, 7, channels), dtype=numpy.uint8)
        decoded = numpy.asarray(image_module.open(io.BytesIO(encode_png(pixels))))
        numpy.testing.assert_array_equal(decoded.reshape(pixels.shape), pixels)
