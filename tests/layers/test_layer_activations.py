"""Activation layers: Softmax, ReLU, LeakyReLU, PReLU, ELU."""
import numpy
import pytest

from minikeras import layers
from minikeras.autograd import Tensor
from tests.layers.layer_check import run_layer_test


def np_softmax(x, axis=-1):
    e = numpy.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.fixture
def x(rng):
    return rng.normal(0, 2, (3, 4, 5)).astype("float32")


def test_softmax_layer(x, tmp_path):
    run_layer_test(lambda **kw: layers.Softmax(axis=1, **kw), x, expected_output=np_softmax(x, axis=1),
                   tmp_path=tmp_path)
    both = layers.Softmax(axis=[1, 2])(x).numpy()
    flat = np_softmax(x.reshape(3, -1)).reshape(x.shape)
    numpy.testing.assert_allclose(both, flat, rtol=1e-5, atol=1e-6)


def test_softmax_layer_mask_gives_masked_positions_zero(x):
    mask = numpy.ones((3, 4, 5), bool)
    mask[:, :, 3:] = False
    mask[0] = False  # a fully masked row gives zeros, not NaN
    out = layers.Softmax()(x, mask=mask).numpy()
    expected = np_softmax(x[:, :, :3])
    numpy.testing.assert_allclose(out[1:, :, :3], expected[1:], rtol=1e-5, atol=1e-6)
    assert (out[:, :, 3:] == 0).all() and (out[0] == 0).all()
    with pytest.raises(ValueError, match="broadcast"):
        layers.Softmax()(x, mask=numpy.ones((3, 4), bool))


def test_relu_layer_options(x, tmp_path):
    expected = numpy.where(x >= 1.0, numpy.minimum(x, 2.5), 0.1 * (x - 1.0))
    run_layer_test(lambda **kw: layers.ReLU(max_value=2.5, negative_slope=0.1, threshold=1.0, **kw), x,
                   expected_output=expected, tmp_path=tmp_path, gradient=False)
    run_layer_test(lambda **kw: layers.ReLU(**kw), x * 1.3 + 0.05, expected_output=numpy.maximum(x * 1.3 + 0.05, 0))
    with pytest.raises(ValueError, match="max_value"):
        layers.ReLU(max_value=-1)
    with pytest.raises(ValueError, match="negative_slope"):
        layers.ReLU(negative_slope=-0.1)


def test_leaky_relu_layer(x, tmp_path):
    layer = run_layer_test(lambda **kw: layers.LeakyReLU(**kw), x, expected_output=numpy.where(x > 0, x, 0.3 * x),
                           tmp_path=tmp_path)
    assert layer.get_config()["negative_slope"] == 0.3
    with pytest.warns(UserWarning, match="alpha"):
        assert layers.LeakyReLU(alpha=0.1).negative_slope == 0.1


def test_elu_layer(x, tmp_path):
    run_layer_test(lambda **kw: layers.ELU(alpha=0.7, **kw), x,
                   expected_output=numpy.where(x > 0, x, 0.7 * numpy.expm1(x)), tmp_path=tmp_path)


def test_prelu_layer_weight_shape_and_math(x, tmp_path):
    layer = run_layer_test(lambda **kw: layers.PReLU(shared_axes=[1], **kw), x, tmp_path=tmp_path)
    assert [w.shape for w in layer.weights] == [(1, 5)]
    assert layer.weights[0].name.endswith("alpha")
    alpha = numpy.linspace(0.1, 0.5, 5).reshape(1, 5).astype("float32")
    layer.set_weights([alpha])
    numpy.testing.assert_allclose(layer(x).numpy(), numpy.where(x > 0, x, alpha * x), rtol=1e-6)
    assert layers.PReLU()(x).numpy().min() >= 0  # zeros initializer: plain ReLU
    with pytest.raises(ValueError, match="shared axis 3"):
        layers.PReLU(shared_axes=3)(x)
    with pytest.raises(ValueError, match="Layer 'p'.*expects"):
        p = layers.PReLU(name="p")
        p(x)
        p(numpy.zeros((2, 4, 6), "float32"))


def test_activation_layers_pass_the_mask_on():
    ids = numpy.array([[3, 1, 0, 0]])
    embedded = layers.Embedding(5, 2, mask_zero=True)(ids)
    from minikeras.layers.keras_mask import get_keras_mask
    for layer in (layers.ReLU(), layers.LeakyReLU(), layers.ELU(), layers.PReLU()):
        out = layer(embedded)
        assert isinstance(out, Tensor)
        numpy.testing.assert_array_equal(get_keras_mask(out).numpy(), [[True, True, False, False]])
