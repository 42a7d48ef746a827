"""Bad input at the ops' public entries: the library's own errors, never
silent garbage (issue 12, "Bad input")."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops


def test_object_and_string_arrays_are_not_tensors():
    with pytest.raises(TypeError, match="tensor: expected numeric data .* string"):
        mk.tensor(numpy.array(["a", "b"]))
    with pytest.raises(TypeError, match="tensor: expected numeric data .* object"):
        mk.Tensor(numpy.array([1.0, None], dtype=object))
    with pytest.raises(TypeError, match="Cannot make a tensor from None"):
        mk.tensor(None)
    with pytest.raises(TypeError, match="tensor: expected numeric data"):
        mk.tensor([1.0], dtype="str")


@pytest.mark.parametrize("op", [ops.exp, ops.relu, ops.sum, ops.flatten, ops.negative, ops.softmax, ops.transpose,
                                ops.abs])
def test_object_arrays_none_and_strings_are_refused_by_ops(op):
    name = op.__name__
    for bad in (numpy.array([1.0, None], dtype=object), numpy.array(["1", "2"]), None):
        with pytest.raises(TypeError, match=f"^{name}"):
            op(bad)


def test_ops_without_boolean_meaning_refuse_bools():
    mask = numpy.array([True, False])
    for op in (ops.relu, ops.negative, ops.sigmoid, ops.softmax):
        with pytest.raises(TypeError, match=f"{op.__name__} does not accept bool"):
            op(mask)
    with pytest.raises(TypeError, match="subtract does not accept two bool operands"):
        ops.subtract(mask, mask)
    assert ops.tanh(mask).dtype == numpy.float32  # Keras's tanh computes bools as 0.0 and 1.0
    # where bools mean something they still work
    numpy.testing.assert_array_equal(ops.logical_not(mask).numpy(), [False, True])
    numpy.testing.assert_array_equal(ops.add(mask, mask).numpy(), [True, False])
    assert ops.add(True, True).item() is True  # NumPy's rule, not Python's True + True == 2


def test_complex_var_and_std_are_refused():
    z = numpy.array([1 + 1j, 2 - 1j], dtype="complex64")
    with pytest.raises(TypeError, match="var does not support complex"):
        ops.var(z)
    with pytest.raises(TypeError, match="std does not support complex"):
        ops.std(z)


def test_creation_ops_check_shapes_and_values():
    with pytest.raises(TypeError, match=r"zeros: shape must hold ints, received \(1.9, 2\)"):
        ops.zeros((1.9, 2))
    with pytest.raises(TypeError, match="ones: shape"):
        ops.ones((True, 2))
    with pytest.raises(ValueError, match="zeros: shape dimensions must be non-negative"):
        ops.zeros((-1, 2))
    with pytest.raises(TypeError, match="full: expected a Tensor, an array or a number, received None"):
        ops.full((2,), None)
    with pytest.raises(ValueError, match="arange: step must not be 0"):
        ops.arange(0, 5, 0)
    with pytest.raises(ValueError, match="arange: stop must be finite"):
        ops.arange(0, float("inf"))
    with pytest.raises(TypeError, match="zeros: .* is not a dtype"):
        ops.zeros((2,), dtype="no such dtype")
    assert ops.full((2,), numpy.float64(3.0)).numpy().tolist() == [3.0, 3.0]
    assert ops.arange(0, 1, 0.5).numpy().tolist() == [0.0, 0.5]


def test_python_numbers_are_inputs():
    out = ops.cast(2.5, "float64")
    assert out.dtype == numpy.float64 and out.item() == 2.5
    out = ops.expand_dims(2.5, 0)
    assert out.shape == (1,) and out.numpy()[0] == numpy.float32(2.5)
    assert ops.reshape(3.0, (1, 1)).shape == (1, 1)
    assert ops.transpose(1.0).shape == ()
    assert ops.zeros_like(2.5).shape == ()
    assert ops.one_hot(numpy.int64(1), 3).numpy().tolist() == [0.0, 1.0, 0.0]
    with pytest.raises(TypeError, match="cast: expected numeric data"):
        ops.cast(1.0, "U5")


def test_take_honours_axis():
    x = mk.tensor(numpy.arange(6.0).reshape(2, 3))
    picked = ops.take(x, numpy.array([True, False, True]), axis=1)
    numpy.testing.assert_array_equal(picked.numpy(), [[0.0, 2.0], [3.0, 5.0]])
    picked = ops.take(x, numpy.array([False, True]), axis=0)
    numpy.testing.assert_array_equal(picked.numpy(), [[3.0, 4.0, 5.0]])
    with pytest.raises(ValueError, match="take: a boolean mask must be 1-D with the length of axis 0"):
        ops.take(x, numpy.ones((2, 3), bool), axis=0)
    with pytest.raises(TypeError, match="take: indices must be integers"):
        ops.take(x, numpy.array([0.5]), axis=0)
    with pytest.raises(IndexError, match="^take: "):
        ops.take(x, numpy.array([5]), axis=0)


def test_a_cross_entropy_over_an_empty_class_axis_is_a_clean_error():
    # (softmax itself answers an empty tensor there, as Keras: tests/ops/test_softmax.py)
    with pytest.raises(ValueError, match="softmax_cross_entropy: cannot normalize over axis 1 of size 0"):
        ops.softmax_cross_entropy(numpy.zeros((2, 0), "float32"), numpy.zeros((2, 0), "float32"))
    with pytest.raises(ValueError, match="sparse_softmax_cross_entropy: logits need a non-empty class axis"):
        ops.sparse_softmax_cross_entropy(numpy.zeros((2, 0), "float32"), numpy.zeros(2, "int64"))


def test_matmul_concatenate_stack_pad_refuse_or_handle_edge_inputs():
    with pytest.raises(TypeError, match="matmul: expected numeric data"):
        ops.matmul(numpy.array([[None]], dtype=object), numpy.ones((1, 1)))
    product = ops.matmul(numpy.eye(2, dtype=bool), numpy.ones((2, 2), bool))  # Keras and NumPy: bools
    assert product.dtype == numpy.bool_ and product.numpy().all()
    for op in (ops.concatenate, ops.stack):
        with pytest.raises(TypeError, match=f"{op.__name__}: expected numeric data"):
            op([numpy.array(["a"]), numpy.array(["b"])])
    assert ops.pad(mk.tensor(2.0), 1).item() == 2.0  # like numpy.pad: a 0-d array has nothing to pad


def test_axis_shape_and_repeat_arguments_must_be_ints():
    x = numpy.ones((2, 2), "float32")
    for call, name in ((lambda: ops.expand_dims(x, 1.5), "expand_dims: axis"),
                       (lambda: ops.reshape(x, numpy.float32(4.0)), "reshape: shape"),
                       (lambda: ops.tile(x, numpy.bool_(True)), "tile: repeats"),
                       (lambda: ops.moveaxis(x, None, 0), "moveaxis: source"),
                       (lambda: ops.repeat(x, 2.5), "repeat: repeats")):
        with pytest.raises(TypeError, match=f"{name} must be an int or a sequence of ints"):
            call()
    assert ops.reshape(x, numpy.array([4])).shape == (4,)


def test_remaining_numpy_errors_are_the_libraries_own():
    with pytest.raises(ValueError, match="power: integers to negative integer powers"):
        ops.power(numpy.array([2, 3]), numpy.array([1, -1]))
    assert ops.power(numpy.array([2, 3]), 2).numpy().tolist() == [4, 9]
    with pytest.raises(ValueError, match="where: .* 0-d condition"):
        ops.where(numpy.float32(1.0))
    with pytest.raises(TypeError, match="avg_pool1d expects floating-point inputs"):
        ops.avg_pool1d(numpy.ones((1, 4, 2), "int32"))
    with pytest.raises(TypeError, match="erf does not support complex"):
        ops.erf(numpy.array([1j]))
    with pytest.raises(TypeError, match="sign does not accept bool"):
        ops.sign(numpy.array([True]))
