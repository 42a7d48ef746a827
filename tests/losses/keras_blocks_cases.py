"""Loss cases of issue 25 recorded from Keras 3.15 for forward parity.

Run ``/work/side/bin/python -m tests.losses.keras_blocks_cases`` from the
repository root (an environment with TensorFlow/Keras 3) to rewrite
``fixtures/keras_blocks_losses.npz``: for every case, the inputs, the
per-sample losses (``reduction=None``) and the weighted mean. The tests read
the file without TensorFlow, and compare with live Keras where it is installed.
"""
import os

import numpy

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_blocks_losses.npz")


def _data():
    rng = numpy.random.default_rng(25)
    n, c = 6, 4
    labels = rng.integers(0, c, n)
    embeddings = rng.normal(size=(n, 5))
    masks_true = (rng.random((n, 3, 3, 1)) > 0.5).astype("float32")
    return {
        "one_hot": numpy.eye(c, dtype="float32")[labels],
        "labels": labels.astype("int32"),
        "probs": rng.dirichlet(numpy.ones(c), n).astype("float32"),
        "logits": rng.normal(0, 2, (n, c)).astype("float32"),
        "binary": (rng.random((n, c)) > 0.5).astype("float32"),
        "sigmoid_probs": rng.uniform(0.02, 0.98, (n, c)).astype("float32"),
        "mask_true": masks_true,
        "mask_pred": rng.uniform(0, 1, (n, 3, 3, 1)).astype("float32"),
        "unit": (embeddings / numpy.linalg.norm(embeddings, axis=1, keepdims=True)).astype("float32"),
        "group_labels": numpy.array([0, 1, 0, 2, 1, 0], "int32"),
        "ctc_labels": numpy.array([[1, 2, 0], [3, 3, 0], [2, 0, 0], [1, 2, 3], [3, 1, 1], [2, 2, 2]], "int32"),
        "ctc_logits": rng.normal(0, 1.5, (n, 8, 4)).astype("float32"),
        "weights": rng.uniform(0.2, 2, n).astype("float32"),
    }


# name: (class name, function name, constructor kwargs, y_true key, y_pred key)
CASES = {
    "bfce_default": ("BinaryFocalCrossentropy", "binary_focal_crossentropy", {}, "binary", "sigmoid_probs"),
    "bfce_balanced_logits": ("BinaryFocalCrossentropy", "binary_focal_crossentropy",
                             {"apply_class_balancing": True, "alpha": 0.4, "gamma": 3.0, "from_logits": True},
                             "binary", "logits"),
    "bfce_smoothing": ("BinaryFocalCrossentropy", "binary_focal_crossentropy",
                       {"label_smoothing": 0.2, "gamma": 1.5}, "binary", "sigmoid_probs"),
    "cfce_default": ("CategoricalFocalCrossentropy", "categorical_focal_crossentropy", {}, "one_hot", "probs"),
    "cfce_logits_smoothing": ("CategoricalFocalCrossentropy", "categorical_focal_crossentropy",
                              {"from_logits": True, "label_smoothing": 0.1, "alpha": 0.5, "gamma": 1.0},
                              "one_hot", "logits"),
    "cfce_alpha_list": ("CategoricalFocalCrossentropy", "categorical_focal_crossentropy",
                        {"alpha": [0.1, 0.2, 0.3, 0.4]}, "one_hot", "probs"),
    "dice_all": ("Dice", "dice", {}, "mask_true", "mask_pred"),
    "dice_per_image": ("Dice", "dice", {"axis": (1, 2, 3)}, "mask_true", "mask_pred"),
    "tversky_all": ("Tversky", "tversky", {"alpha": 0.7, "beta": 0.3}, "mask_true", "mask_pred"),
    "tversky_per_image": ("Tversky", "tversky", {"axis": (1, 2, 3)}, "mask_true", "mask_pred"),
    "circle_default": ("Circle", "circle", {}, "group_labels", "unit"),
    "circle_options": ("Circle", "circle", {"gamma": 10.0, "margin": 0.25, "remove_diagonal": False},
                       "group_labels", "unit"),
    "gce_default": ("CategoricalGeneralizedCrossEntropy", "categorical_generalized_cross_entropy", {},
                    "labels", "probs"),
    "gce_q": ("CategoricalGeneralizedCrossEntropy", "categorical_generalized_cross_entropy", {"q": 0.8},
              "labels", "probs"),
    "ctc": ("CTC", "ctc", {}, "ctc_labels", "ctc_logits"),
}


def function_kwargs(class_name, kwargs):
    """The function form's keyword arguments: the class's, plus q, which
    ``categorical_generalized_cross_entropy`` requires."""
    if class_name == "CategoricalGeneralizedCrossEntropy":
        return {"q": 0.5, **kwargs}
    return dict(kwargs)


def record():
    """Run every case through Keras and write the fixture."""
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras

    data = _data()
    out = {f"input/{key}": value for key, value in data.items()}
    for case, (class_name, function_name, kwargs, true_key, pred_key) in CASES.items():
        y_true, y_pred, weights = data[true_key], data[pred_key], data["weights"]
        loss_class = getattr(keras.losses, class_name)
        out[f"{case}/none"] = numpy.asarray(loss_class(reduction=None, **kwargs)(y_true, y_pred))
        out[f"{case}/weighted"] = numpy.asarray(loss_class(**kwargs)(y_true, y_pred, sample_weight=weights))
        out[f"{case}/function"] = numpy.asarray(getattr(keras.losses, function_name)(y_true, y_pred,
                                                                             **function_kwargs(class_name, kwargs)))
    numpy.savez_compressed(FIXTURE, **out)
    print(f"wrote {len(CASES)} cases to {FIXTURE}")


if __name__ == "__main__":
    record()
