"""Shape ops: values against NumPy, gradients by finite differences, errors."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from minikeras.autograd import gradcheck
from tests.ops.op_check import check_op


@pytest.fixture
def x(rng):
    return rng.standard_normal((2, 3, 4))


# ------------------------------------------------------------ reshaping
def test_reshape_and_transpose(x):
    check_op(lambda t: ops.reshape(t, (4, -1)), lambda a: a.reshape(4, -1), [x])
    check_op(lambda t: ops.transpose(t, (2, 0, 1)), lambda a: a.transpose(2, 0, 1), [x])
    check_op(lambda t: t.T, lambda a: a.T, [x])


@pytest.mark.parametrize("axis", [0, -1, 2, (0, 2), (-1, 0)])
def test_expand_dims(x, axis):
    check_op(lambda t: ops.expand_dims(t, axis), lambda a: numpy.expand_dims(a, axis), [x])


def test_squeeze(rng):
    a = rng.standard_normal((1, 3, 1, 2))
    check_op(lambda t: ops.squeeze(t), lambda v: numpy.squeeze(v), [a])
    check_op(lambda t: ops.squeeze(t, 2), lambda v: numpy.squeeze(v, 2), [a])
    check_op(lambda t: t.squeeze((0, -2)), lambda v: numpy.squeeze(v, (0, -2)), [a])


def test_squeeze_rejects_an_axis_that_is_not_one(rng):
    with pytest.raises(ValueError, match=r"squeeze: cannot squeeze axis 1 .*\(1, 3, 1, 2\).*size is 3"):
        ops.squeeze(mk.tensor(rng.standard_normal((1, 3, 1, 2))), 1)
    with pytest.raises(ValueError, match="squeeze: axis 4 is out of range"):
        ops.squeeze(mk.tensor(numpy.zeros((1, 3, 1, 2))), 4)


def test_expand_dims_rejects_bad_axis(x):
    with pytest.raises(ValueError, match="expand_dims: axis 5 is out of range"):
        ops.expand_dims(mk.tensor(x), 5)
    with pytest.raises(ValueError, match="repeated axis"):
        ops.expand_dims(mk.tensor(x), (0, 0))


def test_flatten_and_ravel(x):
    check_op(ops.flatten, lambda a: a.reshape(-1), [x])
    assert ops.ravel(mk.tensor(x)).shape == (24,)
    assert mk.tensor(x).flatten().shape == (24,)


def test_moveaxis_and_swapaxes(x):
    check_op(lambda t: ops.moveaxis(t, 0, -1), lambda a: numpy.moveaxis(a, 0, -1), [x])
    check_op(lambda t: ops.moveaxis(t, (0, 1), (2, 0)), lambda a: numpy.moveaxis(a, (0, 1), (2, 0)), [x])
    check_op(lambda t: ops.swapaxes(t, 0, 2), lambda a: numpy.swapaxes(a, 0, 2), [x])
    with pytest.raises(ValueError, match="swapaxes: axis 3 is out of range"):
        ops.swapaxes(mk.tensor(x), 0, 3)
    with pytest.raises(ValueError, match="moveaxis: source"):
        ops.moveaxis(mk.tensor(x), (0, 1), 2)


# ------------------------------------------------- joining and splitting
def test_concatenate(rng):
    a, b, c = rng.standard_normal((2, 3)), rng.standard_normal((2, 1)), rng.standard_normal((2, 4))
    check_op(lambda p, q, r: ops.concatenate([p, q, r], axis=1), lambda p, q, r: numpy.concatenate([p, q, r], 1), [a, b, c])
    check_op(lambda p, q: ops.concatenate((p, q), axis=-2), lambda p, q: numpy.concatenate([p, q], 0), [a, a * 2])


def test_concatenate_gradient_skips_constants_and_keeps_dtypes(rng):
    weights = mk.Tensor(rng.standard_normal((2, 3)).astype("float32"), requires_grad=True)
    constant = mk.tensor(rng.standard_normal((1, 3)).astype("float32"))
    out = ops.concatenate([constant, weights], axis=0)
    out.backward(numpy.arange(9, dtype="float32").reshape(3, 3))
    numpy.testing.assert_array_equal(weights.grad.numpy(), numpy.arange(3, 9).reshape(2, 3))
    assert weights.grad.dtype == numpy.float32
    assert constant.grad is None


def test_concatenate_errors(rng):
    a = mk.tensor(numpy.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"concatenate: tensor 1 has shape \(3, 3\).*except axis 1"):
        ops.concatenate([a, mk.tensor(numpy.zeros((3, 3)))], axis=1)
    with pytest.raises(ValueError, match="at least one tensor"):
        ops.concatenate([])
    with pytest.raises(TypeError, match="list or tuple"):
        ops.concatenate(a)
    with pytest.raises(ValueError, match="concatenate: axis 2 is out of range"):
        ops.concatenate([a, a], axis=2)


def test_stack(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    for axis in (0, 1, 2, -1):
        check_op(lambda p, q: ops.stack([p, q], axis=axis), lambda p, q: numpy.stack([p, q], axis), [a, b])
    with pytest.raises(ValueError, match=r"stack: tensor 1 has shape \(3, 2\)"):
        ops.stack([mk.tensor(a), mk.tensor(a.T)])


def test_split_equal_sections(x):
    pieces = ops.split(mk.tensor(x), 2, axis=2)
    assert isinstance(pieces, list) and len(pieces) == 2
    for piece, expected in zip(pieces, numpy.split(x, 2, axis=2)):
        numpy.testing.assert_array_equal(piece.numpy(), expected)
    assert gradcheck(lambda t: ops.concatenate(ops.split(t, 3, axis=1)[::-1], axis=1), [x])


def test_split_uneven_points_and_unused_pieces(x):
    pieces = ops.split(mk.tensor(x), [1, 3], axis=-1)
    assert [p.shape for p in pieces] == [(2, 3, 1), (2, 3, 2), (2, 3, 1)]
    # Only the middle piece is used: the others get a zero gradient.
    assert gradcheck(lambda t: ops.split(t, [1, 3], axis=-1)[1] * 2.0, [x])
    t = mk.Tensor(x, requires_grad=True)
    ops.split(t, [1, 3], axis=-1)[2].sum().backward()
    expected = numpy.zeros_like(x)
    expected[..., 3] = 1
    numpy.testing.assert_array_equal(t.grad.numpy(), expected)


def test_split_errors(x):
    with pytest.raises(ValueError, match=r"split: cannot split axis 1 of size 3 .* into 2 equal sections"):
        ops.split(mk.tensor(x), 2, axis=1)
    with pytest.raises(ValueError, match=r"split points must be sorted ints in \[0, 4\]"):
        ops.split(mk.tensor(x), [3, 1], axis=2)
    with pytest.raises(ValueError, match=r"split points must be sorted ints in \[0, 4\]"):
        ops.split(mk.tensor(x), [5], axis=2)


# --------------------------------------------------------------- repeating
@pytest.mark.parametrize("repeats", [2, (2, 1), (1, 3, 2), (2, 1, 1, 2), (0, 1, 1)])
def test_tile(x, repeats):
    check_op(lambda t: ops.tile(t, repeats), lambda a: numpy.tile(a, repeats), [x])


def test_tile_rejects_negative(x):
    with pytest.raises(ValueError, match="tile: repeats must be non-negative"):
        ops.tile(mk.tensor(x), (1, -1))


@pytest.mark.parametrize("repeats, axis", [(2, None), (3, 1), (2, -1), ([0, 2, 1], 1), ([1, 3], 0), ([2], 2)])
def test_repeat(x, repeats, axis):
    check_op(lambda t: ops.repeat(t, repeats, axis=axis), lambda a: numpy.repeat(a, repeats, axis=axis), [x])


def test_repeat_errors(x):
    with pytest.raises(ValueError, match=r"repeat: repeats must be an int or 3 non-negative ints"):
        ops.repeat(mk.tensor(x), [1, 2], axis=1)
    with pytest.raises(ValueError, match="repeat: repeats must be non-negative"):
        ops.repeat(mk.tensor(x), -1)


# ----------------------------------------------------------------- padding
@pytest.mark.parametrize("pad_width", [1, (1, 2), ((0, 1), (2, 0), (1, 1)), [[1, 0]]])
def test_pad_constant(x, pad_width):
    check_op(
        lambda t: ops.pad(t, pad_width, constant_values=2.5),
        lambda a: numpy.pad(a, pad_width, constant_values=2.5),
        [x],
    )


@pytest.mark.parametrize("mode", ["reflect", "symmetric", "edge", "wrap"])
def test_pad_index_modes(x, mode):
    # Widths larger than the axis make reflect/symmetric/wrap reuse elements
    # several times: their gradients must accumulate.
    widths = ((1, 0), (2, 3), (5, 1))
    check_op(lambda t: ops.pad(t, widths, mode=mode), lambda a: numpy.pad(a, widths, mode=mode), [x])


def test_pad_errors(x):
    with pytest.raises(ValueError, match="pad: pad_width must be"):
        ops.pad(mk.tensor(x), ((1, 1), (1, 1)))
    with pytest.raises(ValueError, match="non-negative"):
        ops.pad(mk.tensor(x), -1)
    with pytest.raises(ValueError, match="pad: mode must be"):
        ops.pad(mk.tensor(x), 1, mode="median")


# ------------------------------------------------------------------- cast
def test_cast_value_and_gradient_dtype(x):
    t = mk.Tensor(x, requires_grad=True)  # float64
    y = t.astype("float32")
    assert y.dtype == numpy.float32 and y.requires_grad
    numpy.testing.assert_allclose(y.numpy(), x.astype(numpy.float32))
    (y * 3.0).sum().backward()
    assert t.grad.dtype == numpy.float64
    numpy.testing.assert_array_equal(t.grad.numpy(), numpy.full_like(x, 3.0))


def test_cast_to_integer_cuts_the_gradient(x):
    t = mk.Tensor(x * 10, requires_grad=True)
    y = ops.cast(t, "int32")
    assert y.dtype == numpy.int32 and not y.requires_grad
    numpy.testing.assert_array_equal(y.numpy(), (x * 10).astype(numpy.int32))


def test_cast_gradcheck(rng):
    assert gradcheck(lambda t: ops.cast(t, "float64") ** 2, [rng.standard_normal((3, 2))])


def test_cast_rejects_unknown_dtype(x):
    with pytest.raises(TypeError, match="cast: 'flaot32' is not a dtype"):
        ops.cast(mk.tensor(x), "flaot32")


def test_take(x):
    check_op(lambda t: ops.take(t, mk.tensor(numpy.array([2, 0, 2])), axis=1),
             lambda a: numpy.take(a, [2, 0, 2], axis=1), [x])
    check_op(lambda t: ops.take(t, mk.tensor(numpy.array([[5, 5], [23, 0]]))),
             lambda a: numpy.take(a, [[5, 5], [23, 0]]), [x])
