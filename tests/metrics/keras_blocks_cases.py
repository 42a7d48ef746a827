"""Metric cases of issue 25 recorded from Keras 3.15, batch by batch.

Run ``/work/side/bin/python -m tests.metrics.keras_blocks_cases`` from the
repository root (TensorFlow/Keras 3 installed) to rewrite
``fixtures/keras_blocks_metrics.npz``: for every case, the three batches fed
to ``update_state`` and ``result()`` after each one, plus the function forms.
"""
import json
import os

import numpy

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_blocks_metrics.npz")
CONFIGS = os.path.join(os.path.dirname(__file__), "fixtures", "keras_blocks_metric_configs.json")
BATCHES = 3


def batches():
    """Three batches of every kind of input, seeded."""
    rng = numpy.random.default_rng(2515)
    out = []
    for _ in range(BATCHES):
        n, c = 8, 4
        labels = rng.integers(0, c, n)
        scores = rng.dirichlet(numpy.ones(c), n).astype("float32")
        target = rng.normal(size=(n, 3)).astype("float32")
        out.append({
            "one_hot": numpy.eye(c, dtype="float32")[labels], "scores": scores,
            "multi_hot": (rng.random((n, c)) > 0.5).astype("float32"),
            "labels": labels.astype("int32"), "pred_labels": rng.integers(0, c, n).astype("int32"),
            "segment_true": rng.integers(0, c, (2, 4, 4)).astype("int32"),
            "segment_pred": rng.integers(0, c, (2, 4, 4)).astype("int32"),
            "binary": (rng.random((n, 1)) > 0.5).astype("float32"),
            "probability": rng.random((n, 1)).astype("float32"),
            "target": target, "prediction": (target + rng.normal(0, 0.7, (n, 3))).astype("float32"),
            "weights": rng.uniform(0.1, 2, n).astype("float32"),
            "int_weights": rng.integers(0, 3, n).astype("int32"),
        })
    return out


# name: (class name, kwargs, y_true key, y_pred key, sample weight key or None)
CASES = {
    "f1_none": ("F1Score", {}, "one_hot", "scores", None),
    "f1_micro_threshold": ("F1Score", {"average": "micro", "threshold": 0.3}, "multi_hot", "scores", "weights"),
    "f1_macro": ("F1Score", {"average": "macro"}, "one_hot", "scores", "weights"),
    "fbeta_weighted": ("FBetaScore", {"average": "weighted", "beta": 2.0, "threshold": 0.25}, "multi_hot", "scores",
                       None),
    "fbeta_none": ("FBetaScore", {"beta": 0.5}, "one_hot", "scores", "weights"),
    "r2_uniform": ("R2Score", {}, "target", "prediction", None),
    "r2_variance_weighted": ("R2Score", {"class_aggregation": "variance_weighted_average"}, "target", "prediction",
                             "weights"),
    "r2_raw_adjusted": ("R2Score", {"class_aggregation": None, "num_regressors": 2}, "target", "prediction", None),
    "iou_targets": ("IoU", {"num_classes": 4, "target_class_ids": [0, 2]}, "labels", "pred_labels", None),
    "iou_ignore_weights": ("IoU", {"num_classes": 4, "target_class_ids": [1, 2, 3], "ignore_class": 0,
                                   "dtype": "float32"}, "labels", "pred_labels", "weights"),
    "mean_iou_segments": ("MeanIoU", {"num_classes": 4}, "segment_true", "segment_pred", None),
    "mean_iou_int_weights": ("MeanIoU", {"num_classes": 4}, "labels", "pred_labels", "int_weights"),
    "binary_iou": ("BinaryIoU", {"threshold": 0.4}, "binary", "probability", None),
    "binary_iou_one_class": ("BinaryIoU", {"target_class_ids": [1], "dtype": "float32"}, "binary", "probability",
                             "weights"),
    "one_hot_iou": ("OneHotIoU", {"num_classes": 4, "target_class_ids": [0, 1, 3]}, "one_hot", "scores", None),
    "one_hot_mean_iou": ("OneHotMeanIoU", {"num_classes": 4}, "one_hot", "scores", None),
    "pearson": ("PearsonCorrelation", {}, "target", "prediction", None),
    "pearson_axis0_weighted": ("PearsonCorrelation", {"axis": 0}, "target", "prediction", None),
    "concordance": ("ConcordanceCorrelation", {}, "target", "prediction", "weights"),
    "precision_at_recall": ("PrecisionAtRecall", {"recall": 0.6}, "binary", "probability", None),
    "recall_at_precision": ("RecallAtPrecision", {"precision": 0.5, "num_thresholds": 50}, "binary", "probability",
                            "weights"),
    "sensitivity_at_specificity": ("SensitivityAtSpecificity", {"specificity": 0.4}, "binary", "probability",
                                   None),
    "specificity_at_sensitivity_class": ("SpecificityAtSensitivity", {"sensitivity": 0.7, "class_id": 2},
                                         "one_hot", "scores", "weights"),
    "specificity_at_sensitivity_one_threshold": ("SpecificityAtSensitivity", {"sensitivity": 0.3,
                                                                             "num_thresholds": 1},
                                                 "binary", "probability", None),
}

FUNCTIONS = {
    "pearson_correlation": ("target", "prediction"), "concordance_correlation": ("target", "prediction"),
    "binary_focal_crossentropy": ("multi_hot", "scores"), "categorical_focal_crossentropy": ("one_hot", "scores"),
    "huber": ("target", "prediction"),
}


def record():
    """Stream every case through Keras and write the fixtures."""
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras

    data = batches()
    out = {}
    for index, batch in enumerate(data):
        out.update({f"input/{index}/{key}": value for key, value in batch.items()})
    configs = {}
    for case, (class_name, kwargs, true_key, pred_key, weight_key) in CASES.items():
        metric = getattr(keras.metrics, class_name)(**kwargs)
        for index, batch in enumerate(data):
            weights = None if weight_key is None else batch[weight_key]
            metric.update_state(batch[true_key], batch[pred_key], sample_weight=weights)
            out[f"{case}/{index}"] = numpy.asarray(metric.result())
        configs[case] = {"name": metric.name, "config": metric.get_config()}
    for name, (true_key, pred_key) in FUNCTIONS.items():
        out[f"function/{name}"] = numpy.asarray(getattr(keras.metrics, name)(data[0][true_key], data[0][pred_key]))
    numpy.savez_compressed(FIXTURE, **out)
    with open(CONFIGS, "w") as handle:
        json.dump(configs, handle, indent=1, sort_keys=True)
    print(f"wrote {len(CASES)} cases to {FIXTURE}")


if __name__ == "__main__":
    record()
