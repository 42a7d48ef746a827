"""Merge layers: Add, Subtract, Multiply, Average, Maximum, Minimum,
Concatenate, Dot. (Named test_layer_merge.py: basenames must be unique.)"""
import numpy
import pytest

from minikeras import layers
from minikeras.autograd import gradcheck


@pytest.fixture
def pair(rng):
    return rng.standard_normal((3, 4)), rng.standard_normal((3, 4))


ELEMENTWISE = [
    (layers.Add, lambda xs: sum(xs)),
    (layers.Multiply, lambda xs: numpy.prod(xs, axis=0)),
    (layers.Average, lambda xs: sum(xs) / len(xs)),
    (layers.Maximum, lambda xs: numpy.max(xs, axis=0)),
    (layers.Minimum, lambda xs: numpy.min(xs, axis=0)),
]


@pytest.mark.parametrize("cls, reference", ELEMENTWISE)
def test_elementwise_merges_match_numpy_and_gradcheck(rng, cls, reference):
    xs = [rng.standard_normal((2, 3)) for _ in range(3)]
    out = cls()([x.astype("float32") for x in xs])
    assert out.dtype == numpy.float32
    numpy.testing.assert_allclose(out.numpy(), reference(xs), rtol=1e-5, atol=1e-6)
    gradcheck(lambda a, b, c: cls(dtype="float64")([a, b, c]), xs)


def test_subtract(pair):
    a, b = pair
    numpy.testing.assert_array_equal(layers.Subtract()([a, b]).numpy(), a.astype("float32") - b.astype("float32"))
    gradcheck(lambda x, y: layers.Subtract(dtype="float64")([x, y]), [a, b])
    with pytest.raises(ValueError, match="expects exactly 2 input"):
        layers.Subtract()([a, b, a])


def test_size_one_axes_broadcast(rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 1))
    numpy.testing.assert_allclose(layers.Add()([a, b]).numpy(), (a + b).astype("float32"), rtol=1e-6)


def test_shape_mismatch_names_layer_and_shapes(pair):
    a, _ = pair
    with pytest.raises(ValueError, match="Layer 'sum' \\(Add\\) received inputs with incompatible shapes: "
                                         "\\(3, 4\\), \\(3, 5\\)"):
        layers.Add(name="sum")([a, numpy.zeros((3, 5))])
    with pytest.raises(ValueError, match="must be called on a list"):
        layers.Add()(a)
    with pytest.raises(ValueError, match="at least 1 input"):
        layers.Multiply()([])


def test_concatenate(rng):
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 5))
    out = layers.Concatenate()([a, b])
    numpy.testing.assert_allclose(out.numpy(), numpy.concatenate([a, b], -1).astype("float32"))
    c = rng.standard_normal((2, 1, 4))
    numpy.testing.assert_allclose(layers.Concatenate(axis=1)([a, c]).numpy(),
                                  numpy.concatenate([a, c], 1).astype("float32"))
    gradcheck(lambda x, y: layers.Concatenate(dtype="float64")([x, y]) * 2.0, [a, b])
    with pytest.raises(ValueError, match="Layer 'cat' \\(Concatenate, axis=1\\).*\\(2, 3, 4\\), \\(2, 3, 5\\)"):
        layers.Concatenate(axis=1, name="cat")([a, b])
    assert layers.Concatenate.from_config(layers.Concatenate(axis=1).get_config()).axis == 1


def test_dot_vectors_matrices_and_normalize(rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    out = layers.Dot(axes=1)([a, b])
    assert out.shape == (3, 1)
    numpy.testing.assert_allclose(out.numpy()[:, 0], (a * b).sum(1), rtol=1e-5)
    cosine = layers.Dot(axes=1, normalize=True)([a, b]).numpy()[:, 0]
    numpy.testing.assert_allclose(cosine, (a * b).sum(1) / numpy.linalg.norm(a, axis=1) / numpy.linalg.norm(b, axis=1),
                                  rtol=1e-5)
    x, y = rng.standard_normal((2, 3, 5)), rng.standard_normal((2, 4, 5))
    numpy.testing.assert_allclose(layers.Dot(axes=2)([x, y]).numpy(), numpy.einsum("bmd,bnd->bmn", x, y), rtol=1e-5)
    z = rng.standard_normal((2, 5, 4))
    numpy.testing.assert_allclose(layers.Dot(axes=(2, 1))([x, z]).numpy(), numpy.einsum("bmd,bdn->bmn", x, z),
                                  rtol=1e-5)
    gradcheck(lambda p, q: layers.Dot(axes=2, normalize=True, dtype="float64")([p, q]), [x, y])
    assert layers.Dot(axes=1)([layers.Input((4,)), layers.Input((4,))]).shape == (None, 1)


def test_dot_errors(rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 5))
    message = "Layer 'd' \\(Dot, axes=1\\) received incompatible shapes \\(3, 4\\), \\(3, 5\\)"
    with pytest.raises(ValueError, match=message):
        layers.Dot(1, name="d")([a, b])
    with pytest.raises(ValueError, match="axis 0 is the batch"):
        layers.Dot(0)([a, a])
    with pytest.raises(ValueError, match="exactly 2"):
        layers.Dot(1)([a, a, a])
    with pytest.raises(TypeError, match="axes"):
        layers.Dot("last")


def test_merges_in_a_functional_graph(rng):
    first, second = layers.Input((4,)), layers.Input((4,))
    assert layers.Add()([first, second]).shape == (None, 4)
    assert layers.Concatenate()([first, second]).shape == (None, 8)
    assert layers.add([first, second]).shape == (None, 4)
    config = layers.Dot(axes=[1, 1], normalize=True).get_config()
    assert layers.Dot.from_config(config).get_config() == config
