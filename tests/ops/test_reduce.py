"""Tests for minikeras/ops/reduce.py: sum, mean, max, min, prod, var, std,
logsumexp, argmax, argmin."""
import warnings

import numpy
import pytest

import minikeras as mk
from minikeras import ops
from minikeras.autograd import gradcheck
from tests.ops.op_check import check_op


def _logsumexp_reference(a, axis=None, keepdims=False):
    shift = a.max(axis=axis, keepdims=True)
    out = numpy.log(numpy.exp(a - shift).sum(axis=axis, keepdims=True)) + shift
    return out if keepdims else numpy.squeeze(out, axis=axis) if axis is not None else out.reshape(())


REDUCTIONS = {
    "sum": (ops.sum, numpy.sum),
    "mean": (ops.mean, numpy.mean),
    "max": (ops.max, numpy.max),
    "min": (ops.min, numpy.min),
    "prod": (ops.prod, numpy.prod),
    "var": (ops.var, numpy.var),
    "std": (ops.std, numpy.std),
    "logsumexp": (ops.logsumexp, _logsumexp_reference),
}
AXES = [None, 0, -1, 1, (0, 2), (-1, 0), (0, 1, 2)]


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_forward_and_gradient(name, axis, keepdims, rng):
    op, reference = REDUCTIONS[name]
    # Distinct values (no ties for max/min) away from 0 (prod stays well scaled).
    x = rng.permutation(numpy.linspace(0.5, 1.5, 24)).reshape(2, 3, 4) * rng.choice([-1.0, 1.0], size=(2, 3, 4))
    check_op(lambda t: op(t, axis=axis, keepdims=keepdims),
             lambda a: reference(a, axis=axis, keepdims=keepdims), [x])


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_size_one_axes_and_scalars(name, rng):
    op, reference = REDUCTIONS[name]
    x = rng.uniform(0.5, 1.5, size=(3, 1, 2))
    check_op(lambda t: op(t, axis=1), lambda a: reference(a, axis=1), [x])
    check_op(lambda t: op(t), lambda a: reference(a), [numpy.array(0.7)])


@pytest.mark.parametrize("name", sorted(REDUCTIONS) + ["argmax", "argmin"])
def test_axis_out_of_range_names_the_op(name):
    op = getattr(ops, name)
    x = mk.tensor(numpy.ones((2, 3)))
    with pytest.raises(ValueError, match=f"{name}: axis 2 is out of range for a tensor with 2 dimensions"):
        op(x, axis=2)
    with pytest.raises(ValueError, match=f"{name}: axis -3 is out of range"):
        op(x, axis=-3)


@pytest.mark.parametrize("name", sorted(REDUCTIONS) + ["argmax", "argmin"])
def test_axis_of_a_scalar_is_out_of_range(name):
    with pytest.raises(ValueError, match=f"{name}: axis 0 is out of range for a tensor with 0 dimensions"):
        getattr(ops, name)(mk.tensor(2.0), axis=0)


def test_mean_of_integers_is_float32():
    y = ops.mean(mk.tensor(numpy.array([1, 2], dtype=numpy.int64)))
    assert y.dtype == numpy.float32 and y.item() == 1.5


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_repeated_axis_is_refused(name):
    with pytest.raises(ValueError, match=f"{name}: repeated axis"):
        getattr(ops, name)(mk.tensor(numpy.ones((2, 3))), axis=(1, -1))


def test_tuple_axes_with_keepdims_shape():
    x = mk.tensor(numpy.ones((2, 3, 4, 5)))
    for name in REDUCTIONS:
        assert getattr(ops, name)(x, axis=(1, -1), keepdims=True).shape == (2, 1, 4, 1), name
        assert getattr(ops, name)(x, axis=(1, -1)).shape == (2, 4), name
        assert getattr(ops, name)(x, keepdims=True).shape == (1, 1, 1, 1), name


# ------------------------------------------------------------------- max, min
def test_max_ties_split_the_gradient_evenly():
    x = mk.tensor([1.0, 3.0, 3.0], requires_grad=True)
    ops.max(x).backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.5, 0.5])


def test_max_min_ties_along_an_axis():
    data = numpy.array([[2.0, 2.0, 2.0, 1.0], [0.0, 5.0, 1.0, 5.0]])
    x = mk.tensor(data, requires_grad=True)
    ops.max(x, axis=1).backward(numpy.array([3.0, 4.0]))
    numpy.testing.assert_allclose(x.grad.numpy(), [[1.0, 1.0, 1.0, 0.0], [0.0, 2.0, 0.0, 2.0]])
    y = mk.tensor(data, requires_grad=True)
    ops.min(y, axis=0, keepdims=True).sum().backward()
    numpy.testing.assert_allclose(y.grad.numpy(), [[0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 1.0, 0.0]])


def test_max_of_a_constant_tensor_shares_the_gradient():
    x = mk.tensor(numpy.full((2, 5), 7.0), requires_grad=True)
    ops.max(x, axis=(0, 1)).backward()
    numpy.testing.assert_allclose(x.grad.numpy(), numpy.full((2, 5), 0.1))


def test_max_keeps_integers_and_float32():
    assert ops.max(mk.tensor(numpy.array([[1, 9], [4, 2]], dtype=numpy.int32)), axis=0).dtype == numpy.int32
    x = mk.tensor(numpy.array([1.0, 2.0], dtype=numpy.float32), requires_grad=True)
    ops.max(x).backward()
    assert x.grad.dtype == numpy.float32


def test_max_of_an_empty_axis_is_refused():
    with pytest.raises(ValueError, match=r"max: cannot reduce over axis 1 of size 0 \(shape \(2, 0\)\)"):
        ops.max(mk.tensor(numpy.ones((2, 0))), axis=1)
    with pytest.raises(ValueError, match="min: cannot reduce"):
        ops.min(mk.tensor(numpy.ones((0,))))


# ----------------------------------------------------------------------- prod
def test_prod_gradient_with_one_zero():
    x = mk.tensor([2.0, 0.0, 3.0, 4.0], requires_grad=True)
    y = ops.prod(x)
    assert y.item() == 0.0
    y.backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [0.0, 24.0, 0.0, 0.0])


def test_prod_gradient_with_several_zeros():
    x = mk.tensor([2.0, 0.0, 3.0, 0.0], requires_grad=True)
    ops.prod(x).backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0, 0.0])


def test_prod_gradient_with_zeros_along_axes_matches_finite_differences():
    data = numpy.array([[[1.5, 0.0, 2.0], [0.5, -1.0, 3.0]],
                        [[0.0, 0.0, 2.0], [1.0, 2.0, 0.5]]])
    for axis in [None, 0, 2, (0, 2), (1, 2)]:
        # prod is multilinear, so central differences are exact even at zeros.
        assert gradcheck(lambda t: ops.prod(t, axis=axis), [data])
    x = mk.tensor(data, requires_grad=True)
    ops.prod(x, axis=2).sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy()[0, 0], [0.0, 3.0, 0.0])
    numpy.testing.assert_allclose(x.grad.numpy()[1, 0], [0.0, 0.0, 0.0])
    numpy.testing.assert_allclose(x.grad.numpy()[1, 1], [1.0, 0.5, 2.0])


def test_prod_of_an_empty_axis_is_one():
    x = mk.tensor(numpy.ones((2, 0)), requires_grad=True)
    y = ops.prod(x, axis=1)
    numpy.testing.assert_array_equal(y.numpy(), [1.0, 1.0])
    y.sum().backward()
    assert x.grad.shape == (2, 0)


# ------------------------------------------------------------------ var, std
def test_var_std_are_population_statistics():
    data = numpy.array([1.0, 2.0, 3.0, 4.0])
    assert ops.var(mk.tensor(data)).item() == pytest.approx(1.25)
    assert ops.std(mk.tensor(data)).item() == pytest.approx(numpy.sqrt(1.25))
    assert mk.tensor(data).std().item() == pytest.approx(numpy.sqrt(1.25))


def test_std_gradient_at_zero_variance_is_zero_not_nan():
    x = mk.tensor(numpy.array([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]]), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ops.std(x, axis=1).sum().backward()
    grad = x.grad.numpy()
    numpy.testing.assert_array_equal(grad[0], [0.0, 0.0, 0.0])
    numpy.testing.assert_allclose(grad[1], numpy.array([-1.0, 0.0, 1.0]) / (3 * numpy.sqrt(2.0 / 3.0)))


def test_var_std_of_integers_compute_in_float32():
    x = mk.tensor(numpy.array([1, 2, 3, 4], dtype=numpy.int64))
    assert ops.var(x).dtype == numpy.float32
    assert ops.std(x).item() == pytest.approx(numpy.sqrt(1.25), rel=1e-6)


def test_var_of_nothing_is_refused():
    with pytest.raises(ValueError, match="var: cannot compute over an empty set"):
        ops.var(mk.tensor(numpy.ones((3, 0))), axis=1)


# ------------------------------------------------------------------ logsumexp
def test_logsumexp_is_stable_for_large_magnitudes():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = ops.logsumexp(mk.tensor([1000.0, 1000.0]))
        small = ops.logsumexp(mk.tensor([-1000.0, -1000.0]))
        mixed = ops.logsumexp(mk.tensor([[1000.0, -1000.0], [-1000.0, -numpy.inf]]), axis=1)
        x = mk.tensor([1000.0, -1000.0, 999.0], requires_grad=True)
        ops.logsumexp(x).backward()
    assert big.item() == pytest.approx(1000.0 + numpy.log(2.0))
    assert small.item() == pytest.approx(-1000.0 + numpy.log(2.0))
    numpy.testing.assert_allclose(mixed.numpy(), [1000.0, -1000.0])
    expected = numpy.exp(numpy.array([0.0, -2000.0, -1.0])) / (1.0 + numpy.exp(-1.0))
    numpy.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)



def test_logsumexp_over_an_empty_axis_is_minus_inf():
    # log of an empty sum (0): Keras 3's -inf (NumPy and torch agree); it was refused
    x = mk.Tensor(numpy.zeros((2, 3, 0), "float32"), requires_grad=True)
    out = ops.logsumexp(x)
    assert out.shape == () and out.dtype == numpy.float32 and out.item() == -numpy.inf
    numpy.testing.assert_array_equal(ops.logsumexp(x, axis=2).numpy(), numpy.full((2, 3), -numpy.inf, "float32"))
    ops.sum(ops.logsumexp(x, axis=-1)).backward()
    assert x.grad.shape == (2, 3, 0)
    assert ops.logsumexp(numpy.zeros((0, 3), "float32"), axis=1).shape == (0,)  # an empty batch, as before

def test_logsumexp_gradient_is_softmax(rng):
    data = rng.normal(size=(3, 5))
    x = mk.tensor(data, requires_grad=True)
    ops.logsumexp(x, axis=-1).sum().backward()
    softmax = numpy.exp(data) / numpy.exp(data).sum(axis=-1, keepdims=True)
    numpy.testing.assert_allclose(x.grad.numpy(), softmax, rtol=1e-12)


def test_logsumexp_of_all_minus_infinity_is_minus_infinity():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = ops.logsumexp(mk.tensor([-numpy.inf, -numpy.inf]))
    assert y.item() == -numpy.inf


# -------------------------------------------------------------- argmax/argmin
def test_argmax_argmin_values_and_dtype():
    data = numpy.array([[1.0, 7.0, 3.0], [9.0, 0.0, 9.0]])
    x = mk.tensor(data, requires_grad=True)
    for op, reference in [(ops.argmax, numpy.argmax), (ops.argmin, numpy.argmin)]:
        for axis in [0, 1, -1]:
            y = op(x, axis=axis)
            assert y.dtype == numpy.int32  # Keras's argmax dtype (issue 24)
            assert not y.requires_grad
            numpy.testing.assert_array_equal(y.numpy(), reference(data, axis=axis))
    assert ops.argmax(x).item() == 3  # axis None flattens; the first of the tied 9s wins
    assert ops.argmin(x).item() == 4
    assert ops.argmax(x, axis=1, keepdims=True).shape == (2, 1)
    assert ops.argmax(x, keepdims=True).shape == (1, 1)
    assert x.argmax(axis=0).tolist() == [1, 0, 1]


def test_argmax_of_integers():
    assert ops.argmax(mk.tensor(numpy.array([3, 8, 1], dtype=numpy.int32))).item() == 1


def test_argmax_errors():
    x = mk.tensor(numpy.ones((2, 3)))
    with pytest.raises(TypeError, match=r"argmax: axis must be an int or None, received \(0, 1\)"):
        ops.argmax(x, axis=(0, 1))
    with pytest.raises(ValueError, match="argmin: cannot search an empty tensor"):
        ops.argmin(mk.tensor(numpy.ones((0, 3))))
    with pytest.raises(ValueError, match="argmax: cannot search an axis of size 0"):
        ops.argmax(mk.tensor(numpy.ones((2, 0))), axis=1)


# ------------------------------------------------------------------- methods
def test_tensor_methods(rng):
    data = rng.normal(size=(2, 3))
    x = mk.tensor(data)
    numpy.testing.assert_allclose(x.max(axis=1).numpy(), data.max(axis=1))
    numpy.testing.assert_allclose(x.min().numpy(), data.min())
    numpy.testing.assert_allclose(x.prod(axis=0).numpy(), data.prod(axis=0))
    numpy.testing.assert_allclose(x.var(axis=-1, keepdims=True).numpy(), data.var(axis=-1, keepdims=True))
    numpy.testing.assert_allclose(x.logsumexp().numpy(), _logsumexp_reference(data))


def test_bad_input_type_names_the_op():
    with pytest.raises(TypeError, match="max: expected a Tensor"):
        ops.max("abc")
