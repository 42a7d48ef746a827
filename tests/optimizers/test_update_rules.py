"""Every optimizer against the NumPy reference of its Keras 3 formula."""
import tracemalloc

import numpy as np
import pytest

import minikeras as mk
from minikeras import optimizers
from tests.optimizers.reference import ReferenceOptimizer

CASES = [
    ("sgd", dict(learning_rate=0.1)),
    ("sgd", dict(learning_rate=0.05, momentum=0.9)),
    ("sgd", dict(learning_rate=0.05, momentum=0.8, nesterov=True)),
    ("sgd", dict(learning_rate=0.05, momentum=0.5, weight_decay=0.1)),
    ("adam", dict(learning_rate=0.01)),
    ("adam", dict(learning_rate=0.01, beta_1=0.5, beta_2=0.9, epsilon=1e-3, amsgrad=True)),
    ("adamw", dict(learning_rate=0.01, weight_decay=0.1)),
    ("adamw", dict(learning_rate=0.01, weight_decay=0.05, amsgrad=True)),
    ("rmsprop", dict(learning_rate=0.01)),
    ("rmsprop", dict(learning_rate=0.01, rho=0.8, momentum=0.9)),
    ("rmsprop", dict(learning_rate=0.01, momentum=0.5, centered=True)),
    ("adagrad", dict(learning_rate=0.1)),
    ("adagrad", dict(learning_rate=0.1, initial_accumulator_value=0.0, epsilon=1e-4)),
    ("adadelta", dict(learning_rate=1.0)),
    ("adadelta", dict(learning_rate=0.5, rho=0.9, epsilon=1e-4)),
    ("nadam", dict(learning_rate=0.01)),
    ("nadam", dict(learning_rate=0.01, beta_1=0.8, beta_2=0.99)),
    ("adamax", dict(learning_rate=0.01)),
    ("adamax", dict(learning_rate=0.02, beta_1=0.5, beta_2=0.9)),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kwargs.items())}" for name, kwargs in CASES]
SHAPES = [(4, 3), (3,), ()]


def make_run(rng, dtype, steps=6):
    weights = [rng.normal(size=shape).astype(dtype) for shape in SHAPES]
    # Gradient scales differ per step so that the adaptive rules are exercised.
    grads = [[(rng.normal(size=shape) * (0.1 + step)).astype(dtype) for shape in SHAPES] for step in range(steps)]
    return weights, grads


@pytest.mark.parametrize("dtype,rtol,atol", [("float64", 1e-11, 1e-12), ("float32", 2e-5, 2e-6)])
@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_matches_reference(name, kwargs, dtype, rtol, atol, rng):
    weights, grads = make_run(rng, dtype)
    variables = [mk.Tensor(w.copy(), requires_grad=True) for w in weights]
    optimizer = optimizers.get(name).__class__(**kwargs)
    reference = ReferenceOptimizer(name, **kwargs)
    expected = weights
    for step_grads in grads:
        optimizer.apply_gradients(zip(step_grads, variables))
        expected = reference.step(expected, step_grads)
        for variable, want in zip(variables, expected):
            assert variable.dtype == np.dtype(dtype)
            np.testing.assert_allclose(variable.numpy(), want, rtol=rtol, atol=atol)
    assert optimizer.iterations == len(grads)


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_updates_in_place_and_keeps_float32(name, kwargs, rng):
    weights, grads = make_run(rng, "float32", steps=3)
    initial = [w.copy() for w in weights]
    variables = [mk.Tensor(w, requires_grad=True) for w in weights]
    data_ids = [id(v.data) for v in variables]
    optimizer = optimizers.get(name).__class__(**kwargs)
    optimizer.apply_gradients(zip(grads[0], variables))
    slot_ids = [id(array) for array in optimizer.variables[1:]]
    for step_grads in grads[1:]:
        optimizer.apply_gradients(zip(step_grads, variables))
    assert [id(v.data) for v in variables] == data_ids
    if variables[0].device.is_array(weights[0]):  # a device that keeps host arrays as they are (the CPU)
        assert all(v.data is w for v, w in zip(variables, weights))  # the very arrays we passed in
    assert [id(array) for array in optimizer.variables[1:]] == slot_ids
    for variable in variables:
        assert variable.dtype == np.float32
    for array in optimizer.get_state()[1:]:
        assert array.dtype == np.float32
    assert not np.array_equal(variables[0].numpy(), initial[0])  # and they did move


@pytest.mark.parametrize("name,kwargs", CASES[::2], ids=IDS[::2])
def test_step_allocates_no_weight_sized_temporaries(name, kwargs):
    size = 1 << 18  # 1 MiB of float32
    variable = mk.Tensor(np.ones(size, np.float32), requires_grad=True)
    grad = mk.Tensor(np.full(size, 0.5, np.float32))  # on the variable's device: no upload per step
    optimizer = optimizers.get(name).__class__(**kwargs)
    optimizer.apply_gradients([(grad, variable)])  # build: slots and scratch are made here
    tracemalloc.start()
    try:
        optimizer.apply_gradients([(grad, variable)])
        optimizer.apply_gradients([(grad, variable)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < size * 4 // 4, f"a step allocated {peak} bytes for a {size * 4}-byte weight"


def test_learning_rate_schedule_is_evaluated_at_iterations(rng):
    schedule = optimizers.schedules.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)
    weights, grads = make_run(rng, "float64")
    variables = [mk.Tensor(w.copy(), requires_grad=True) for w in weights]
    optimizer = optimizers.Adam(learning_rate=schedule)
    reference = ReferenceOptimizer("adam", learning_rate=lambda step: 0.1 * 0.5 ** (step / 2))
    expected = weights
    for step, step_grads in enumerate(grads):
        assert optimizer.learning_rate == pytest.approx(0.1 * 0.5 ** (step / 2), rel=1e-12)
        optimizer.apply_gradients(zip(step_grads, variables))
        expected = reference.step(expected, step_grads)
    for variable, want in zip(variables, expected):
        np.testing.assert_allclose(variable.numpy(), want, rtol=1e-11, atol=1e-12)


def test_keras_docstring_values():
    # From the Keras docs: RMSprop(0.1) on loss w**2 / 2 from w = 10 gives 9.683772.
    w = mk.Tensor(np.array(10.0, np.float32), requires_grad=True)
    optimizers.RMSprop(learning_rate=0.1).apply_gradients([(w.numpy().copy(), w)])
    assert float(w.numpy()) == pytest.approx(9.683772, abs=1e-6)
    # Adam's first step moves each coordinate by lr (up to epsilon), whatever the gradient scale.
    w = mk.Tensor(np.array([1.0, 1.0, 1.0]), requires_grad=True)
    optimizers.Adam(learning_rate=0.1).apply_gradients([(np.array([1e-2, 1.0, -1e3]), w)])
    np.testing.assert_allclose(w.numpy(), [0.9, 0.9, 1.1], atol=1e-4)
