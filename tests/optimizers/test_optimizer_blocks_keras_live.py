"""Issue 25's optimizers against live Keras 3 for 20 steps, with fresh
random data (skipped where TensorFlow/Keras is not installed)."""
import os

import numpy
import pytest

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import minikeras as mk  # noqa: E402
from minikeras import optimizers  # noqa: E402
from tests.optimizers.keras_blocks_cases import CASES, STEPS, trajectory_inputs  # noqa: E402


@pytest.mark.parametrize("case", sorted(CASES))
def test_optimizer_matches_live_keras(case):
    class_name, kwargs = CASES[case]
    weights, grads = trajectory_inputs(seed=77)
    ours = [mk.Tensor(w.copy(), requires_grad=True) for w in weights]
    theirs = [keras.Variable(w.copy()) for w in weights]
    our_optimizer = getattr(optimizers, class_name)(**kwargs)
    their_optimizer = getattr(keras.optimizers, class_name)(**kwargs)
    for step in range(STEPS):
        our_optimizer.apply_gradients(zip(grads[step], ours))
        their_optimizer.apply_gradients(zip([g.copy() for g in grads[step]], theirs))
        for mine, keras_variable in zip(ours, theirs):
            numpy.testing.assert_allclose(mine.numpy(), keras_variable.numpy(), rtol=2e-5, atol=2e-6)
