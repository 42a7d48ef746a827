"""embedding (row gather with a scatter-add gradient) and one_hot."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from minikeras.autograd import gradcheck
from tests.ops.op_check import check_op


@pytest.fixture
def table(rng):
    return rng.standard_normal((7, 3))


@pytest.mark.parametrize("shape", [(5,), (2, 4), (2, 3, 2), ()])
def test_embedding_values_and_gradcheck(rng, table, shape):
    indices = rng.integers(0, 7, shape)
    check_op(lambda i, w: ops.embedding(i, w), lambda i, w: w[i], [indices, table])


def test_repeated_indices_accumulate(table):
    weights = mk.Tensor(table.astype("float32"), requires_grad=True)
    indices = mk.tensor(numpy.array([[6, 6, 1], [6, 0, 1]]))
    out = ops.embedding(indices, weights)
    assert out.shape == (2, 3, 3) and out.dtype == numpy.float32
    out.backward(numpy.ones((2, 3, 3), dtype="float32"))
    counts = numpy.array([1, 2, 0, 0, 0, 0, 3], dtype="float32")
    numpy.testing.assert_array_equal(weights.grad.numpy(), numpy.repeat(counts[:, None], 3, axis=1))
    assert weights.grad.dtype == numpy.float32


def test_large_lookup_matches_add_at(rng):
    table = rng.standard_normal((1000, 16)).astype("float32")
    indices = rng.integers(0, 1000, (64, 50))
    upstream = rng.standard_normal((64, 50, 16)).astype("float32")
    weights = mk.Tensor(table, requires_grad=True)
    ops.embedding(mk.tensor(indices), weights).backward(upstream)
    expected = numpy.zeros_like(table)
    numpy.add.at(expected, indices.reshape(-1), upstream.reshape(-1, 16))
    numpy.testing.assert_allclose(weights.grad.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_embedding_errors(table):
    weights = mk.tensor(table)
    with pytest.raises(ValueError, match=r"embedding: indices must be in \[0, 7\) .*vocabulary size 7; received index 7"):
        ops.embedding(mk.tensor(numpy.array([0, 7])), weights)
    with pytest.raises(ValueError, match=r"vocabulary size 7; received index -1"):
        ops.embedding(mk.tensor(numpy.array([-1, 2])), weights)
    with pytest.raises(ValueError, match=r"table must have shape \(vocab, dim\), received shape \(7,\)"):
        ops.embedding(mk.tensor(numpy.array([0])), mk.tensor(numpy.zeros(7)))
    with pytest.raises(TypeError, match="embedding: indices must be an integer"):
        ops.embedding(mk.tensor(numpy.array([True])), weights)


def test_float_ids_are_accepted(table):
    out = ops.embedding(mk.tensor(numpy.array([[1.0, 6.0]])), mk.tensor(table))
    numpy.testing.assert_array_equal(out.numpy(), table[[[1, 6]]])


def test_gradcheck_with_repeats(table):
    indices = mk.tensor(numpy.array([[3, 3], [3, 0]]))
    assert gradcheck(lambda w: ops.embedding(indices, w) * 2.0, [table])


# ----------------------------------------------------------------- one_hot
def test_one_hot():
    indices = mk.tensor(numpy.array([[0, 2], [1, 1]]))
    out = ops.one_hot(indices, 3)
    assert out.dtype == numpy.float32 and not out.requires_grad
    numpy.testing.assert_array_equal(out.numpy(), numpy.eye(3)[[[0, 2], [1, 1]]])
    numpy.testing.assert_array_equal(ops.one_hot(indices, 3, dtype="int32", axis=0).numpy(),
                                     numpy.moveaxis(numpy.eye(3, dtype="int32")[[[0, 2], [1, 1]]], -1, 0))


def test_one_hot_out_of_range_gives_zero_rows():
    out = ops.one_hot(mk.tensor(numpy.array([-1, 3, 2, 100])), 3).numpy()
    numpy.testing.assert_array_equal(out, [[0, 0, 0], [0, 0, 0], [0, 0, 1], [0, 0, 0]])


def test_one_hot_errors():
    with pytest.raises(ValueError, match="one_hot: depth must be a non-negative int"):
        ops.one_hot(mk.tensor(numpy.array([0])), -2)
    with pytest.raises(ValueError, match="one_hot: axis 3 is out of range"):
        ops.one_hot(mk.tensor(numpy.array([0])), 2, axis=3)
    with pytest.raises(TypeError, match="one_hot: indices must be a Tensor"):
        ops.one_hot(["a", "b"], 2)  # lists of ints are accepted, as in Keras
