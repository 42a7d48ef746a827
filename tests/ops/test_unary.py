"""Tests for minikeras/ops/math/unary.py: elementwise math functions."""
import math
import warnings

import numpy
import pytest

import minikeras as mk
from minikeras import ops
from tests.ops.op_check import check_op

_erf_reference = numpy.vectorize(math.erf, otypes=[numpy.float64])


def _positive(rng, shape):
    return rng.uniform(0.2, 3.0, size=shape)


def _any(rng, shape):
    return rng.normal(size=shape) * 2.0


def _away_from_zero(rng, shape):
    values = rng.uniform(0.1, 2.0, size=shape)
    return values * rng.choice([-1.0, 1.0], size=shape)


# (op, NumPy reference, input maker)
CASES = {
    "abs": (ops.abs, numpy.abs, _away_from_zero),
    "exp": (ops.exp, numpy.exp, _any),
    "log": (ops.log, numpy.log, _positive),
    "log1p": (ops.log1p, numpy.log1p, lambda rng, shape: rng.uniform(-0.8, 3.0, size=shape)),
    "expm1": (ops.expm1, numpy.expm1, _any),
    "sqrt": (ops.sqrt, numpy.sqrt, _positive),
    "square": (ops.square, numpy.square, _any),
    "rsqrt": (ops.rsqrt, lambda x: 1.0 / numpy.sqrt(x), _positive),
    "reciprocal": (ops.reciprocal, lambda x: 1.0 / x, _away_from_zero),
    "sin": (ops.sin, numpy.sin, _any),
    "cos": (ops.cos, numpy.cos, _any),
    "erf": (ops.erf, _erf_reference, _any),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("shape", [(3, 4), (2, 1, 3), ()])
def test_forward_and_gradient(name, shape, rng):
    op, reference, make = CASES[name]
    check_op(op, reference, [make(rng, shape)])


def test_erf_matches_math_erf_to_double_precision():
    x = numpy.concatenate([numpy.linspace(-7.0, 7.0, 20001), [-30.0, -4.0, -0.46875, 0.46875, 4.0, 30.0]])
    got = ops.erf(mk.tensor(x)).numpy()
    numpy.testing.assert_allclose(got, _erf_reference(x), rtol=1e-15, atol=3e-16)
    assert numpy.all(numpy.abs(got) <= 1.0)


def test_erf_float32_is_close_and_stays_float32():
    x = numpy.linspace(-6, 6, 20001).astype(numpy.float32)
    got = ops.erf(mk.tensor(x))
    assert got.dtype == numpy.float32
    numpy.testing.assert_allclose(got.numpy(), _erf_reference(x.astype(numpy.float64)), atol=5e-7)
    assert numpy.all(numpy.abs(got.numpy()) <= 1.0)


def test_erf_extremes():
    got = ops.erf(mk.tensor([numpy.inf, -numpy.inf, 0.0, 100.0, -100.0])).numpy()
    numpy.testing.assert_array_equal(got, [1.0, -1.0, 0.0, 1.0, -1.0])
    assert numpy.isnan(ops.erf(mk.tensor([numpy.nan])).numpy()[0])


def _no_warnings(function):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return function()


def test_log_domain_is_ieee_and_silent():
    x = mk.tensor([0.0, -1.0, 1.0])
    numpy.testing.assert_array_equal(_no_warnings(lambda: ops.log(x)).numpy(), [-numpy.inf, numpy.nan, 0.0])
    numpy.testing.assert_array_equal(_no_warnings(lambda: ops.log1p(mk.tensor([-1.0, -2.0]))).numpy(), [-numpy.inf, numpy.nan])


def test_sqrt_domain_and_gradient_at_zero():
    x = mk.tensor([0.0, -1.0, 4.0], requires_grad=True)
    y = _no_warnings(lambda: ops.sqrt(x))
    numpy.testing.assert_array_equal(y.numpy(), [0.0, numpy.nan, 2.0])
    _no_warnings(lambda: y.backward(numpy.ones(3)))
    grad = x.grad.numpy()
    assert grad[0] == numpy.inf  # like TensorFlow and PyTorch
    assert grad[2] == pytest.approx(0.25)


def test_exp_overflow_is_inf_without_warning():
    y = _no_warnings(lambda: ops.exp(mk.tensor([1000.0, -1000.0])))
    numpy.testing.assert_array_equal(y.numpy(), [numpy.inf, 0.0])
    y = _no_warnings(lambda: ops.expm1(mk.tensor([1000.0, -1000.0])))
    numpy.testing.assert_array_equal(y.numpy(), [numpy.inf, -1.0])


def test_reciprocal_and_rsqrt_at_zero_are_inf():
    numpy.testing.assert_array_equal(_no_warnings(lambda: ops.reciprocal(mk.tensor([0.0]))).numpy(), [numpy.inf])
    numpy.testing.assert_array_equal(_no_warnings(lambda: ops.rsqrt(mk.tensor([0.0]))).numpy(), [numpy.inf])


def test_abs_gradient_at_zero_is_zero():
    x = mk.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    ops.abs(x).sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [-1.0, 0.0, 1.0])


@pytest.mark.parametrize("op", [ops.abs, ops.square, ops.sign])
def test_integer_results_keep_integer_dtype(op):
    x = mk.tensor(numpy.array([-3, 0, 2], dtype=numpy.int32))
    y = op(x)
    assert y.dtype == numpy.int32
    numpy.testing.assert_array_equal(y.numpy(), {ops.abs: [3, 0, 2], ops.square: [9, 0, 4], ops.sign: [-1, 0, 1]}[op])
    assert not y.requires_grad


@pytest.mark.parametrize("name", ["exp", "log1p", "expm1", "sqrt", "sin", "cos", "erf"])
def test_integer_input_computes_in_float32(name):
    op, reference, _ = CASES[name]
    y = op(mk.tensor(numpy.array([0, 1, 2], dtype=numpy.int64)))
    assert y.dtype == numpy.float32
    assert not y.requires_grad
    numpy.testing.assert_allclose(y.numpy(), reference(numpy.array([0.0, 1.0, 2.0])), rtol=1e-6)


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(TypeError, match="Only floating-point"):
        mk.Tensor(numpy.array([1, 2]), requires_grad=True)


def test_sign_is_not_differentiable():
    x = mk.tensor([-2.0, 0.0, 5.0], requires_grad=True)
    s = ops.sign(x)
    numpy.testing.assert_array_equal(s.numpy(), [-1.0, 0.0, 1.0])
    assert s.dtype == numpy.float32
    assert not s.requires_grad
    # Used as a constant factor, it lets the gradient through the other factor only.
    (s * x).sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [-1.0, 0.0, 1.0])


def test_float32_stays_float32():
    x = mk.tensor(numpy.array([0.5, 1.5], dtype=numpy.float32), requires_grad=True)
    for name, (op, _, _) in CASES.items():
        y = op(x)
        assert y.dtype == numpy.float32, name
        y.sum().backward()
        assert x.grad.dtype == numpy.float32, name


def test_numbers_become_float32_tensors():
    y = ops.exp(1.0)
    assert isinstance(y, mk.Tensor)
    assert y.dtype == numpy.float32
    assert y.item() == pytest.approx(math.e, rel=1e-6)


def test_tensor_methods_and_operators():
    x = mk.tensor([-4.0, 9.0])
    numpy.testing.assert_array_equal(abs(x).numpy(), [4.0, 9.0])
    numpy.testing.assert_array_equal(x.abs().numpy(), [4.0, 9.0])
    numpy.testing.assert_allclose(x.square().numpy(), [16.0, 81.0])
    numpy.testing.assert_allclose(abs(x).sqrt().numpy(), [2.0, 3.0])
    numpy.testing.assert_allclose(abs(x).log().exp().numpy(), [4.0, 9.0], rtol=1e-6)


@pytest.mark.parametrize("bad", ["text", [1.0, 2.0], None])
def test_bad_input_type_names_the_op(bad):
    with pytest.raises(TypeError, match="exp: expected a Tensor"):
        ops.exp(bad)
    with pytest.raises(TypeError, match="sqrt: expected a Tensor"):
        ops.sqrt(bad)


def test_chain_gradient():
    rng = numpy.random.default_rng(1)
    x = rng.uniform(0.5, 2.0, size=(3, 2))
    check_op(lambda t: ops.log(ops.sqrt(t) + ops.square(ops.sin(t))),
             lambda a: numpy.log(numpy.sqrt(a) + numpy.sin(a) ** 2), [x])
