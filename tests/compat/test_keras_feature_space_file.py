"""A FeatureSpace saved by minikeras (hashed features, crosses, a
Normalization, lookups, a plain float) loads in Keras 3 with
``keras.models.load_model`` and encodes as minikeras does. Keras is never a
minikeras dependency: this file skips where it is not installed (CI); run
it in an environment that has it (the side environment)."""
import os

import numpy
import pytest

import minikeras as mk


def test_keras_loads_a_feature_space_minikeras_saved(tmp_path):
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    keras = pytest.importorskip("keras", reason="Keras is not installed: its load_model cannot be checked")
    rng = numpy.random.default_rng(3)
    columns = {"age": rng.normal(40, 10, 24).astype("float32"), "city": rng.choice(["paris", "lyon", "nice"], 24),
               "rooms": rng.integers(1, 5, 24).astype("int32"), "tag": rng.choice(["a", "b", "c", "d"], 24),
               "score": rng.uniform(-1, 1, 24).astype("float32")}
    FS = mk.utils.FeatureSpace
    for output_mode in ("concat", "dict"):
        space = FS({"age": "float_normalized", "city": "string_categorical", "rooms": "integer_hashed",
                    "tag": FS.string_hashed(num_bins=8), "score": "float"},
                   crosses=[FS.cross(("city", "rooms"), crossing_dim=8), ("tag", "rooms")], crossing_dim=6,
                   hashing_dim=16, output_mode=output_mode)
        space.adapt(columns)
        space.save(tmp_path / f"{output_mode}.keras")
        loaded = keras.models.load_model(tmp_path / f"{output_mode}.keras")
        assert type(loaded).__name__ == "FeatureSpace"
        expected, got = space(columns), loaded(columns)
        if output_mode == "concat":
            numpy.testing.assert_allclose(numpy.asarray(got), expected.numpy(), atol=1e-6)
        else:
            assert list(got) == list(expected)
            for name, value in expected.items():
                numpy.testing.assert_allclose(numpy.asarray(got[name]), value.numpy(), atol=1e-6, err_msg=name)
