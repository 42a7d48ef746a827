"""Tests for minikeras/ops/math/compare.py: maximum/minimum, clip, where,
comparisons and logical ops."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from tests.ops.op_check import check_op

BROADCAST_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 3), (1, 4, 1)), ((3, 1), ())]


def _distinct_pair(rng, shape_a, shape_b):
    """Two inputs whose broadcast elements are never within 0.05 of each
    other, so that finite differences never cross a tie."""
    a = rng.normal(size=shape_a)
    b = rng.normal(size=shape_b)
    close = numpy.abs(numpy.broadcast_to(a, numpy.broadcast_shapes(shape_a, shape_b)) - b) < 0.05
    if close.any():
        return _distinct_pair(rng, shape_a, shape_b)
    return a, b


# -------------------------------------------------------------- maximum/minimum
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES)
@pytest.mark.parametrize("op,reference", [(ops.maximum, numpy.maximum), (ops.minimum, numpy.minimum)])
def test_maximum_minimum_forward_and_gradient(op, reference, shapes, rng):
    check_op(op, reference, list(_distinct_pair(rng, *shapes)))


def test_maximum_with_a_number_keeps_float32(rng):
    x = rng.normal(size=(4, 5))
    x[numpy.abs(x) < 0.05] = 0.5
    check_op(lambda t: ops.maximum(t, 0.0), lambda a: numpy.maximum(a, 0.0), [x])
    check_op(lambda t: ops.minimum(1.0, t), lambda a: numpy.minimum(1.0, a), [x + 1.0 + (numpy.abs(x) < 0.05)])
    y = ops.maximum(mk.tensor(numpy.ones(3, numpy.float32)), numpy.float64(2.0))
    assert y.dtype == numpy.float32


def test_maximum_ties_split_the_gradient_in_half():
    a = mk.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = mk.tensor([1.0, 3.0, 2.0], requires_grad=True)
    ops.maximum(a, b).backward(numpy.array([2.0, 2.0, 2.0]))
    numpy.testing.assert_array_equal(a.grad.numpy(), [1.0, 0.0, 2.0])
    numpy.testing.assert_array_equal(b.grad.numpy(), [1.0, 2.0, 0.0])


def test_minimum_ties_split_the_gradient_in_half():
    a = mk.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = mk.tensor([1.0, 3.0, 2.0], requires_grad=True)
    ops.minimum(a, b).sum().backward()
    numpy.testing.assert_array_equal(a.grad.numpy(), [0.5, 1.0, 0.0])
    numpy.testing.assert_array_equal(b.grad.numpy(), [0.5, 0.0, 1.0])


def test_maximum_of_a_tensor_with_itself_gives_full_gradient():
    x = mk.tensor([1.0, -2.0], requires_grad=True)
    ops.maximum(x, x).sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


def test_maximum_ties_with_broadcasting_sum_back():
    x = mk.tensor([0.0, 1.0, 0.0], requires_grad=True)
    zero = mk.tensor(0.0, requires_grad=True)
    ops.maximum(x, zero).sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [0.5, 1.0, 0.5])
    assert zero.grad.shape == ()
    assert zero.grad.item() == 1.0  # two halves


def test_maximum_of_two_numbers_is_a_float32_tensor():
    y = ops.maximum(2.0, 3.0)
    assert isinstance(y, mk.Tensor) and y.dtype == numpy.float32 and y.item() == 3.0


def test_maximum_method_and_errors():
    x = mk.tensor(numpy.zeros((2, 3)))
    assert x.maximum(mk.tensor(numpy.ones(3))).shape == (2, 3)
    with pytest.raises(ValueError, match=r"maximum: shapes \(2, 3\) and \(4,\) cannot be broadcast"):
        ops.maximum(x, mk.tensor(numpy.ones(4)))
    with pytest.raises(ValueError, match="minimum: shapes"):
        ops.minimum(x, numpy.ones((3, 2)))
    with pytest.raises(TypeError, match="maximum: expected"):
        ops.maximum(x, "zero")


# ------------------------------------------------------------------------ clip
def test_clip_forward_and_gradient(rng):
    x = rng.uniform(-2.0, 2.0, size=(4, 5))
    x[numpy.abs(numpy.abs(x) - 1.0) < 0.05] = 0.3  # keep away from the bounds
    check_op(lambda t: ops.clip(t, -1.0, 1.0), lambda a: numpy.clip(a, -1.0, 1.0), [x])


def test_clip_gradient_includes_the_bounds():
    x = mk.tensor([-1.0, 0.0, 0.5, 1.0, 2.0], requires_grad=True)
    y = ops.clip(x, 0.0, 1.0)
    numpy.testing.assert_array_equal(y.numpy(), [0.0, 0.0, 0.5, 1.0, 1.0])
    y.sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 1.0, 1.0, 0.0])


def test_clip_one_sided():
    x = mk.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    y = ops.clip(x, None, 0.0)
    numpy.testing.assert_array_equal(y.numpy(), [-1.0, 0.0, 0.0])
    y.sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0, 0.0])
    numpy.testing.assert_array_equal(ops.clip(x, 0.0, None).numpy(), [0.0, 0.0, 2.0])


def test_clip_with_tensor_bounds_broadcasts(rng):
    x = rng.uniform(-3, 3, size=(3, 4))
    low = numpy.array([-1.0, -2.0, 0.0, -0.5])
    high = numpy.array([[1.0], [2.0], [0.5]])
    x[numpy.minimum(numpy.abs(x - low), numpy.abs(x - high)) < 0.05] = -10.0
    # float32 bounds (exact values) so that a float32 x stays float32.
    low32, high32 = mk.tensor(low.astype(numpy.float32)), mk.tensor(high.astype(numpy.float32))
    # Not in 16 bits: the float32 bounds promote a float16 x to float32, as NumPy does.
    check_op(lambda t: ops.clip(t, low32, high32), lambda a: numpy.clip(a, low, high), [x], check_16_bit=False)


def test_clip_keeps_dtype_with_numpy_scalar_bounds():
    x = mk.tensor(numpy.array([0.0, 5.0], dtype=numpy.float32))
    y = ops.clip(x, numpy.float64(1.0), numpy.float64(2.0))
    assert y.dtype == numpy.float32
    numpy.testing.assert_array_equal(y.numpy(), [1.0, 2.0])
    numpy.testing.assert_array_equal(x.clip(1.0, 2.0).numpy(), [1.0, 2.0])


def test_clip_of_integers_stays_integer():
    y = ops.clip(mk.tensor(numpy.array([-5, 3, 9], dtype=numpy.int32)), 0, 6)
    assert y.dtype == numpy.int32
    numpy.testing.assert_array_equal(y.numpy(), [0, 3, 6])


def test_clip_errors():
    x = mk.tensor(numpy.zeros((2, 3)))
    with pytest.raises(ValueError, match="clip: at least one of x_min and x_max"):
        ops.clip(x, None, None)
    with pytest.raises(ValueError, match="clip: x_min must not exceed x_max, received x_min=2 and x_max=1"):
        ops.clip(x, 2, 1)
    with pytest.raises(ValueError, match=r"clip: shapes \(2, 3\) and \(2,\)"):
        ops.clip(x, mk.tensor(numpy.zeros(2)), 1.0)
    with pytest.raises(TypeError, match="clip: expected"):
        ops.clip(x, "low", 1.0)


# ----------------------------------------------------------------------- where
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), (3, 4)), ((4,), (3, 4), ())])
def test_where_forward_and_gradient(shapes, rng):
    condition_shape, shape_1, shape_2 = shapes
    condition = rng.uniform(size=condition_shape) > 0.5
    x1, x2 = rng.normal(size=shape_1), rng.normal(size=shape_2)
    check_op(lambda c, a, b: ops.where(c, a, b), numpy.where, [condition, x1, x2])


def test_where_gradient_goes_to_the_chosen_branch():
    condition = mk.tensor(numpy.array([True, False, True]))
    a = mk.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = mk.tensor([10.0, 20.0, 30.0], requires_grad=True)
    y = ops.where(condition, a, b)
    numpy.testing.assert_array_equal(y.numpy(), [1.0, 20.0, 3.0])
    y.backward(numpy.array([1.0, 2.0, numpy.inf]))
    numpy.testing.assert_array_equal(a.grad.numpy(), [1.0, 0.0, numpy.inf])
    numpy.testing.assert_array_equal(b.grad.numpy(), [0.0, 2.0, 0.0])  # inf does not leak as nan


def test_where_with_numbers_and_a_computed_condition():
    x = mk.tensor([-1.0, 2.0], requires_grad=True)
    y = ops.where(x > 0, x, 0.0)
    assert y.dtype == numpy.float32
    y.sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0])
    z = ops.where(mk.tensor(numpy.array([True, False])), 1.0, 0.0)
    assert z.dtype == numpy.float32
    numpy.testing.assert_array_equal(z.numpy(), [1.0, 0.0])


def test_where_reads_a_non_bool_condition_as_nonzero():
    y = ops.where(mk.tensor(numpy.array([0, 2, -1])), mk.tensor([1.0, 1.0, 1.0]), 0.0)
    numpy.testing.assert_array_equal(y.numpy(), [0.0, 1.0, 1.0])


def test_where_without_values_gives_indices():
    rows, columns = ops.where(mk.tensor(numpy.array([[True, False], [False, True]])))
    assert rows.dtype == numpy.int64 and columns.dtype == numpy.int64
    numpy.testing.assert_array_equal(rows.numpy(), [0, 1])
    numpy.testing.assert_array_equal(columns.numpy(), [0, 1])


def test_where_errors():
    condition = mk.tensor(numpy.array([True, False, True]))
    with pytest.raises(ValueError, match="where: give both x1 and x2"):
        ops.where(condition, mk.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match=r"where: shapes \(3,\), \(2,\), \(\) cannot be broadcast"):
        ops.where(condition, mk.tensor([1.0, 2.0]), 0.0)


# ---------------------------------------------------------- comparisons, logic
COMPARISONS = [
    (ops.equal, numpy.equal), (ops.not_equal, numpy.not_equal), (ops.less, numpy.less),
    (ops.less_equal, numpy.less_equal), (ops.greater, numpy.greater), (ops.greater_equal, numpy.greater_equal),
]


@pytest.mark.parametrize("op,reference", COMPARISONS)
def test_comparisons_match_numpy_and_never_require_grad(op, reference):
    a = numpy.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    b = numpy.array([2.0, 2.0, 2.0])
    x = mk.tensor(a, requires_grad=True)
    y = op(x, mk.tensor(b))
    assert y.dtype == numpy.bool_
    assert not y.requires_grad
    numpy.testing.assert_array_equal(y.numpy(), reference(a, b))
    numpy.testing.assert_array_equal(op(x, 2.0).numpy(), reference(a, 2.0))
    numpy.testing.assert_array_equal(op(2.0, x).numpy(), reference(2.0, a))


def test_comparison_operators_are_bound():
    x = mk.tensor([1.0, 2.0, 3.0], requires_grad=True)
    numpy.testing.assert_array_equal((x < 2).numpy(), [True, False, False])
    numpy.testing.assert_array_equal((x <= 2).numpy(), [True, True, False])
    numpy.testing.assert_array_equal((x > 2).numpy(), [False, False, True])
    numpy.testing.assert_array_equal((x >= 2).numpy(), [False, True, True])
    numpy.testing.assert_array_equal((2 < x).numpy(), [False, False, True])  # reflected to x > 2
    assert not (x < 2).requires_grad


def test_comparisons_of_integers_and_shape_errors():
    x = mk.tensor(numpy.array([1, 5, 3]))
    numpy.testing.assert_array_equal(ops.greater(x, 2).numpy(), [False, True, True])
    with pytest.raises(ValueError, match=r"less: shapes \(3,\) and \(2,\)"):
        ops.less(x, mk.tensor(numpy.array([1, 2])))


def test_logical_ops():
    a = mk.tensor(numpy.array([True, True, False, False]))
    b = mk.tensor(numpy.array([True, False, True, False]))
    numpy.testing.assert_array_equal(ops.logical_and(a, b).numpy(), [True, False, False, False])
    numpy.testing.assert_array_equal(ops.logical_or(a, b).numpy(), [True, True, True, False])
    numpy.testing.assert_array_equal(ops.logical_xor(a, b).numpy(), [False, True, True, False])
    numpy.testing.assert_array_equal(ops.logical_not(a).numpy(), [False, False, True, True])
    # Masks combine into a differentiable selection.
    x = mk.tensor([-2.0, -0.5, 0.5, 2.0], requires_grad=True)
    inside = ops.logical_and(x > -1, x < 1)
    ops.where(inside, x, 0.0).sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 1.0, 0.0])
