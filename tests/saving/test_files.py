"""Atomic writes and clear errors for bad paths and files."""
import os
import subprocess
import sys
import textwrap

import pytest

import minikeras as mk
from minikeras.saving import hdf5_format
from tests.saving.conftest import build_sequential


def fail_on_second_layer(monkeypatch, error):
    """Make the second call of write_arrays (the second layer) raise ``error``."""
    original = hdf5_format.write_arrays
    calls = []

    def failing(group, names, arrays):
        calls.append(group.name)
        if len(calls) == 2:
            raise error
        return original(group, names, arrays)

    monkeypatch.setattr(hdf5_format, "write_arrays", failing)
    return calls


@pytest.mark.parametrize("error", [OSError("disk full (simulated)"), KeyboardInterrupt()])
def test_failed_save_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch, error):
    path = tmp_path / "model.h5"
    build_sequential().save(path)
    before = path.read_bytes()
    calls = fail_on_second_layer(monkeypatch, error)
    with pytest.raises(type(error)):
        build_sequential().save(path)
    assert len(calls) == 2  # it did fail midway through the weights
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["model.h5"]
    monkeypatch.undo()
    mk.models.load_model(path)  # still a valid file


def test_failed_save_weights_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "w.h5"
    build_sequential().save_weights(path)
    before = path.read_bytes()
    fail_on_second_layer(monkeypatch, OSError("simulated"))
    with pytest.raises(OSError, match="simulated"):
        build_sequential().save_weights(path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["w.h5"]


def test_failed_first_save_leaves_nothing(tmp_path, monkeypatch):
    fail_on_second_layer(monkeypatch, OSError("simulated"))
    with pytest.raises(OSError):
        build_sequential().save(tmp_path / "model.h5")
    assert os.listdir(tmp_path) == []


def test_process_killed_mid_save_leaves_the_old_file_intact(tmp_path):
    # A hard crash runs no cleanup: the temporary file stays, the old file is untouched.
    path = tmp_path / "model.h5"
    build_sequential().save(path)
    before = path.read_bytes()
    script = textwrap.dedent(f"""
        import os
        from minikeras.saving import hdf5_format
        from tests.saving.conftest import build_sequential
        original = hdf5_format.write_arrays
        calls = []
        def crash(group, names, arrays):
            calls.append(1)
            if len(calls) == 2:
                os._exit(3)
            return original(group, names, arrays)
        hdf5_format.write_arrays = crash
        build_sequential().save({str(path)!r})
    """)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    result = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, timeout=120)
    assert result.returncode == 3, result.stderr.decode()
    assert path.read_bytes() == before
    leftovers = [name for name in os.listdir(tmp_path) if name != "model.h5"]
    assert len(leftovers) == 1 and leftovers[0].startswith(".model.h5.minikeras-tmp-")
    # The next save to that target removes the dead process's temporary.
    build_sequential().save(path)
    assert sorted(os.listdir(tmp_path)) == ["model.h5"]


def test_overwrite_false_refuses_an_existing_file(tmp_path):
    path = tmp_path / "model.h5"
    build_sequential().save(path)
    before = path.read_bytes()
    with pytest.raises(FileExistsError, match="overwrite=False"):
        build_sequential().save(path, overwrite=False)
    with pytest.raises(FileExistsError, match="model.h5"):
        build_sequential().save_weights(path, overwrite=False)
    assert path.read_bytes() == before
    build_sequential().save(tmp_path / "new.h5", overwrite=False)  # fine when absent


def test_save_keeps_permissions_of_the_replaced_file(tmp_path):
    path = tmp_path / "model.h5"
    build_sequential().save(path)
    os.chmod(path, 0o640)
    build_sequential().save(path)
    assert os.stat(path).st_mode & 0o777 == 0o640


def test_missing_file(tmp_path):
    missing = tmp_path / "missing.h5"
    with pytest.raises(FileNotFoundError, match="missing.h5"):
        mk.models.load_model(missing)
    with pytest.raises(FileNotFoundError, match="missing.h5"):
        build_sequential().load_weights(missing)


def test_not_an_hdf5_file(tmp_path):
    path = tmp_path / "notes.h5"
    path.write_text("not a model")
    with pytest.raises(ValueError, match="notes.h5' is not an HDF5 file"):
        mk.models.load_model(path)
    with pytest.raises(ValueError, match="is not an HDF5 file"):
        build_sequential().load_weights(path)


def test_folder_instead_of_file(tmp_path):
    with pytest.raises(IsADirectoryError):
        mk.models.load_model(tmp_path)
    with pytest.raises(ValueError, match="Invalid filepath extension"):  # as Keras 3
        build_sequential().save(tmp_path)
    (tmp_path / "model.keras").mkdir()
    with pytest.raises(IsADirectoryError):
        build_sequential().save(tmp_path / "model.keras")


def test_missing_folder_when_saving(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        build_sequential().save(tmp_path / "no" / "model.h5")


def test_weights_file_is_not_a_model(tmp_path):
    build_sequential().save_weights(tmp_path / "w.h5")
    with pytest.raises(ValueError, match="No model config found.*load_weights"):
        mk.models.load_model(tmp_path / "w.h5")


def test_hdf5_file_without_weights(tmp_path):
    import h5py

    with h5py.File(tmp_path / "other.h5", "w") as handle:
        handle.attrs["something"] = 1
    with pytest.raises(ValueError, match="holds no layer weights"):
        build_sequential().load_weights(tmp_path / "other.h5")


def test_save_rejects_non_models(tmp_path):
    from minikeras.saving import save_model

    with pytest.raises(TypeError, match="expects a minikeras Model, received Dense"):
        save_model(mk.layers.Dense(2), tmp_path / "m.h5")


def test_open_h5py_file_objects_are_accepted(data, tmp_path):
    import h5py

    model = build_sequential()
    model.save(tmp_path / "m.h5")
    with h5py.File(tmp_path / "m.h5", "r") as handle:
        restored = mk.models.load_model(handle)
        other = build_sequential()
        other.load_weights(handle)
    for a, b, c in zip(restored.get_weights(), other.get_weights(), model.get_weights()):
        assert (a == c).all() and (b == c).all()


def test_stale_temporaries_of_dead_processes_only_are_removed(tmp_path):
    path = tmp_path / "model.h5"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    stale = tmp_path / f".model.h5.minikeras-tmp-{dead_pid}-abcd1234"
    live = tmp_path / f".model.h5.minikeras-tmp-{os.getppid()}-abcd1234"  # a process that is running
    other_target = tmp_path / f".other.h5.minikeras-tmp-{dead_pid}-abcd1234"
    unrelated = tmp_path / ".model.h5.backup"
    for leftover in (stale, live, other_target, unrelated):
        leftover.write_bytes(b"partial")
    build_sequential().save(path)
    assert not stale.exists()
    assert live.exists() and other_target.exists() and unrelated.exists()


@pytest.mark.parametrize("bad", ["", "   "])
def test_empty_path_is_refused_before_anything_is_written(tmp_path, monkeypatch, bad):
    monkeypatch.chdir(tmp_path)
    model = build_sequential()
    with pytest.raises(ValueError, match="expected a file path"):
        model.save(bad)
    with pytest.raises(ValueError, match="expected a file path"):
        model.save_weights(bad)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", ["mydir", "model.bin", "model.weights", "model.keras.tmp"])
def test_save_refuses_a_name_without_a_model_suffix_as_keras_3(tmp_path, name):
    # It once wrote HDF5 under any name; Keras 3 explains the suffixes instead.
    with pytest.raises(ValueError, match=r"Invalid filepath extension for saving.*`\.keras`.*`\.h5`.*\.weights\.h5"):
        build_sequential().save(tmp_path / name)
    assert os.listdir(tmp_path) == []
    build_sequential().save(tmp_path / "model.hdf5")  # the legacy suffixes stay accepted
    build_sequential().save(tmp_path / name, save_format="h5")  # an explicit format names the layout
    assert mk.models.load_model(tmp_path / name).count_params() == build_sequential().count_params()
