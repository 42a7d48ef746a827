"""Issue 25's losses against live Keras 3 (skipped where TensorFlow/Keras is
not installed; the recorded fixture covers CI)."""
import os

import numpy
import pytest

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import minikeras as mk  # noqa: E402
from minikeras import losses  # noqa: E402
from tests.losses.keras_blocks_cases import CASES, _data  # noqa: E402


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", "mean_with_sample_weight", None])
@pytest.mark.parametrize("case", sorted(CASES))
def test_loss_matches_live_keras(case, reduction):
    class_name, _, kwargs, true_key, pred_key = CASES[case]
    data = _data()
    y_true, y_pred, weights = data[true_key], data[pred_key], data["weights"]
    ours = getattr(losses, class_name)(reduction=reduction, **kwargs)(y_true, mk.tensor(y_pred), sample_weight=weights)
    theirs = getattr(keras.losses, class_name)(reduction=reduction, **kwargs)(y_true, y_pred, sample_weight=weights)
    numpy.testing.assert_allclose(ours.numpy(), numpy.asarray(theirs), rtol=2e-5, atol=2e-6)
