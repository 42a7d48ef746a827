"""The autograd engine: accumulation, graph freeing, broadcasting, no_grad."""
import threading

import numpy
import pytest

import minikeras as mk
from minikeras.autograd import Function, gradcheck


def test_gradient_accumulates_over_repeated_uses():
    x = mk.Tensor(numpy.array([1.0, 2.0, 3.0]), requires_grad=True)
    y = (x * x + x * 3.0).sum()
    y.backward()
    numpy.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy() + 3.0)


def test_gradients_accumulate_across_backward_calls():
    x = mk.Tensor(numpy.array([1.0, -2.0]), requires_grad=True)
    (x * 2.0).sum().backward()
    (x * 3.0).sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0])


def test_backward_frees_graph_unless_retained():
    x = mk.Tensor(numpy.array([1.0, 2.0]), requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    numpy.testing.assert_allclose(x.grad.numpy(), 4 * x.numpy())
    with pytest.raises(RuntimeError, match=r"second time \(op Sum\)"):
        y.backward()


def test_backward_releases_saved_arrays():
    x = mk.Tensor(numpy.ones(3), requires_grad=True)
    y = x * x
    node = y._node
    assert node.saved != ()
    y.sum().backward()
    assert node.saved == ()


def test_broadcast_gradients_are_summed_to_input_shape():
    a = mk.Tensor(numpy.random.default_rng(0).normal(size=(4, 3)), requires_grad=True)
    b = mk.Tensor(numpy.random.default_rng(1).normal(size=(1, 3)), requires_grad=True)
    c = mk.Tensor(numpy.random.default_rng(2).normal(size=(3,)), requires_grad=True)
    ((a * b) + c).sum().backward()
    assert b.grad.shape == (1, 3) and c.grad.shape == (3,)
    numpy.testing.assert_allclose(b.grad.numpy(), a.numpy().sum(axis=0, keepdims=True))
    numpy.testing.assert_allclose(c.grad.numpy(), numpy.full(3, 4.0))
    assert gradcheck(lambda a, b, c: a * b + c, [a, b, c])


def test_non_scalar_backward_needs_gradient():
    x = mk.Tensor(numpy.ones((2, 2)), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"one element.*\(2, 2\)"):
        (x * 2.0).backward()
    (x * 2.0).backward(numpy.full((2, 2), 0.5))
    numpy.testing.assert_allclose(x.grad.numpy(), numpy.ones((2, 2)))
    with pytest.raises(ValueError, match="gradient has shape"):
        (x * 2.0).backward(numpy.ones(3))


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        mk.tensor([1.0, 2.0]).sum().backward()


def test_no_grad_records_nothing_and_is_thread_local():
    x = mk.Tensor(numpy.ones(2), requires_grad=True)
    seen = {}

    def worker():
        seen["other_thread"] = (x * 2.0).requires_grad

    with mk.no_grad():
        y = x * 2.0
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        with mk.enable_grad():
            z = x * 2.0
    assert not y.requires_grad and y._node is None
    assert seen["other_thread"] is True
    assert z.requires_grad


def test_detach_cuts_the_graph():
    x = mk.Tensor(numpy.array([3.0]), requires_grad=True)
    y = (x * x).detach() * x
    y.sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy(), [9.0])


def test_integer_tensors_never_require_grad():
    with pytest.raises(TypeError, match="int64"):
        mk.Tensor(numpy.arange(3), requires_grad=True)
    with pytest.raises(TypeError, match="floating"):
        mk.tensor([1, 2]).requires_grad_()


def test_python_operators_with_numbers_and_arrays():
    x = mk.Tensor(numpy.array([1.0, 2.0], dtype=numpy.float32), requires_grad=True)
    y = 2.0 - x
    z = numpy.array([1.0, 1.0], dtype=numpy.float32) / (1.0 + x) + x**2 + 3 * x - (-x)
    assert y.dtype == numpy.float32 and z.dtype == numpy.float32
    numpy.testing.assert_allclose(y.numpy(), [1.0, 0.0])
    z.sum().backward()
    expected = -1 / (1 + x.numpy()) ** 2 + 2 * x.numpy() + 3 + 1
    numpy.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def test_matmul_and_reflected_matmul():
    a = numpy.random.default_rng(0).normal(size=(2, 3))
    b = numpy.random.default_rng(1).normal(size=(3, 4))
    ta = mk.Tensor(a, requires_grad=True)
    numpy.testing.assert_allclose((ta @ b).numpy(), a @ b)
    numpy.testing.assert_allclose((a @ mk.tensor(b)).numpy(), a @ b)


def test_multi_output_function_with_unused_output():
    class SplitTwo(Function):
        def forward(self, x):
            return x[:2] * 1.0, x[2:] * 1.0

        def backward(self, grad_first, grad_second):
            return self.device.xp.concatenate([grad_first, grad_second])

    x = mk.Tensor(numpy.arange(5.0), requires_grad=True)
    first, second = SplitTwo().apply(x)
    (first * 3.0).sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy(), [3, 3, 0, 0, 0])


def test_long_chain_does_not_recurse():
    x = mk.Tensor(numpy.ones(1), requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    y.sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy(), [1.0])


def test_gradcheck_detects_a_wrong_gradient():
    class WrongSquare(Function):
        def forward(self, x):
            self.save_for_backward(x)
            return x * x

        def backward(self, grad):
            (x,) = self.saved
            return grad * x  # should be 2x

    x = mk.Tensor(numpy.array([0.5, 1.5]), requires_grad=True)
    with pytest.raises(AssertionError, match="gradcheck failed"):
        gradcheck(lambda t: WrongSquare().apply(t), [x])


def test_float32_stays_float32_and_python_floats_default_to_float32():
    assert mk.tensor([1.0, 2.0]).dtype == numpy.float32
    assert mk.tensor(numpy.array([1.0])).dtype == numpy.float64
    x = mk.tensor(numpy.ones(3, dtype=numpy.float32), requires_grad=True)
    y = (x * 0.5 + 1.0) / 3.0
    assert y.dtype == numpy.float32
    y.sum().backward()
    assert x.grad.dtype == numpy.float32


def test_bad_shapes_raise_library_errors_naming_the_op():
    with pytest.raises(ValueError, match=r"add: shapes \(2, 3\) and \(4,\)"):
        mk.tensor(numpy.ones((2, 3))) + mk.tensor(numpy.ones(4))
    with pytest.raises(ValueError, match=r"matmul: shapes \(2, 3\) and \(4, 5\) are not aligned"):
        mk.tensor(numpy.ones((2, 3))) @ mk.tensor(numpy.ones((4, 5)))
    with pytest.raises(ValueError, match="reshape"):
        mk.tensor(numpy.ones(6)).reshape(4, 2)
    with pytest.raises(TypeError, match="not numeric"):
        mk.tensor(["a", "b"])


@pytest.mark.parametrize("order", ["consumer_first", "input_first"])
def test_diamond_graph_gets_all_branches(order):
    x = mk.Tensor(numpy.array([0.5, -1.5, 2.0]), requires_grad=True)
    e = x * x
    f = e * e
    y = (e + f) if order == "consumer_first" else (f + e)
    y.sum().backward()
    expected = 2 * x.numpy() + 4 * x.numpy() ** 3
    numpy.testing.assert_allclose(x.grad.numpy(), expected)
    assert gradcheck(lambda t: (t * t) * (t * t) + t * t, [x])
