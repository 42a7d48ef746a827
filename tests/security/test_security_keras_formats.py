"""Keras's formats (.keras, .weights.h5, tf.keras .h5) get the same file
security as minikeras's first HDF5 format (issue 12 on top of issue 15):
checksums where minikeras wrote them, sizes checked before reading, the
rebuild in safe mode and within the file's weight budget, every failure the
library's own error naming the file, atomic writes."""
import io
import json
import os
import zipfile

import h5py
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.saving import FileLoadError, UnsafeDeserializationError

import craft_files
from test_security_memory import _RSS_BOUND, probe


def small_model(compiled=True):
    model = mk.Sequential([mk.Input((4,)), layers.Dense(3, name="hidden"), layers.Dense(2, name="head")])
    if compiled:
        model.compile(optimizer="adam", loss="mse")
        model.fit(numpy.ones((8, 4), "float32"), numpy.zeros((8, 2), "float32"), epochs=1, verbose=0)
    return model


def read_members(path):
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def write_members(path, members):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def rewrite_keras_config(path, edit, keep_checksum=False):
    """Change config.json of a .keras file; an attacker drops minikeras's
    checksum from metadata.json unless ``keep_checksum``."""
    members = read_members(path)
    members["config.json"] = json.dumps(edit(json.loads(members["config.json"]))).encode()
    if not keep_checksum:
        metadata = json.loads(members["metadata.json"])
        metadata.pop("minikeras_config_crc32")
        members["metadata.json"] = json.dumps(metadata).encode()
    write_members(path, members)


def edit_weights_member(path, edit):
    """Run ``edit(h5py File)`` on the model.weights.h5 inside a .keras file."""
    members = read_members(path)
    data = io.BytesIO(members["model.weights.h5"])
    with h5py.File(data, "r+") as handle:
        edit(handle)
    members["model.weights.h5"] = data.getvalue()
    write_members(path, members)


def flip_first_kernel_value(handle, path="layers/dense/vars/0"):
    dataset = handle[path]
    values = dataset[()]
    values.flat[0] += 1.0
    dataset[...] = values


# ----------------------------------------------------------------- checksums
def test_minikeras_writes_checksums_in_every_format(tmp_path):
    model = small_model()
    model.save(tmp_path / "m.keras")
    model.save(tmp_path / "m.h5")
    model.save_weights(tmp_path / "m.weights.h5")
    metadata = json.loads(read_members(tmp_path / "m.keras")["metadata.json"])
    assert isinstance(metadata["minikeras_config_crc32"], int)
    with h5py.File(tmp_path / "m.h5", "r") as handle:
        assert "minikeras_config_crc32" in handle.attrs
        handle["model_weights"].visititems(
            lambda name, item: None if not isinstance(item, h5py.Dataset) else
            pytest.fail(f"{name} has no checksum") if "minikeras_crc32" not in item.attrs else None)
    with h5py.File(tmp_path / "m.weights.h5", "r") as handle:
        datasets = []
        handle.visititems(lambda _, item: datasets.append(item) if isinstance(item, h5py.Dataset) else None)
        assert datasets and all("minikeras_crc32" in dataset.attrs for dataset in datasets)
        assert "optimizer/vars/2" in handle


def test_keras_config_edited_under_its_checksum_is_refused(tmp_path):
    path = tmp_path / "m.keras"
    small_model().save(path)

    def edit(spec):
        spec["config"]["layers"][-1]["config"]["activation"] = "relu"
        return spec

    rewrite_keras_config(path, edit, keep_checksum=True)
    with pytest.raises(FileLoadError, match="m.keras.*config.json fails its integrity check"):
        mk.models.load_model(path)


def test_keras_weight_altered_after_saving_is_refused(tmp_path):
    path = tmp_path / "m.keras"
    small_model().save(path)
    edit_weights_member(path, flip_first_kernel_value)
    with pytest.raises(FileLoadError, match="m.keras.*CRC-32 mismatch"):
        mk.models.load_model(path)


def test_weights_h5_altered_after_saving_is_refused_and_changes_nothing(tmp_path):
    path = tmp_path / "m.weights.h5"
    model = small_model()
    model.save_weights(path)
    with h5py.File(path, "r+") as handle:
        flip_first_kernel_value(handle, "layers/dense_1/vars/0")  # the second Dense: read after the first
    target = small_model(compiled=False)
    before = target.get_weights()
    with pytest.raises(FileLoadError, match="m.weights.h5.*CRC-32 mismatch"):
        target.load_weights(path)
    for a, b in zip(target.get_weights(), before):
        numpy.testing.assert_array_equal(a, b)


def test_legacy_h5_config_edited_under_its_checksum_is_refused(tmp_path):
    path = tmp_path / "m.h5"
    small_model().save(path)

    def edit(config):
        config["config"]["layers"][-1]["config"]["activation"] = "relu"
        return config

    craft_files.rewrite_attribute(path, "model_config", edit, keep_checksum=True)
    with pytest.raises(FileLoadError, match="m.h5.*fails its integrity check"):
        mk.models.load_model(path)


# ------------------------------------------------------------- code execution
def test_keras_lambda_is_refused_in_safe_mode_and_resolved_only_from_custom_objects(tmp_path):
    path = tmp_path / "m.keras"
    craft_files.save_lambda_model(path)
    with pytest.raises(UnsafeDeserializationError, match="Lambda layer 'scale'"):
        mk.models.load_model(path)
    rewrite_keras_config(path, lambda spec: spec)  # as crafted: no checksum, same model
    with pytest.raises(ValueError, match="'scale_by_two'.*not in custom_objects"):
        mk.models.load_model(path, safe_mode=False)
    restored = mk.models.load_model(path, safe_mode=False, custom_objects={"scale_by_two": craft_files.scale_by_two})
    assert restored.layers[-2].name == "scale"


def test_keras_unregistered_class_is_not_instantiated(tmp_path, monkeypatch):
    path = tmp_path / "m.keras"
    sentinel = tmp_path / "SENTINEL"
    small_model().save(path)

    def edit(spec):
        spec["config"]["layers"][-1] = {"module": "craft_files", "class_name": "Payload", "registered_name": None,
                                        "config": {"name": "payload", "path": str(sentinel)}}
        return spec

    rewrite_keras_config(path, edit)
    with pytest.raises(ValueError, match="Unknown layer class 'Payload'"):
        mk.models.load_model(path)
    assert not sentinel.exists()


# ------------------------------------------------------------------- memory
def test_keras_weights_over_max_bytes_are_refused_before_reading(tmp_path):
    path = tmp_path / "m.keras"
    small_model().save(path)
    # Refused from metadata: the member's size, or the rebuild's budget (max_bytes caps it).
    with pytest.raises(FileLoadError, match="m.keras.*(over the limit max_bytes=16|limit 16 bytes)"):
        mk.models.load_model(path, max_bytes=16)
    assert mk.models.load_model(path, max_bytes=None).count_params() == 4 * 3 + 3 + 3 * 2 + 2


def test_weights_h5_dataset_declaring_unstored_bytes_is_refused(tmp_path):
    path = tmp_path / "w.weights.h5"
    model = small_model(compiled=False)
    model.save_weights(path)
    with h5py.File(path, "r+") as handle:
        del handle["layers/dense/vars/0"]
        handle.create_dataset("layers/dense/vars/0", shape=(4, 3), dtype="float32")  # declared, never written
    with pytest.raises(FileLoadError, match="declares 48 bytes but the file stores only 0"):
        model.load_weights(path)


def test_weights_h5_optimizer_state_larger_than_any_optimizer_is_refused(tmp_path):
    path = tmp_path / "w.weights.h5"
    model = small_model()
    model.save_weights(path)
    with h5py.File(path, "r+") as handle:
        variables = handle["optimizer/vars"]
        variables.create_dataset(str(len(variables)), data=numpy.zeros((2**19,), "float32"))  # a 2 MiB "slot"
    with pytest.raises(FileLoadError, match="optimizer state declares .* more than any optimizer keeps"):
        model.load_weights(path)


def set_declared_size(path, member, size):
    """Rewrite the uncompressed size ``member`` declares in the zip's central directory."""
    data = bytearray(open(path, "rb").read())
    start = 0
    while True:
        start = data.index(b"PK\x01\x02", start)
        name_length = int.from_bytes(data[start + 28:start + 30], "little")
        if data[start + 46:start + 46 + name_length] == member.encode():
            data[start + 24:start + 28] = size.to_bytes(4, "little")
            break
        start += 4
    open(path, "wb").write(bytes(data))


def test_keras_member_declaring_more_than_deflate_can_inflate_is_refused_before_reading(tmp_path):
    path = tmp_path / "bomb.keras"
    small_model().save(path)
    members = read_members(path)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    set_declared_size(path, "model.weights.h5", 2**32 - 1)  # from a few KB of compressed bytes
    with pytest.raises(FileLoadError, match="bomb.keras.*more than real weights compress"):
        mk.models.load_model(path, max_bytes=2**33)
    with pytest.raises(FileLoadError, match="model.weights.h5.*more than weights under max_bytes can be"):
        mk.models.load_model(path, max_bytes=2**20)


def crafted_keras_files(folder):
    files = {}
    files["huge_layer_config"] = os.path.join(folder, "huge_layer_config.keras")
    small_model(compiled=False).save(files["huge_layer_config"])

    def huge_units(spec):
        spec["config"]["layers"][-1]["config"]["units"] = 2**28
        return spec

    rewrite_keras_config(files["huge_layer_config"], huge_units)
    files["huge_input_config"] = os.path.join(folder, "huge_input_config.keras")
    small_model(compiled=False).save(files["huge_input_config"])

    def huge_input(spec):
        spec["config"]["layers"][0]["config"]["batch_shape"] = [None, 2**26, 4]
        spec["build_config"]["input_shape"] = [None, 2**26, 4]
        return spec

    rewrite_keras_config(files["huge_input_config"], huge_input)
    files["huge_dataset"] = os.path.join(folder, "huge_dataset.keras")
    small_model(compiled=False).save(files["huge_dataset"])

    def huge_dataset(handle):
        del handle["layers/dense/vars/0"]
        handle["layers/dense/vars"].create_dataset("0", shape=(2**17, 2**17), dtype="float32", chunks=(64, 64))

    edit_weights_member(files["huge_dataset"], huge_dataset)
    return files


def test_crafted_keras_files_are_refused_within_bounded_memory(tmp_path):
    expected = {"huge_layer_config": "would allocate weight", "huge_input_config": "probe batch",
                "huge_dataset": "declares .* bytes"}
    files = crafted_keras_files(str(tmp_path))
    reports = probe("model", files.values())
    for name, pattern in expected.items():
        report = reports[files[name]]
        assert report["outcome"] == "FileLoadError", report
        assert pytest.importorskip("re").search(pattern, report["message"]), report
        assert report["peak_rss_growth_bytes"] < _RSS_BOUND, report


# ------------------------------------------------------------- atomic writes
@pytest.mark.parametrize("name", ["m.keras", "m.weights.h5", "m.h5"])
def test_failed_save_keeps_the_old_file_and_uses_the_temporary_name(tmp_path, monkeypatch, name):
    from minikeras.saving import hdf5_format, keras_weights_h5

    path = tmp_path / name
    model = small_model()
    (model.save_weights if name.endswith(".weights.h5") else model.save)(path)
    before = path.read_bytes()
    seen = []

    def crash(*args, **kwargs):
        seen.extend(os.listdir(tmp_path))
        raise RuntimeError("disk full")

    if name.endswith(".keras"):  # its weights are built in memory: fail while the zip is written
        monkeypatch.setattr(zipfile.ZipFile, "writestr", crash)
    else:
        monkeypatch.setattr(keras_weights_h5, "write_optimizer", crash)
        monkeypatch.setattr(hdf5_format, "save_weights_to_group", crash)
    with pytest.raises(RuntimeError, match="disk full"):
        (model.save_weights if name.endswith(".weights.h5") else model.save)(path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == [name]
    assert any(entry.startswith(f".{name}.minikeras-tmp-{os.getpid()}-") for entry in seen), seen
