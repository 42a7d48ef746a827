"""Tests for minikeras/ops/math/arithmetic.py and matmul.py: add, subtract,
multiply, divide, power, negative, matmul and their operators."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from minikeras.autograd import gradcheck
from tests.ops.op_check import check_op

BROADCAST_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 3), (1, 4, 1)), ((3, 1), ()), ((), (2, 3))]

BINARY = {
    "add": (ops.add, numpy.add),
    "subtract": (ops.subtract, numpy.subtract),
    "multiply": (ops.multiply, numpy.multiply),
    "divide": (ops.divide, numpy.divide),
    "power": (ops.power, numpy.power),
}


def _operands(name, rng, shape_a, shape_b):
    a = rng.uniform(0.5, 2.0, size=shape_a)  # a positive base keeps power differentiable in b
    b = rng.uniform(0.5, 2.0, size=shape_b) * (1.0 if name in ("divide", "power") else rng.choice([-1.0, 1.0], size=shape_b))
    return a, b


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES)
def test_binary_forward_and_gradient(name, shapes, rng):
    op, reference = BINARY[name]
    check_op(op, reference, list(_operands(name, rng, *shapes)))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_with_a_number_keeps_float32(name, rng):
    op, reference = BINARY[name]
    x = rng.uniform(0.5, 2.0, size=(2, 3))
    check_op(lambda t: op(t, 1.5), lambda a: reference(a, 1.5), [x])
    check_op(lambda t: op(1.5, t), lambda a: reference(1.5, a), [x])


def test_negative(rng):
    check_op(ops.negative, numpy.negative, [rng.normal(size=(2, 3))])
    x = mk.tensor([1.0, -2.0], requires_grad=True)
    (-x).sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [-1.0, -1.0])


def test_power_with_number_exponents(rng):
    x = rng.uniform(0.5, 2.0, size=(3, 2))
    for exponent in (2, 3.0, 0.5, -1.5):
        check_op(lambda t: t**exponent, lambda a: a**exponent, [x])


def test_power_of_negative_base_with_integer_exponent(rng):
    x = -rng.uniform(0.5, 2.0, size=(4,))
    check_op(lambda t: ops.power(t, 3), lambda a: a**3, [x])


def test_operators_and_reflected_operators(rng):
    data = rng.uniform(0.5, 2.0, size=(2, 3)).astype(numpy.float32)
    x = mk.tensor(data)
    numpy.testing.assert_allclose((x + 1).numpy(), data + 1, rtol=1e-6)
    numpy.testing.assert_allclose((1 + x).numpy(), 1 + data, rtol=1e-6)
    numpy.testing.assert_allclose((2 - x).numpy(), 2 - data, rtol=1e-6)
    numpy.testing.assert_allclose((x - 2).numpy(), data - 2, rtol=1e-6)
    numpy.testing.assert_allclose((3 * x).numpy(), 3 * data, rtol=1e-6)
    numpy.testing.assert_allclose((2 / x).numpy(), 2 / data, rtol=1e-6)
    numpy.testing.assert_allclose((x / 2).numpy(), data / 2, rtol=1e-6)
    numpy.testing.assert_allclose((2**x).numpy(), 2**data, rtol=1e-6)
    numpy.testing.assert_allclose((x**2).numpy(), data**2, rtol=1e-6)
    numpy.testing.assert_allclose((-x).numpy(), -data, rtol=1e-6)
    numpy.testing.assert_allclose((x @ x.T).numpy(), data @ data.T, rtol=1e-5)
    numpy.testing.assert_allclose((data.T @ x).numpy(), data.T @ data, rtol=1e-5)  # numpy defers to __rmatmul__
    for y in (x + 1, 1 + x, 2 - x, 3 * x, 2 / x, 2**x, x**2, -x, x @ x.T):
        assert isinstance(y, mk.Tensor) and y.dtype == numpy.float32


def test_reflected_gradients():
    x = mk.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    (2 - x).sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [-1.0, -1.0])
    assert gradcheck(lambda t: 3.0 / t + 2.0**t, [numpy.array([0.5, 1.5])])


def test_gradient_accumulates_when_a_tensor_is_used_twice():
    x = mk.tensor([3.0], requires_grad=True)
    (x * x + x).sum().backward()
    assert x.grad.item() == 7.0


def test_broadcast_gradients_are_summed_to_the_input_shape():
    a = mk.tensor(numpy.ones((2, 3)), requires_grad=True)
    b = mk.tensor(numpy.ones((3,)), requires_grad=True)
    c = mk.tensor(numpy.ones((2, 1)), requires_grad=True)
    (a * b + c).sum().backward()
    assert b.grad.shape == (3,) and c.grad.shape == (2, 1)
    numpy.testing.assert_array_equal(b.grad.numpy(), [2.0, 2.0, 2.0])
    numpy.testing.assert_array_equal(c.grad.numpy(), [[3.0], [3.0]])


def test_integer_tensors_stay_integer_and_get_no_gradient():
    i = mk.tensor(numpy.array([1, 2], dtype=numpy.int64))
    assert (i + i).dtype == numpy.int64
    assert (i * 3).dtype == numpy.int64
    x = mk.tensor([0.5, 0.5], requires_grad=True)
    y = x * i
    assert y.dtype == numpy.float64 or y.dtype == numpy.float32
    y.sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [1.0, 2.0])
    assert i.grad is None and not i.requires_grad


@pytest.mark.parametrize("name", sorted(BINARY))
def test_shapes_that_do_not_broadcast_name_the_op(name):
    op, _ = BINARY[name]
    with pytest.raises(ValueError, match=rf"{name}: shapes \(2, 3\) and \(4,\) cannot be broadcast together"):
        op(mk.tensor(numpy.ones((2, 3))), mk.tensor(numpy.ones(4)))


def test_lists_are_refused():
    with pytest.raises(TypeError, match="add: expected a Tensor, an array or a number, received a list.*minikeras.tensor"):
        ops.add(mk.tensor(numpy.ones(3)), [1.0, 2.0, 3.0])


# ---------------------------------------------------------------------- matmul
@pytest.mark.parametrize("shapes", [
    ((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 6)), ((4,), (2, 4, 3)), ((2, 3, 4), (4,)), ((1, 4), (4, 1)),
])
def test_matmul_forward_and_gradient(shapes, rng):
    check_op(ops.matmul, numpy.matmul, [rng.normal(size=shapes[0]), rng.normal(size=shapes[1])])


def test_matmul_gradient_of_one_input_only(rng):
    a = mk.tensor(rng.normal(size=(3, 4)), requires_grad=True)
    b = mk.tensor(rng.normal(size=(4, 2)))
    (a @ b).sum().backward()
    numpy.testing.assert_allclose(a.grad.numpy(), numpy.ones((3, 2)) @ b.numpy().T, rtol=1e-6)
    assert b.grad is None


def test_matmul_errors():
    with pytest.raises(ValueError, match=r"matmul: shapes \(2, 3\) and \(4, 2\) are not aligned"):
        ops.matmul(mk.tensor(numpy.ones((2, 3))), mk.tensor(numpy.ones((4, 2))))
    with pytest.raises(ValueError, match=r"matmul: inputs must have at least 1 dimension"):
        ops.matmul(mk.tensor(numpy.ones(3)), mk.tensor(2.0))
    with pytest.raises(ValueError, match=r"matmul: batch dimensions of \(2, 3, 4\) and \(3, 4, 5\) cannot be broadcast"):
        ops.matmul(mk.tensor(numpy.ones((2, 3, 4))), mk.tensor(numpy.ones((3, 4, 5))))


# ------------------------------------------ regressions of bugs fixed in the core

def test_matmul_vector_vector_gradient(rng):
    check_op(ops.matmul, numpy.matmul, [rng.normal(size=3), rng.normal(size=3)])


def test_numpy_float64_scalar_keeps_float32():
    assert (mk.tensor(numpy.ones(2, numpy.float32)) * numpy.float64(2.0)).dtype == numpy.float32


def test_two_numbers_give_a_tensor():
    assert ops.add(2.0, 3.0).item() == 5.0


def test_string_operand_is_a_type_error_naming_the_op():
    with pytest.raises(TypeError, match="(?i)^add: "):
        ops.add(mk.tensor(numpy.ones(2)), "a")


def test_diamond_graph_gradient():
    t = mk.tensor([1.0], requires_grad=True)
    e = t * 2.0
    (e - e * 3.0).sum().backward()
    assert t.grad.item() == -4.0
