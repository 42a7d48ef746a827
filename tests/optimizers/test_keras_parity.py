"""Parity with Keras 3 itself (tf.keras). Skipped where TensorFlow is not
installed; the NumPy-reference tests are the checks that always run."""
import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
keras = pytest.importorskip("tensorflow").keras

import minikeras as mk  # noqa: E402
from minikeras import optimizers  # noqa: E402
from tests.optimizers.test_update_rules import CASES, IDS  # noqa: E402

BASE_CASES = [
    ("SGD", dict(learning_rate=0.1, clipnorm=0.5)),
    ("Adam", dict(learning_rate=0.01, clipvalue=0.3)),
    ("RMSprop", dict(learning_rate=0.01, global_clipnorm=1.0)),
    ("Adam", dict(learning_rate=0.01, weight_decay=0.1)),
    ("SGD", dict(learning_rate=0.1, momentum=0.9, use_ema=True, ema_momentum=0.9, ema_overwrite_frequency=3)),
    ("Adam", dict(learning_rate=0.01, gradient_accumulation_steps=3)),
    ("Nadam", dict(learning_rate=0.01, gradient_accumulation_steps=2, clipnorm=1.0)),
    ("Adagrad", dict(learning_rate=0.1, loss_scale_factor=4.0)),
]


def _run_both(class_name, kwargs, rng, steps=7):
    shapes = [(4, 3), (3,)]
    weights = [rng.normal(size=shape).astype(np.float32) for shape in shapes]
    ours = [mk.Tensor(w.copy(), requires_grad=True) for w in weights]
    theirs = [keras.Variable(w.copy()) for w in weights]
    our_optimizer = getattr(optimizers, class_name)(**kwargs)
    their_optimizer = getattr(keras.optimizers, class_name)(**kwargs)
    for step in range(steps):
        grads = [(rng.normal(size=shape) * (0.2 + step)).astype(np.float32) for shape in shapes]
        our_optimizer.apply_gradients(zip(grads, ours))
        their_optimizer.apply_gradients(zip([g.copy() for g in grads], theirs))
        for mine, keras_variable in zip(ours, theirs):
            np.testing.assert_allclose(mine.numpy(), keras_variable.numpy(), rtol=1e-5, atol=2e-6)
    assert our_optimizer.iterations == int(their_optimizer.iterations.numpy())
    return our_optimizer, their_optimizer


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_update_rules_match_tf_keras(name, kwargs, rng):
    class_name = type(optimizers.get(name)).__name__
    _run_both(class_name, kwargs, rng)


@pytest.mark.parametrize("class_name,kwargs", BASE_CASES, ids=[f"{c}-{sorted(k)}" for c, k in BASE_CASES])
def test_base_features_match_tf_keras(class_name, kwargs, rng):
    _run_both(class_name, kwargs, rng)


LAYOUT_CASES = [
    ("SGD", dict(learning_rate=0.1, momentum=0.9)),
    ("Adam", dict(learning_rate=0.01, amsgrad=True)),
    ("RMSprop", dict(learning_rate=0.01, momentum=0.5, centered=True)),
    ("Adagrad", dict(learning_rate=0.1)),
    ("Adadelta", dict(learning_rate=1.0)),
    ("Nadam", dict(learning_rate=0.01)),
    ("Adamax", dict(learning_rate=0.01)),
    ("AdamW", dict(learning_rate=0.01, use_ema=True, gradient_accumulation_steps=2)),
]


@pytest.mark.parametrize("class_name,kwargs", LAYOUT_CASES, ids=[c for c, _ in LAYOUT_CASES])
def test_state_layout_matches_keras_variables(class_name, kwargs, rng):
    ours, theirs = _run_both(class_name, kwargs, rng, steps=3)
    keras_values = [v.numpy() for v in theirs.variables if v.name != "learning_rate"]
    our_values = ours.get_state()
    assert len(our_values) == len(keras_values)
    for mine, keras_value in zip(our_values, keras_values):
        assert mine.shape == keras_value.shape
        np.testing.assert_allclose(mine, keras_value, rtol=1e-5, atol=1e-7)


SCHEDULES = [
    ("ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=3, decay_rate=0.7)),
    ("ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=3, decay_rate=0.7, staircase=True)),
    ("PiecewiseConstantDecay", dict(boundaries=[2, 5, 9], values=[1.0, 0.5, 0.25, 0.1])),
    ("InverseTimeDecay", dict(initial_learning_rate=0.1, decay_steps=2, decay_rate=0.5)),
    ("InverseTimeDecay", dict(initial_learning_rate=0.1, decay_steps=2, decay_rate=0.5, staircase=True)),
    ("PolynomialDecay", dict(initial_learning_rate=0.1, decay_steps=8, end_learning_rate=0.01, power=2.0)),
    ("PolynomialDecay", dict(initial_learning_rate=0.1, decay_steps=4, power=0.5, cycle=True)),
    ("CosineDecay", dict(initial_learning_rate=0.1, decay_steps=10, alpha=0.1)),
    ("CosineDecay", dict(initial_learning_rate=0.0, decay_steps=10, warmup_target=0.2, warmup_steps=5)),
    ("CosineDecayRestarts", dict(initial_learning_rate=0.1, first_decay_steps=3, t_mul=2.0, m_mul=0.5, alpha=0.1)),
    ("CosineDecayRestarts", dict(initial_learning_rate=0.1, first_decay_steps=3, t_mul=1.0)),
]


@pytest.mark.parametrize("class_name,kwargs", SCHEDULES, ids=[c for c, _ in SCHEDULES])
def test_schedules_match_tf_keras(class_name, kwargs):
    ours = getattr(optimizers.schedules, class_name)(**kwargs)
    theirs = getattr(keras.optimizers.schedules, class_name)(**kwargs)
    for step in range(0, 25):
        assert ours(step) == pytest.approx(float(theirs(step)), rel=2e-6, abs=1e-8), step
