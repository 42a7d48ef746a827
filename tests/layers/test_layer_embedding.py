"""Embedding layer (the lookup op itself: tests/ops/test_embedding.py).

(Named test_layer_embedding.py: test module basenames must be unique.)
"""
import numpy
import pytest

from minikeras import layers, regularizers
from minikeras.autograd import Tensor, gradcheck


def test_lookup_returns_table_rows(rng):
    layer = layers.Embedding(10, 4)
    ids = numpy.array([[1, 2, 2], [9, 0, 3]])
    out = layer(ids)
    assert out.shape == (2, 3, 4) and out.dtype == numpy.float32
    table = layer.get_weights()[0]
    numpy.testing.assert_array_equal(out.numpy(), table[ids])


def test_keras_defaults(rng):
    layer = layers.Embedding(1000, 8)
    layer(numpy.array([[0]]))
    (table,) = layer.get_weights()
    assert table.shape == (1000, 8) and [w.name for w in layer.weights] == [f"{layer.name}/embeddings"]
    # "uniform" = RandomUniform(-0.05, 0.05)
    assert table.min() >= -0.05 and table.max() < 0.05 and table.std() == pytest.approx(0.1 / 12 ** 0.5, rel=0.05)


def test_float_ids_are_cast_to_int_and_input_length_is_ignored():
    layer = layers.Embedding(5, 2, input_length=3)
    layer(numpy.array([[1, 4]]))
    table = layer.get_weights()[0]
    numpy.testing.assert_array_equal(layer(numpy.array([[1.0, 4.0]], "float32")).numpy(), table[[[1, 4]]])
    assert "input_length" not in layer.get_config()


def test_gradient_accumulates_on_repeated_ids():
    layer = layers.Embedding(4, 3)
    ids = numpy.array([[1, 1, 3]])
    layer(ids).sum().backward()
    grad = layer.embeddings.grad.numpy()
    numpy.testing.assert_array_equal(grad, numpy.array([[0, 0, 0], [2, 2, 2], [0, 0, 0], [1, 1, 1]], "float32"))


def test_gradcheck_wrt_table(rng):
    layer = layers.Embedding(5, 2, dtype="float64")
    ids = numpy.array([[0, 4, 4], [2, 1, 0]])
    layer(ids)

    def lookup(table):
        saved, layer.embeddings = layer.embeddings, table
        try:
            return layer(ids)
        finally:
            layer.embeddings = saved

    gradcheck(lookup, [layer.get_weights()[0]])


def test_out_of_range_ids_name_the_layer_and_index():
    layer = layers.Embedding(10, 3, name="words")
    with pytest.raises(ValueError, match="Layer 'words' \\(Embedding with input_dim=10\\) received index 10"):
        layer(numpy.array([[1, 10]]))
    with pytest.raises(ValueError, match="received index -1"):
        layer(numpy.array([[-1, 2]]))
    with pytest.raises(TypeError, match="integer ids"):
        layer(numpy.array([[True, False]]))
    with pytest.raises(ValueError, match="input_dim must be a positive integer"):
        layers.Embedding(0, 3)
    with pytest.raises(ValueError, match="output_dim must be a positive integer"):
        layers.Embedding(3, -1)


def test_mask_zero():
    layer = layers.Embedding(5, 2, mask_zero=True)
    mask = layer.compute_mask(Tensor(numpy.array([[0, 3, 0]])))
    numpy.testing.assert_array_equal(mask.numpy(), [[False, True, False]])
    assert layers.Embedding(5, 2).compute_mask(Tensor(numpy.array([[0]]))) is None


def test_config_round_trip_and_symbolic_shape(rng):
    layer = layers.Embedding(7, 3, embeddings_initializer="he_normal", embeddings_regularizer="l2",
                             embeddings_constraint="unit_norm", mask_zero=True, name="emb")
    ids = numpy.array([[1, 6]])
    out = layer(ids)
    clone = layers.Embedding.from_config(layer.get_config())
    clone(ids)
    clone.set_weights(layer.get_weights())
    numpy.testing.assert_array_equal(clone(ids).numpy(), out.numpy())
    assert clone.get_config() == layer.get_config()
    assert isinstance(clone.embeddings_regularizer, regularizers.L2)
    assert layers.Embedding(7, 3)(layers.Input((5,), dtype="int32")).shape == (None, 5, 3)
    with pytest.raises(ValueError, match="shape \\(7, 3\\)"):
        layer.set_weights([numpy.zeros((3, 7))])
