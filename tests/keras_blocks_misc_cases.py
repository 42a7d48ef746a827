"""Activations, the STFT initializer and OrthogonalRegularizer of issue 25,
recorded from Keras 3.15.

Run ``/work/side/bin/python -m tests.keras_blocks_misc_cases`` from the
repository root (TensorFlow/Keras 3 and SciPy installed) to rewrite
``fixtures/keras_blocks_misc.npz``.
"""
import json
import os

import numpy

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_blocks_misc.npz")

# name: (activation, kwargs); the input is INPUT below.
ACTIVATIONS = {
    "celu": ("celu", {}), "celu_alpha": ("celu", {"alpha": 0.5}), "glu": ("glu", {}), "glu_axis0": ("glu", {"axis": 0}),
    "hard_shrink": ("hard_shrink", {}), "hard_shrink_1": ("hard_shrink", {"threshold": 1.0}),
    "hard_tanh": ("hard_tanh", {}), "soft_shrink": ("soft_shrink", {}), "soft_shrink_1": ("soft_shrink", {"threshold": 1.0}),
    "sparse_plus": ("sparse_plus", {}), "sparse_sigmoid": ("sparse_sigmoid", {}), "squareplus": ("squareplus", {}),
    "squareplus_b1": ("squareplus", {"b": 1}), "tanh_shrink": ("tanh_shrink", {}),
    "threshold": ("threshold", {"threshold": 0.3, "default_value": -2.0}),
}
# Rows whose sparsemax support is a single entry (where Keras 3.15 is exact).
SPARSEMAX_INPUT = numpy.array([[-1.0, 0.0, 1.0], [0.5, 3.0, 1.0], [2.0, -2.0, 0.9]], "float32")

STFT_CASES = {
    "real_hann": ({}, (16, 1, 9)), "imag_hamming_periodic": ({"side": "imag", "window": "hamming", "periodic": True},
                                                            (12, 1, 7)),
    "real_blackman_spectrum": ({"window": "blackman", "scaling": "spectrum"}, (10, 1, 6)),
    "imag_boxcar_none": ({"side": "imag", "window": "boxcar", "scaling": None}, (8, 1, 5)),
    "real_bartlett_periodic": ({"window": "bartlett", "periodic": True}, (9, 1, 5)),
    "real_no_window": ({"window": None}, (6, 1, 4)),
}
REGULARIZER_CASES = {"rows": {"factor": 0.05}, "columns": {"factor": 0.2, "mode": "columns"}}


def inputs():
    rng = numpy.random.default_rng(2525)
    return {"x": (rng.normal(0, 1.5, (4, 6))).astype("float32"),
            "kernel": rng.normal(size=(5, 4)).astype("float32")}


def record():
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras

    data = inputs()
    out = {f"input/{k}": v for k, v in data.items()}
    for case, (name, kwargs) in ACTIVATIONS.items():
        out[f"activation/{case}"] = numpy.asarray(getattr(keras.activations, name)(data["x"], **kwargs))
    out["activation/sparsemax"] = numpy.asarray(keras.activations.sparsemax(SPARSEMAX_INPUT))
    configs = {}
    for case, (kwargs, shape) in STFT_CASES.items():
        initializer = keras.initializers.STFT(**kwargs)
        out[f"stft/{case}"] = numpy.asarray(initializer(shape))
        configs[case] = initializer.get_config()
    for case, kwargs in REGULARIZER_CASES.items():
        # A tensor, as a weight is (a NumPy array takes another, broken, path in Keras).
        kernel = keras.ops.convert_to_tensor(data["kernel"])
        out[f"orthogonal/{case}"] = numpy.asarray(keras.regularizers.OrthogonalRegularizer(**kwargs)(kernel))
    numpy.savez_compressed(FIXTURE, **out)
    with open(FIXTURE.replace(".npz", "_configs.json"), "w") as handle:
        json.dump(configs, handle, indent=1, sort_keys=True)
    print(f"wrote {FIXTURE}")


if __name__ == "__main__":
    record()
