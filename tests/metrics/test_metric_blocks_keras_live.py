"""Issue 25's metrics against live Keras 3, batch by batch (skipped where
TensorFlow/Keras is not installed; the recorded fixture covers CI)."""
import os

import numpy
import pytest

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

from minikeras import metrics  # noqa: E402
from tests.metrics.keras_blocks_cases import CASES, batches  # noqa: E402


@pytest.mark.parametrize("case", sorted(CASES))
def test_metric_matches_live_keras(case):
    class_name, kwargs, true_key, pred_key, weight_key = CASES[case]
    ours, theirs = getattr(metrics, class_name)(**kwargs), getattr(keras.metrics, class_name)(**kwargs)
    for batch in batches() + batches()[::-1]:
        weights = None if weight_key is None else batch[weight_key]
        ours.update_state(batch[true_key], batch[pred_key], sample_weight=weights)
        theirs.update_state(batch[true_key], batch[pred_key], sample_weight=weights)
        numpy.testing.assert_allclose(ours.result(), numpy.asarray(theirs.result()), rtol=1e-5, atol=1e-6)
