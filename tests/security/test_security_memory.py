"""A small crafted file cannot make loading allocate gigabytes (issue 12, high).

Each file is loaded in a fresh Python process (ru_maxrss only grows), which
reports the error and how much its peak RSS grew; the bound is 200 MB.
"""
import json
import os
import subprocess
import sys

import pytest

import minikeras as mk
from minikeras.saving import FileLoadError

import craft_files

_PROBE = os.path.join(os.path.dirname(__file__), "rss_probe.py")
_RSS_BOUND = 200 * 2**20


def probe(kind, paths, keyed=False):
    """Run rss_probe.py on ``paths``; a dict path -> report (``keyed``: a list of
    (path, report), for ``kind`` and ``paths`` given as ``KIND=PATH``)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    result = subprocess.run([sys.executable, _PROBE, kind, *map(str, paths)], capture_output=True, text=True,
                            cwd=root, timeout=300, env={**os.environ, "PYTHONPATH": root})
    assert result.returncode == 0, result.stderr
    reports = [json.loads(line) for line in result.stdout.splitlines()]
    if keyed:
        return [(report["path"], report) for report in reports]
    return {report["path"]: report for report in reports}


def test_crafted_model_files_are_refused_within_bounded_memory(tmp_path):
    files = {
        "huge_dataset": ("huge_dataset", "FileLoadError", "declares .* bytes"),
        "huge_layer_config": ("huge_layer_config", "FileLoadError", "would allocate weight"),
        "huge_input_config": ("huge_input_config", "FileLoadError", "probe batch"),
    }
    paths = {}
    for name in files:
        paths[name] = str(tmp_path / f"{name}.h5")
        getattr(craft_files, f"{name}_file")(paths[name])
        assert os.path.getsize(paths[name]) < 64 * 1024
    reports = probe("model", paths.values())
    for name, (_, outcome, pattern) in files.items():
        report = reports[paths[name]]
        assert report["outcome"] == outcome, report
        assert pytest.importorskip("re").search(pattern, report["message"]), report
        assert report["peak_rss_growth_bytes"] < _RSS_BOUND, report


def test_crafted_dataset_files_are_refused_within_bounded_memory(tmp_path):
    files = craft_files.all_crafted_datasets(str(tmp_path))
    idx = probe("idx", [files["idx_raw_bomb"], files["idx_gzip_bomb"], files["idx_under_cap_truncated"]])
    for name in ("idx_raw_bomb", "idx_gzip_bomb"):
        report = idx[files[name]]
        assert report["outcome"] == "CorruptDatasetError" and "over the" in report["message"], report
        assert report["peak_rss_growth_bytes"] < _RSS_BOUND, report
    report = idx[files["idx_under_cap_truncated"]]
    assert report["outcome"] == "CorruptDatasetError" and "truncated" in report["message"], report
    assert report["peak_rss_growth_bytes"] < _RSS_BOUND, report
    report = probe("cifar", [files["cifar_huge_member"]])[files["cifar_huge_member"]]
    assert report["outcome"] == "CorruptDatasetError" and "declares 8589934592 bytes" in report["message"], report
    assert report["peak_rss_growth_bytes"] < _RSS_BOUND, report


def test_dataset_shape_is_checked_before_reading(tmp_path):
    # In process: a legitimate file whose kernel dataset has another shape is
    # refused from the metadata, naming the layer and both shapes.
    path = tmp_path / "huge.h5"
    craft_files.huge_dataset_file(path, shape=(5, 3), fill=True)
    with pytest.raises(ValueError, match="Shape mismatch.*expects shape \\(4, 3\\).*\\(5, 3\\)"):
        mk.models.load_model(path)


def test_max_bytes_limits_declared_sizes(tmp_path):
    path = tmp_path / "model.h5"
    craft_files.save_plain_model(path)
    assert mk.models.load_model(path, max_bytes=10_000) is not None
    with pytest.raises(FileLoadError, match="over the limit max_bytes=16"):
        mk.models.load_model(path, max_bytes=16)


def test_a_sparse_dataset_under_the_limit_is_refused(tmp_path):
    # Declared 4 x 3 float32 but chunked with nothing written: not a weight file.
    path = tmp_path / "sparse.h5"
    craft_files.huge_dataset_file(path, shape=(4, 3))
    with pytest.raises(FileLoadError, match="declares 48 bytes but the file stores only 0"):
        mk.models.load_model(path)


def test_weights_are_not_initialised_when_a_file_replaces_them(tmp_path, monkeypatch):
    path = tmp_path / "model.h5"
    model = craft_files.save_plain_model(path)
    calls = []
    original = mk.initializers.GlorotUniform.__call__
    monkeypatch.setattr(mk.initializers.GlorotUniform, "__call__",
                        lambda self, *args, **kwargs: calls.append(args) or original(self, *args, **kwargs))
    restored = mk.models.load_model(path)
    assert calls == []
    for saved, loaded in zip(model.get_weights(), restored.get_weights()):
        assert (saved == loaded).all()


def test_the_rebuild_budget_counts_weights_and_can_be_lifted():
    from minikeras._support import load_budget

    with load_budget.loading_budget(1000, "'f.h5'"):
        load_budget.charge((100,), "float32", "weight 'a'")  # 400 bytes of a 64 MiB floor
        with pytest.raises(FileLoadError, match="'f.h5': rebuilding the model would allocate weight 'b'"):
            load_budget.charge((2**25,), "float32", "weight 'b'")
        load_budget.charge((2**23,), "float32", "a probe", cumulative=False)
        load_budget.charge((2**23,), "float32", "a probe", cumulative=False)  # temporary: not accumulated
    assert not load_budget.loading()
    with load_budget.loading_budget(0, "'f.h5'", max_bytes=None):
        load_budget.charge((2**40,), "float32", "weight 'c'")  # counted against nothing: the caller trusts the file


def test_a_compressed_dataset_inflating_past_any_real_ratio_is_refused(tmp_path):
    import h5py

    path = tmp_path / "bomb.h5"
    craft_files.save_plain_model(path)
    with h5py.File(path, "r+") as handle:
        group = handle["model_weights/hidden"]
        del group["hidden/kernel"]
        dataset = group.create_dataset("hidden/kernel", shape=(2**14, 2**14), dtype="float32", chunks=(64, 64),
                                       compression="gzip")
        dataset[:64, :64] = 0.0  # one chunk stored; the rest is "fill value": 1 GiB from a few bytes
    with pytest.raises(FileLoadError, match="from .* compressed bytes .*, more than real weights compress"):
        mk.models.load_model(path)


def test_optimizer_state_larger_than_any_optimizer_keeps_is_refused_before_reading(tmp_path):
    import h5py
    import numpy

    path = tmp_path / "state.h5"
    model = craft_files.save_plain_model(path)
    model.fit(numpy.zeros((4, 4), "float32"), numpy.zeros((4, 2), "float32"), verbose=0)
    model.save(path)
    with h5py.File(path, "r+") as handle:
        group = handle["optimizer_weights"]
        name = [n.decode() for n in group.attrs["weight_names"]][-1]
        del group[name]
        # 2 MiB, really stored (a compressed one would be refused as a bomb first)
        group.create_dataset(name, data=numpy.zeros((2**9, 2**10), "float32"))
    with pytest.raises(FileLoadError, match=r"optimizer state declares 209\d{4} bytes.*more than any optimizer"):
        mk.models.load_model(path)
    assert mk.models.load_model(path, compile=False) is not None
