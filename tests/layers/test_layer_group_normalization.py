"""GroupNormalization: reference math, weights, gradients, round trips,
errors. Keras parity is in test_layer_keras_parity.py."""
import numpy
import pytest

from minikeras import layers
from tests.layers.layer_check import run_layer_test
from tests.ops.test_group_norm import np_group_normalize


def test_group_normalization(rng, tmp_path):
    x = rng.normal(2.0, 3.0, (2, 3, 3, 4)).astype("float32")
    layer = run_layer_test(lambda **kw: layers.GroupNormalization(groups=2, **kw), x,
                           expected_output=np_group_normalize(x, 2), tmp_path=tmp_path, atol=1e-4)
    assert [w.name.split("/")[-1] for w in layer.weights] == ["gamma", "beta"]
    gamma, beta = rng.normal(size=4), rng.normal(size=4)
    layer.set_weights([gamma, beta])
    numpy.testing.assert_allclose(layer(x).numpy(), np_group_normalize(x, 2) * gamma + beta, rtol=1e-4, atol=1e-5)


def test_instance_and_channels_first(rng, tmp_path):
    x = rng.normal(size=(2, 4, 3, 3)).astype("float32")
    layer = run_layer_test(lambda **kw: layers.GroupNormalization(groups=-1, axis=1, scale=False, **kw), x,
                           expected_output=np_group_normalize(x, 4, axis=1), tmp_path=tmp_path, atol=1e-4)
    assert layer.groups == 4 and [w.shape for w in layer.weights] == [(4,)]


def test_errors(rng):
    x = rng.normal(size=(2, 6)).astype("float32")
    with pytest.raises(ValueError, match="groups=4 must divide the 6 channels"):
        layers.GroupNormalization(groups=4)(x)
    with pytest.raises(ValueError, match="groups must be a positive int or -1"):
        layers.GroupNormalization(groups=0)
    with pytest.raises(ValueError, match="not a channel axis"):
        layers.GroupNormalization(groups=1, axis=0)(x)
