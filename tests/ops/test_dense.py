"""ops.dense and ops.bias_activation: NumPy references, float64 gradients, errors."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from minikeras.autograd import gradcheck
from tests.ops.op_check import check_op


def np_dense(x, kernel, bias=None, relu=False):
    out = x @ kernel
    if bias is not None:
        out = out + bias
    return numpy.maximum(out, 0) if relu else out


def _away_from_kink(x, kernel, bias):
    # Finite differences across relu's kink are meaningless: shift the bias
    # so no pre-activation lies within 0.05 of zero.
    pre = x @ kernel + bias
    return bias + numpy.where(numpy.abs(pre).min(axis=tuple(range(pre.ndim - 1))) < 0.05, 0.2, 0.0)


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 3), (1, 2, 2, 3)])
@pytest.mark.parametrize("relu", [False, True])
def test_dense_with_bias(rng, shape, relu):
    x, kernel, bias = rng.normal(size=shape), rng.normal(size=(3, 5)), rng.normal(size=5)
    bias = _away_from_kink(x, kernel, bias)
    check_op(lambda t, k, b: ops.dense(t, k, b, relu=relu), lambda a, k, b: np_dense(a, k, b, relu), [x, kernel, bias])


@pytest.mark.parametrize("relu", [False, True])
def test_dense_without_bias(rng, relu):
    x, kernel = rng.normal(size=(6, 4)), rng.normal(size=(4, 2))
    check_op(lambda t, k: ops.dense(t, k, relu=relu), lambda a, k: np_dense(a, k, None, relu), [x, kernel])


def test_dense_gradient_only_for_the_kernel(rng):
    x = mk.tensor(rng.normal(size=(3, 4)))
    kernel = mk.Tensor(rng.normal(size=(4, 2)), requires_grad=True)
    assert gradcheck(lambda k: ops.dense(x, k), [kernel])


def test_dense_errors(rng):
    x = rng.normal(size=(2, 3))
    with pytest.raises(ValueError, match=r"dense: expected x .* received x \(2, 3\) and kernel \(4, 2\)"):
        ops.dense(x, rng.normal(size=(4, 2)))
    with pytest.raises(ValueError, match=r"dense: bias must have shape \(2,\)"):
        ops.dense(x, rng.normal(size=(3, 2)), rng.normal(size=3))
    with pytest.raises(TypeError, match="dense"):
        ops.dense(numpy.ones((2, 3), bool), rng.normal(size=(3, 2)))


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
def test_bias_activation(rng, relu, with_bias):
    x = rng.normal(size=(2, 3, 4))
    x = x + numpy.sign(x) * 0.1  # away from relu's kink
    bias = rng.normal(size=4) * 0.01
    # The op writes into x's buffer (a convolution's fresh output): give it
    # a fresh Tensor each call, as a convolution does.
    if with_bias:
        check_op(lambda t, b: ops.bias_activation(t * 1.0, b, relu=relu),
                 lambda a, b: np_dense(a, numpy.eye(4), b, relu), [x, bias])
    else:
        check_op(lambda t: ops.bias_activation(t * 1.0, relu=relu), lambda a: np_dense(a, numpy.eye(4), None, relu),
                 [x])


def test_bias_activation_errors(rng):
    with pytest.raises(ValueError, match=r"bias_activation: bias must have shape \(channels,\)"):
        ops.bias_activation(rng.normal(size=(2, 3)), rng.normal(size=4))
