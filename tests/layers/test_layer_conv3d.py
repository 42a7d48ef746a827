"""Conv3D, MaxPooling3D, AveragePooling3D layers: shapes, weights, round
trips, gradients. Op math is in tests/ops/test_conv3d.py, Keras parity in
test_layer_keras_parity.py."""
import numpy
import pytest

from minikeras import Sequential, layers
from minikeras.layers import Input
from tests.layers.layer_check import run_layer_test
from tests.ops.test_conv3d import np_conv3d, np_pool3d


@pytest.fixture
def volume(rng):
    return rng.normal(size=(2, 4, 5, 4, 2)).astype("float32")


def test_conv3d_layer(volume, tmp_path):
    layer = run_layer_test(lambda **kw: layers.Conv3D(3, (2, 3, 2), padding="same", **kw), volume,
                           expected_output_shape=(2, 4, 5, 4, 3), tmp_path=tmp_path)
    kernel, bias = layer.get_weights()
    assert kernel.shape == (2, 3, 2, 2, 3) and bias.shape == (3,)
    numpy.testing.assert_allclose(layer(volume).numpy(), np_conv3d(volume, kernel, padding="same") + bias,
                                  rtol=1e-4, atol=1e-5)
    assert layer.compute_output_shape((None, 4, 5, 4, 2)) == (None, 4, 5, 4, 3)
    assert layers.Convolution3D is layers.Conv3D


@pytest.mark.parametrize("layer_class, kind", [(layers.MaxPooling3D, "max"), (layers.AveragePooling3D, "avg")])
def test_pooling3d_layers(layer_class, kind, volume, tmp_path):
    run_layer_test(lambda **kw: layer_class(padding="same", **kw), volume,
                   expected_output=np_pool3d(volume, (2, 2, 2), (2, 2, 2), "same", kind), tmp_path=tmp_path)
    assert layer_class((2, 3, 2), strides=1).compute_output_shape((None, 4, 5, 4, 2)) == (None, 3, 3, 3, 2)


def test_volumetric_model_trains(rng):
    x = rng.normal(size=(8, 4, 4, 4, 1)).astype("float32")
    y = (x.mean(axis=(1, 2, 3, 4)) > 0).astype("float32")
    model = Sequential([Input((4, 4, 4, 1)), layers.Conv3D(4, 2, activation="relu"), layers.MaxPooling3D(),
                        layers.Flatten(), layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy")
    history = model.fit(x, y, epochs=4, batch_size=4, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_conv3d_layer_errors():
    with pytest.raises(ValueError, match="kernel_size"):
        layers.Conv3D(2, (2, 2))
    with pytest.raises(ValueError, match=r"rank 5 \(batch, depth, height, width, channels\)"):
        layers.Conv3D(2, 2)(numpy.zeros((2, 4, 4, 1), "float32"))
