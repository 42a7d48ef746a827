"""GradientTape (minikeras/autograd/tape.py)."""
import numpy
import pytest

import minikeras as mk


def test_gradient_matches_the_analytic_value_and_leaves_grad_untouched():
    w = mk.Variable(numpy.array([1.0, -2.0]))
    b = mk.Variable(numpy.array([0.5]))
    w.grad = mk.tensor([9.0, 9.0])  # a stale gradient the tape must not mix in or lose
    with mk.GradientTape() as tape:
        loss = (w * w).sum() * 3.0 + b.sum()
    grad_w, grad_b = tape.gradient(loss, [w, b])
    numpy.testing.assert_allclose(grad_w.numpy(), [6.0, -12.0])
    numpy.testing.assert_allclose(grad_b.numpy(), [1.0])
    numpy.testing.assert_allclose(w.grad.numpy(), [9.0, 9.0])
    assert b.grad is None


def test_structure_unconnected_sources_and_watch():
    x = mk.tensor([2.0])
    unused = mk.Variable(numpy.ones(1))
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = x * x * x
    grads = tape.gradient(y, {"x": x, "unused": unused})
    assert set(grads) == {"x", "unused"} and grads["unused"] is None
    numpy.testing.assert_allclose(grads["x"].numpy(), [12.0])


def test_persistent_tape_allows_several_calls_and_plain_tape_refuses():
    w = mk.Variable(numpy.array([3.0]))
    with mk.GradientTape(persistent=True) as tape:
        loss = (w * w).sum()
    first = tape.gradient(loss, w).numpy().copy()
    second = tape.gradient(loss, w).numpy()
    numpy.testing.assert_allclose(first, second)
    with mk.GradientTape() as once:
        loss = (w * w).sum()
    once.gradient(loss, [w])
    with pytest.raises(RuntimeError, match="only be called once"):
        once.gradient(loss, [w])


def test_sources_must_be_tensors():
    with mk.GradientTape() as tape:
        loss = (mk.Variable(numpy.ones(1)) * 2).sum()
    with pytest.raises(TypeError, match="sources must be Tensors"):
        tape.gradient(loss, [numpy.ones(1)])


def test_training_a_layer_with_the_tape_and_apply_gradients():
    layer = mk.layers.Dense(1)
    x = numpy.random.default_rng(0).normal(size=(32, 3)).astype("float32")
    y = x @ numpy.array([[1.0], [2.0], [-1.0]], "float32")
    optimizer = mk.optimizers.SGD(0.1)
    losses = []
    for _ in range(30):
        with mk.GradientTape() as tape:
            loss = ((layer(x) - y) ** 2).mean()
        grads = tape.gradient(loss, layer.trainable_weights)
        optimizer.apply_gradients(zip(grads, layer.trainable_weights))
        losses.append(float(loss.item()))
    assert losses[-1] < 0.05 * losses[0]


def test_non_scalar_target_is_differentiated_as_its_sum_like_tensorflow():
    # tf: tape.gradient(x * x, x) == 2 * x (output_gradients of ones).
    x = mk.Variable(numpy.array([[1.0, -2.0], [3.0, 0.5]]))
    with mk.GradientTape() as tape:
        y = x * x
    numpy.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * x.numpy())
    # A list of targets: the gradient of the sum of all of them (the graph is shared).
    with mk.GradientTape() as tape:
        square = x * x
        both = [square, square * 3.0]
    numpy.testing.assert_allclose(tape.gradient(both, x).numpy(), 8 * x.numpy())
    # output_gradients still weight the elements.
    with mk.GradientTape() as tape:
        y = x * 2.0
    weights = numpy.array([[1.0, 0.0], [2.0, -1.0]])
    numpy.testing.assert_allclose(tape.gradient(y, x, output_gradients=weights).numpy(), 2 * weights)


def test_tensor_backward_stays_strict_for_non_scalars():
    x = mk.Variable(numpy.ones(3))
    with pytest.raises(RuntimeError, match="one element"):
        (x * 2).backward()
