"""bfloat16 weights in .weights.h5/.keras files: HDF5 has no bfloat16, so
(as Keras does) the 2 bytes are stored opaque with ``dtype="bfloat16"``."""
import h5py
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.backend.dtypes import bfloat16
from minikeras.saving import FileLoadError


def _model(dtype):
    return mk.Sequential([mk.Input((3,)), layers.Dense(2, dtype=dtype, name="dense")])


def test_bfloat16_weights_round_trip_with_checksum(tmp_path):
    model = _model("bfloat16")
    model.save_weights(tmp_path / "w.weights.h5")
    with h5py.File(tmp_path / "w.weights.h5", "r") as handle:
        kernel = handle["layers/dense/vars/0"]
        assert kernel.dtype.kind == "V" and kernel.attrs["dtype"] == "bfloat16"
    expected = model.weights[0].numpy()
    for dtype in ("bfloat16", "float32"):  # loaded as is, or cast into a float32 model
        other = _model(dtype)
        other.load_weights(tmp_path / "w.weights.h5")
        assert other.weights[0].dtype.name == dtype
        numpy.testing.assert_array_equal(other.weights[0].numpy().astype("float32"), expected.astype("float32"))


def test_a_changed_bfloat16_weight_fails_its_checksum(tmp_path):
    _model("bfloat16").save_weights(tmp_path / "w.weights.h5")
    with h5py.File(tmp_path / "w.weights.h5", "r+") as handle:
        kernel = handle["layers/dense/vars/0"]
        changed = kernel[()].view(bfloat16()).astype("float32") + 1.0
        kernel[...] = changed.astype(bfloat16()).view(kernel.dtype)
    with pytest.raises(FileLoadError, match="integrity check"):
        _model("bfloat16").load_weights(tmp_path / "w.weights.h5")


def test_opaque_data_without_the_bfloat16_marker_is_refused(tmp_path):
    _model("bfloat16").save_weights(tmp_path / "w.weights.h5")
    with h5py.File(tmp_path / "w.weights.h5", "r+") as handle:
        del handle["layers/dense/vars/0"].attrs["dtype"]
    with pytest.raises(ValueError, match="expected a numeric array"):
        _model("bfloat16").load_weights(tmp_path / "w.weights.h5")


def test_bfloat16_model_in_the_legacy_h5_format(tmp_path):
    model = _model("bfloat16")
    model.save(tmp_path / "m.h5")
    loaded = mk.models.load_model(tmp_path / "m.h5")
    assert loaded.weights[0].dtype.name == "bfloat16"
    numpy.testing.assert_array_equal(loaded.weights[0].numpy().astype("float32"),
                                     model.weights[0].numpy().astype("float32"))
