"""Tests for minikeras/ops/nn/activations.py."""
import math
import warnings

import numpy
import pytest

import minikeras as mk
from minikeras import ops
from tests.ops.op_check import check_op

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
_erf = numpy.vectorize(math.erf, otypes=[numpy.float64])


def _sigmoid(x):
    return 0.5 * (1.0 + numpy.tanh(0.5 * x))


def _elu(x, alpha=1.0):
    return numpy.where(x > 0, x, alpha * numpy.expm1(numpy.minimum(x, 0.0)))


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + numpy.tanh(numpy.sqrt(2.0 / numpy.pi) * (x + 0.044715 * x**3)))


def _hard_sigmoid(x):
    return numpy.clip(x + 3.0, 0.0, 6.0) / 6.0


# name -> (op, float64 NumPy reference, kinks that random inputs must avoid)
CASES = {
    "relu": (ops.relu, lambda x: numpy.maximum(x, 0.0), [0.0]),
    "relu6": (ops.relu6, lambda x: numpy.clip(x, 0.0, 6.0), [0.0, 6.0]),
    "leaky_relu": (ops.leaky_relu, lambda x: numpy.where(x > 0, x, 0.2 * x), [0.0]),
    "leaky_relu_0.3": (lambda x: ops.leaky_relu(x, negative_slope=0.3), lambda x: numpy.where(x > 0, x, 0.3 * x), [0.0]),
    "leaky_relu_negative": (lambda x: ops.leaky_relu(x, -0.5), lambda x: numpy.where(x > 0, x, -0.5 * x), [0.0]),
    "elu": (ops.elu, _elu, [0.0]),
    "elu_2": (lambda x: ops.elu(x, alpha=2.0), lambda x: _elu(x, 2.0), [0.0]),
    "elu_negative_alpha": (lambda x: ops.elu(x, alpha=-0.5), lambda x: _elu(x, -0.5), [0.0]),
    "selu": (ops.selu, lambda x: SELU_SCALE * _elu(x, SELU_ALPHA), [0.0]),
    "gelu": (ops.gelu, lambda x: 0.5 * x * (1.0 + _erf(x / numpy.sqrt(2.0))), []),
    "gelu_tanh": (lambda x: ops.gelu(x, approximate=True), _gelu_tanh, []),
    "sigmoid": (ops.sigmoid, _sigmoid, []),
    "tanh": (ops.tanh, numpy.tanh, []),
    "softplus": (ops.softplus, lambda x: numpy.log1p(numpy.exp(x)), []),
    "log_sigmoid": (ops.log_sigmoid, lambda x: -numpy.log1p(numpy.exp(-x)), []),
    "softsign": (ops.softsign, lambda x: x / (1.0 + numpy.abs(x)), []),
    "silu": (ops.silu, lambda x: x * _sigmoid(x), []),
    "hard_sigmoid": (ops.hard_sigmoid, _hard_sigmoid, [-3.0, 3.0]),
    "hard_silu": (ops.hard_silu, lambda x: x * _hard_sigmoid(x), [-3.0, 3.0]),
}


def _inputs(rng, shape, kinks, scale=4.0):
    x = rng.uniform(-scale, scale, size=shape)
    for kink in kinks:
        near = numpy.abs(x - kink) < 0.05
        x[near] = kink + 0.1
    return x


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("shape", [(4, 5), (2, 1, 3)])
def test_forward_and_gradient(name, shape, rng):
    op, reference, kinks = CASES[name]
    scale = 8.0 if name.startswith(("relu6", "hard")) else 4.0  # reach every piece
    check_op(op, reference, [_inputs(rng, shape, kinks, scale)])


@pytest.mark.parametrize("name", sorted(CASES))
def test_scalar_input(name):
    op, reference, _ = CASES[name]
    check_op(op, reference, [numpy.array(0.7)])


@pytest.mark.parametrize("name", sorted(CASES))
def test_large_magnitudes_are_finite_and_warning_free(name):
    op, reference, _ = CASES[name]
    values = numpy.array([-1000.0, -100.0, -20.0, 20.0, 100.0, 1000.0])
    for dtype in (numpy.float32, numpy.float64):
        x = mk.tensor(values.astype(dtype), requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y = op(x)
            y.sum().backward()
        assert numpy.all(numpy.isfinite(y.numpy())), name
        assert numpy.all(numpy.isfinite(x.grad.numpy())), name
        assert y.dtype == dtype and x.grad.dtype == dtype


def test_large_magnitude_values():
    x = mk.tensor([-1000.0, -40.0, 40.0, 1000.0], dtype="float64")
    numpy.testing.assert_allclose(ops.sigmoid(x).numpy(), [0.0, 4.248354255291589e-18, 1.0, 1.0], rtol=1e-12)
    numpy.testing.assert_allclose(ops.softplus(x).numpy(), [0.0, 4.248354255291589e-18, 40.0, 1000.0], rtol=1e-12)
    numpy.testing.assert_allclose(ops.log_sigmoid(x).numpy(), [-1000.0, -40.0, -4.248354255291589e-18, 0.0], rtol=1e-12)
    numpy.testing.assert_allclose(ops.silu(x).numpy(), [0.0, -40 * 4.248354255291589e-18, 40.0, 1000.0], rtol=1e-12)
    numpy.testing.assert_allclose(ops.gelu(x).numpy(), [0.0, 0.0, 40.0, 1000.0])
    numpy.testing.assert_allclose(ops.elu(x).numpy(), [-1.0, -1.0, 40.0, 1000.0])


def test_gelu_matches_keras_documented_values():
    x = mk.tensor([-3.0, -1.0, 0.0, 1.0, 3.0])
    numpy.testing.assert_allclose(ops.gelu(x).numpy(), [-0.00404951, -0.15865529, 0.0, 0.8413447, 2.9959507], atol=1e-6)
    numpy.testing.assert_allclose(ops.gelu(x, approximate=True).numpy(),
                                  [-0.00363752, -0.15880796, 0.0, 0.841192, 2.9963627], atol=1e-6)


def test_gelu_exact_gradient_in_the_tails(rng):
    # The left tail uses erfc, so the derivative stays accurate there too.
    check_op(ops.gelu, CASES["gelu"][1], [numpy.array([-8.0, -5.5, -4.5, -1.0, 0.3, 4.5, 8.0])])


def test_hard_sigmoid_is_keras3_relu6_form():
    x = mk.tensor([-4.0, -3.0, -1.5, 0.0, 1.5, 3.0, 4.0], requires_grad=True)
    y = ops.hard_sigmoid(x)
    numpy.testing.assert_allclose(y.numpy(), [0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.0])
    y.sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy(), [0, 0, 1 / 6, 1 / 6, 1 / 6, 0, 0], rtol=1e-6)


def test_hard_silu_gradient_pieces():
    x = mk.tensor([-4.0, -2.0, 0.0, 1.5, 4.0], dtype="float64", requires_grad=True)
    ops.hard_silu(x).sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy(), [0.0, -1 / 6, 0.5, 1.0, 1.0])


def test_relu_gradient_at_zero_and_its_saved_output():
    x = mk.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    y = ops.relu(x)
    # Backward keeps the output (already alive for the next layer), not the input.
    assert len(y._node.saved) == 1 and y._node.saved[0] is y.data
    y.sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 1.0])


@pytest.mark.parametrize("op", [ops.relu, ops.sigmoid, ops.tanh, ops.relu6, ops.elu, ops.hard_sigmoid])
def test_activations_saving_the_output_keep_nothing_else(op):
    x = mk.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    y = op(x)
    assert all(saved is y.data or saved is None for saved in y._node.saved)


def test_nothing_is_saved_without_grad():
    x = mk.tensor([-1.0, 0.5])
    for name, (op, _, _) in CASES.items():
        y = op(x)
        assert y._node is None and not y.requires_grad, name


def test_leaky_relu_default_slope_is_keras3_02():
    y = ops.leaky_relu(mk.tensor([-10.0, 10.0]))
    numpy.testing.assert_allclose(y.numpy(), [-2.0, 10.0])


def test_selu_constants():
    y = ops.selu(mk.tensor([-1000.0, 1.0], dtype="float64"))
    numpy.testing.assert_allclose(y.numpy(), [-SELU_SCALE * SELU_ALPHA, SELU_SCALE])


def test_aliases():
    assert ops.swish is ops.silu
    assert ops.hard_swish is ops.hard_silu


def test_integer_inputs():
    x = mk.tensor(numpy.array([-3, 0, 8], dtype=numpy.int32))
    assert ops.relu(x).dtype == numpy.int32
    numpy.testing.assert_array_equal(ops.relu(x).numpy(), [0, 0, 8])
    numpy.testing.assert_array_equal(ops.relu6(x).numpy(), [0, 0, 6])
    for name in ["sigmoid", "tanh", "gelu", "elu", "softplus", "leaky_relu", "silu"]:
        y = getattr(ops, name)(x)
        assert y.dtype == numpy.float32 and not y.requires_grad, name


def test_tensor_methods():
    x = mk.tensor([-1.0, 1.0])
    numpy.testing.assert_allclose(x.relu().numpy(), [0.0, 1.0])
    numpy.testing.assert_allclose(x.sigmoid().numpy(), _sigmoid(numpy.array([-1.0, 1.0])), rtol=1e-6)
    numpy.testing.assert_allclose(x.tanh().numpy(), numpy.tanh([-1.0, 1.0]), rtol=1e-6)


def test_argument_errors():
    x = mk.tensor([1.0])
    with pytest.raises(TypeError, match="leaky_relu: negative_slope must be a number, received str"):
        ops.leaky_relu(x, negative_slope="0.2")
    with pytest.raises(ValueError, match="elu: alpha must be finite, received nan"):
        ops.elu(x, alpha=float("nan"))
    with pytest.raises(TypeError, match="gelu: approximate must be a bool, received str 'tanh'"):
        ops.gelu(x, approximate="tanh")
    with pytest.raises(TypeError, match="relu: expected a Tensor"):
        ops.relu([1.0, 2.0])


TORCH_FUNCTIONS = {
    "relu": lambda F, t: F.relu(t),
    "relu6": lambda F, t: F.relu6(t),
    "leaky_relu": lambda F, t: F.leaky_relu(t, 0.2),
    "elu": lambda F, t: F.elu(t),
    "selu": lambda F, t: F.selu(t),
    "gelu": lambda F, t: F.gelu(t),
    "gelu_tanh": lambda F, t: F.gelu(t, approximate="tanh"),
    "sigmoid": lambda F, t: F.sigmoid(t),
    "tanh": lambda F, t: F.tanh(t),
    "softplus": lambda F, t: F.softplus(t),
    "log_sigmoid": lambda F, t: F.logsigmoid(t),
    "softsign": lambda F, t: F.softsign(t),
    "silu": lambda F, t: F.silu(t),
    "hard_sigmoid": lambda F, t: F.relu6(t + 3.0) / 6.0,
    "hard_silu": lambda F, t: t * F.relu6(t + 3.0) / 6.0,
}


@pytest.mark.parametrize("name", sorted(TORCH_FUNCTIONS))
def test_matches_torch(name):
    torch = pytest.importorskip("torch")
    values = numpy.concatenate([numpy.linspace(-9.0, 9.0, 181), [-50.0, 50.0, -700.0, 700.0]])
    values = values[numpy.abs(numpy.abs(values) - 3.0) > 1e-9]
    values = values[(numpy.abs(values) > 1e-9) & (numpy.abs(values - 6.0) > 1e-9)]
    t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    expected = TORCH_FUNCTIONS[name](torch.nn.functional, t)
    expected.sum().backward()
    x = mk.tensor(values, requires_grad=True)
    y = CASES[name][0](x)
    y.sum().backward()
    numpy.testing.assert_allclose(y.numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-14)
    numpy.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-14)


@pytest.mark.cpu_only(reason="splits relu over the CPU op threads")
def test_relu_split_over_threads_matches_numpy(monkeypatch):
    from minikeras.backend import threads, tuning

    previous = threads.num_threads()
    threads.set_num_threads(2)
    monkeypatch.setattr(tuning, "BLOCK_ELEMENTS", 16)
    try:
        base = numpy.random.default_rng(0).standard_normal((9, 6, 4)).astype(numpy.float32)
        x = mk.Tensor(base.transpose(1, 0, 2), requires_grad=True)  # not contiguous
        out = mk.ops.relu(x)
        numpy.testing.assert_array_equal(out.numpy(), numpy.maximum(base.transpose(1, 0, 2), 0))
        out.sum().backward()  # a broadcast gradient of ones
        numpy.testing.assert_array_equal(x.grad.numpy(), (base.transpose(1, 0, 2) > 0).astype(numpy.float32))
    finally:
        threads.set_num_threads(previous)
