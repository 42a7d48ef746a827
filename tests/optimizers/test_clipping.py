"""clipnorm, clipvalue and global_clipnorm, with Keras semantics.

SGD(learning_rate=1) turns the update into ``w -= clipped_gradient``, so the
weights show exactly what the clipping did."""
import numpy as np
import pytest

import minikeras as mk
from minikeras import optimizers


def clipped_by_sgd(grads, dtype="float64", **clip):
    variables = [mk.Tensor(np.zeros(np.shape(g), dtype), requires_grad=True) for g in grads]
    optimizers.SGD(learning_rate=1.0, **clip).apply_gradients(zip(grads, variables))
    return [-v.numpy() for v in variables]


@pytest.fixture
def grads(rng):
    return [rng.normal(size=(5, 4)) * 3.0, rng.normal(size=(4,)) * 0.01, np.array(7.0)]


def test_clipnorm_clips_each_gradient_by_its_own_norm(grads):
    clipped = clipped_by_sgd(grads, clipnorm=1.0)
    for grad, result in zip(grads, clipped):
        norm = np.sqrt(np.sum(grad**2))
        np.testing.assert_allclose(result, grad * 1.0 / max(norm, 1.0), rtol=1e-13)
    # The big ones end at norm exactly 1, the small one is unchanged, the scalar becomes 1.
    assert np.linalg.norm(clipped[0]) == pytest.approx(1.0, rel=1e-12)
    np.testing.assert_allclose(clipped[1], grads[1], rtol=1e-13)
    assert float(clipped[2]) == pytest.approx(1.0)


def test_clipvalue_clips_elementwise(grads):
    clipped = clipped_by_sgd(grads, clipvalue=0.5)
    for grad, result in zip(grads, clipped):
        np.testing.assert_array_equal(result, np.clip(grad, -0.5, 0.5))
    assert np.abs(clipped[0]).max() == 0.5


def test_global_clipnorm_scales_all_gradients_together(grads):
    clipped = clipped_by_sgd(grads, global_clipnorm=2.0)
    global_norm = np.sqrt(sum(np.sum(g**2) for g in grads))
    assert global_norm > 2.0
    for grad, result in zip(grads, clipped):
        np.testing.assert_allclose(result, grad * 2.0 / global_norm, rtol=1e-13)
    assert np.sqrt(sum(np.sum(r**2) for r in clipped)) == pytest.approx(2.0, rel=1e-12)
    # Joint scaling keeps the directions: the tiny gradient is scaled too (clipnorm would leave it alone).
    assert np.linalg.norm(clipped[1]) < np.linalg.norm(grads[1])


def test_global_clipnorm_below_the_threshold_changes_nothing(grads):
    clipped = clipped_by_sgd(grads, global_clipnorm=1e6)
    for grad, result in zip(grads, clipped):
        np.testing.assert_allclose(result, grad, rtol=1e-13)


def test_clipping_keeps_float32(grads):
    grads32 = [np.asarray(g, np.float32) for g in grads]
    for clip in (dict(clipnorm=1.0), dict(clipvalue=0.5), dict(global_clipnorm=2.0)):
        variables = [mk.Tensor(np.zeros(np.shape(g), np.float32), requires_grad=True) for g in grads32]
        optimizers.Adam(**clip).apply_gradients(zip(grads32, variables))
        assert all(v.dtype == np.float32 for v in variables)


def test_clipping_does_not_modify_the_callers_gradients(grads):
    originals = [g.copy() for g in grads]
    for clip in (dict(clipnorm=1.0), dict(clipvalue=0.5), dict(global_clipnorm=2.0)):
        clipped_by_sgd(grads, **clip)
        for grad, original in zip(grads, originals):
            np.testing.assert_array_equal(grad, original)


def test_clipping_applies_before_the_optimizer_state(rng):
    # Adam's moments must see the clipped gradient: with clipvalue the first
    # moment after one step is (1 - beta_1) * clip(g).
    grad = rng.normal(size=(6,)) * 10
    variable = mk.Tensor(np.zeros(6), requires_grad=True)
    optimizer = optimizers.Adam(clipvalue=1.0)
    optimizer.apply_gradients([(grad, variable)])
    momentum = optimizer.get_state()[1]
    np.testing.assert_allclose(momentum, 0.1 * np.clip(grad, -1, 1), rtol=1e-12)


@pytest.mark.parametrize("clip", [
    dict(clipnorm=1.0, global_clipnorm=1.0),
    dict(clipnorm=1.0, clipvalue=1.0),
    dict(clipvalue=1.0, global_clipnorm=1.0),
])
def test_more_than_one_clip_option_is_rejected(clip):
    with pytest.raises(ValueError, match="Only one of `clipnorm`, `clipvalue` and `global_clipnorm`"):
        optimizers.Adam(**clip)


@pytest.mark.parametrize("argument", ["clipnorm", "clipvalue", "global_clipnorm"])
def test_negative_clip_values_are_rejected(argument):
    with pytest.raises(ValueError, match=argument):
        optimizers.SGD(**{argument: -1.0})
