"""keras.ops calls with array arguments Keras takes: ``bincount`` of 2-D ids
(one count per row) and with weights, ``full_like`` with an array
``fill_value``, ``quantile``/``percentile`` with a 2-D ``q``, ``stack`` of one
array, and ``eig``'s complex results. Expected values and dtypes were
recorded from Keras 3.15 (TensorFlow backend); where that backend fails
(``stack(array, axis=1)``, ``eig`` of integers) the answer is NumPy's, which
Keras's NumPy and JAX backends give.
"""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from tests.ops.op_check import check_op

IDS = numpy.array([[0, 1, 1, 3], [2, 2, 0, 0]], "int32")
WEIGHTS = numpy.array([[0.5, 1.0, 2.0, 1.0], [1.0, 1.0, 3.0, 0.5]], "float32")


def _value(tensor, dtype):
    assert tensor.dtype == numpy.dtype(dtype), (tensor.dtype, dtype)
    return tensor.numpy()


def test_bincount_docstring_example():
    x = ops.array([1, 2, 2, 3], dtype="uint8")
    numpy.testing.assert_array_equal(_value(ops.bincount(x), "int32"), [0, 1, 2, 1])
    weights = numpy.array([0.5, 1.0, 1.0, 1.5], "float32")
    numpy.testing.assert_allclose(_value(ops.bincount(x, weights=weights), "float32"), [0.0, 0.5, 2.0, 1.5])
    minlength = (int(ops.max(x).numpy()) + 1) + 2  # 6
    numpy.testing.assert_array_equal(ops.bincount(x, minlength=minlength).numpy(), [0, 1, 2, 1, 0, 0])


def test_bincount_counts_each_row_of_two_dimensional_ids():
    numpy.testing.assert_array_equal(_value(ops.bincount(IDS), "int32"), [[1, 2, 0, 1], [2, 0, 2, 0]])
    numpy.testing.assert_array_equal(ops.bincount(IDS, minlength=6).numpy(),
                                     [[1, 2, 0, 1, 0, 0], [2, 0, 2, 0, 0, 0]])
    numpy.testing.assert_allclose(_value(ops.bincount(IDS, weights=WEIGHTS), "float32"),
                                  [[0.5, 3.0, 0.0, 1.0], [3.5, 0.0, 2.0, 0.0]])
    numpy.testing.assert_allclose(ops.bincount(IDS.astype("int64"), weights=WEIGHTS, minlength=5).numpy(),
                                  [[0.5, 3.0, 0.0, 1.0, 0.0], [3.5, 0.0, 2.0, 0.0, 0.0]])
    assert ops.bincount(numpy.zeros((3, 0), "int32"), minlength=2).numpy().tolist() == [[0, 0]] * 3
    # Keras promotes the ids' and the weights' dtypes: int64 ids with int32 weights count in int64.
    counts = ops.bincount(numpy.array([0, 1, 1, 3]), weights=numpy.array([1, 2, 3, 4], "int32"))
    numpy.testing.assert_array_equal(_value(counts, "int64"), [1, 5, 0, 4])
    with pytest.raises(ValueError, match=r"bincount expects a 1-D integer tensor \(2-D: one count per row\)"):
        ops.bincount(numpy.zeros((2, 2, 2), "int32"))
    with pytest.raises(ValueError, match="non-negative integers, received -1"):
        ops.bincount(numpy.array([[0, -1]]))


def test_full_like_broadcasts_an_array_fill_value():
    numpy.testing.assert_array_equal(
        _value(ops.full_like(numpy.zeros((2, 3), "float32"), numpy.array([1.0, 2.0, 3.0], "float32")), "float32"),
        [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    numpy.testing.assert_array_equal(  # cast to x's dtype, as Keras (numpy.full_like) does
        _value(ops.full_like(numpy.zeros((2, 3), "int32"), numpy.array([1.5, 2.5, 3.5])), "int32"),
        [[1, 2, 3], [1, 2, 3]])
    numpy.testing.assert_array_equal(
        _value(ops.full_like(numpy.zeros((2, 3), "float32"), numpy.array([[1], [2]]), dtype="int32"), "int32"),
        [[1, 1, 1], [2, 2, 2]])
    x = mk.Tensor(numpy.zeros((2, 2), "float32"))
    fill = mk.Tensor(numpy.array([4.0, 5.0], "float32"))
    filled = ops.full_like(x, fill)
    with fill.device.activate():
        fill.data[...] = 0  # the result has its own memory
    numpy.testing.assert_array_equal(filled.numpy(), [[4.0, 5.0], [4.0, 5.0]])
    numpy.testing.assert_array_equal(ops.full_like(x, 3).numpy(), [[3.0, 3.0], [3.0, 3.0]])
    with pytest.raises(ValueError, match=r"full_like: fill_value of shape \(3,\) does not broadcast to x's shape"):
        ops.full_like(x, numpy.ones(3))


X = numpy.arange(12, dtype="float32").reshape(3, 4)
Q2 = numpy.array([[10.0, 50.0], [90.0, 25.0]], "float32")


def test_percentile_and_quantile_take_a_two_dimensional_q():
    numpy.testing.assert_allclose(_value(ops.percentile(X, Q2), "float32"), [[1.1, 5.5], [9.9, 2.75]], rtol=1e-6)
    numpy.testing.assert_allclose(ops.quantile(X, Q2 / 100).numpy(), [[1.1, 5.5], [9.9, 2.75]], rtol=1e-6)
    by_row = ops.percentile(X, Q2, axis=1)
    assert by_row.shape == (2, 2, 3)
    numpy.testing.assert_allclose(by_row.numpy(), [[[0.3, 4.3, 8.3], [1.5, 5.5, 9.5]],
                                                   [[2.7, 6.7, 10.7], [0.75, 4.75, 8.75]]], rtol=1e-5)
    kept = ops.percentile(X, Q2, axis=0, keepdims=True)
    assert kept.shape == (2, 2, 1, 4)
    numpy.testing.assert_allclose(kept.numpy()[0, 0, 0], [0.8, 1.8, 2.8, 3.8], rtol=1e-5)
    numpy.testing.assert_allclose(kept.numpy()[1, 1, 0], [2.0, 3.0, 4.0, 5.0], rtol=1e-5)
    nearest = ops.quantile(X, Q2 / 100, axis=1, method="nearest")
    numpy.testing.assert_array_equal(nearest.numpy(), [[[0, 4, 8], [2, 6, 10]], [[3, 7, 11], [1, 5, 9]]])
    integers = ops.percentile(numpy.arange(6, dtype="int32"), Q2)
    numpy.testing.assert_allclose(_value(integers, "float32"), [[0.5, 2.5], [4.5, 1.25]])
    with pytest.raises(ValueError, match=r"q must be numbers within \[0, 100\]"):
        ops.percentile(X, [[10.0, 150.0]])


def test_quantile_of_a_two_dimensional_q_against_numpy_with_gradients():
    x = numpy.random.default_rng(0).normal(size=(3, 5))
    q = numpy.array([[0.2, 0.5], [0.9, 0.05]])
    check_op(lambda t: ops.quantile(t, q, axis=1), lambda a: numpy.quantile(a, q, axis=1), [x], check_16_bit=False)


def test_stack_of_one_array_stacks_its_rows():
    rows = numpy.arange(6, dtype="float32").reshape(2, 3)
    numpy.testing.assert_array_equal(_value(ops.stack(rows), "float32"), rows)
    numpy.testing.assert_array_equal(_value(ops.stack(numpy.arange(6).reshape(3, 2)), "int64"),
                                     [[0, 1], [2, 3], [4, 5]])
    numpy.testing.assert_array_equal(ops.stack(rows, axis=1).numpy(), numpy.stack(rows, axis=1))
    numpy.testing.assert_array_equal(ops.stack(rows, axis=-1).numpy(), numpy.stack(rows, axis=-1))
    x = numpy.random.default_rng(1).normal(size=(2, 3, 4))
    check_op(lambda t: ops.stack(t, axis=2), lambda a: numpy.stack(a, axis=2), [x], check_16_bit=False)


def test_eig_is_complex_as_in_keras():
    symmetric = numpy.array([[2.0, 1.0], [1.0, 3.0]], "float32")
    values, vectors = ops.eig(symmetric)
    assert values.dtype == numpy.complex64 and vectors.dtype == numpy.complex64
    numpy.testing.assert_allclose(numpy.sort_complex(values.numpy()), [1.381966 + 0j, 3.618034 + 0j], rtol=1e-5)
    rotation = numpy.array([[0.0, -1.0], [1.0, 0.0]], "float32")
    values, vectors = ops.eig(rotation)
    numpy.testing.assert_allclose(numpy.sort_complex(values.numpy()), [-1j, 1j], atol=1e-6)
    numpy.testing.assert_allclose(rotation @ vectors.numpy(), vectors.numpy() * values.numpy(), atol=1e-6)
    assert [t.dtype for t in ops.eig(symmetric.astype("float64"))] == [numpy.complex128] * 2
    assert [t.dtype for t in ops.eig(numpy.array([[2, 1], [1, 3]]))] == [numpy.complex64] * 2
