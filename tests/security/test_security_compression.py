"""Compression bombs are refused before they inflate (issue 27).

Each crafted file (craft_bombs.py: under 2 MiB on disk, inflating to
160-640 MiB) is loaded in a fresh Python process by rss_probe.py, which
reports the error and the growth of the process's peak RSS; the bound is
200 MB. Before the fix these files loaded at 0.4-1.5 GB of peak RSS.
"""
import os
import re
import zipfile

import h5py
import numpy
import pytest

import minikeras as mk
from minikeras.saving import FileLoadError, _inflation

import craft_bombs
from test_security_memory import probe

_RSS_BOUND = 200 * 2**20
_BOMB = "more than real weights compress"


def _crafted(folder):
    """{name: (path, expected message)} of every model-file bomb."""
    def path(name):
        return os.path.join(folder, name)

    craft_bombs.keras_zip_bomb(path("zip.keras"))
    craft_bombs.keras_nested_bomb(path("nested_gzip.keras"), "gzip")
    craft_bombs.keras_nested_bomb(path("nested_lzf.keras"), "lzf", craft_bombs.LZF_UNITS)
    for compression in ("gzip", "lzf", "szip"):
        units = craft_bombs.LZF_UNITS if compression == "lzf" else craft_bombs.HUGE_UNITS
        craft_bombs.h5_dataset_bomb(path(f"{compression}.h5"), compression, units)
    return {
        "zip.keras": (path("zip.keras"), "member 'model.weights.h5' declares 4026\\d{5} bytes from .*" + _BOMB),
        # its weights member passes (compressed twice, it is small), so its config meets the budget
        "nested_gzip.keras": (path("nested_gzip.keras"), "rebuilding the model would allocate weight 'hidden/kernel'"),
        "nested_lzf.keras": (path("nested_lzf.keras"), "member 'model.weights.h5' declares .*" + _BOMB),
        "gzip.h5": (path("gzip.h5"), "dataset '/model_weights/hidden/hidden/kernel' declares 536870912 bytes.*" + _BOMB),
        "lzf.h5": (path("lzf.h5"), "dataset '/model_weights/hidden/hidden/kernel' declares 134217728 bytes.*" + _BOMB),
        "szip.h5": (path("szip.h5"), "dataset '/model_weights/hidden/hidden/kernel' declares 536870912 bytes.*" + _BOMB),
    }


@pytest.fixture(scope="module")
def crafted(tmp_path_factory):
    """The bombs, and one rss_probe.py run over all of them (model and weights loads)."""
    folder = tmp_path_factory.mktemp("bombs")
    files = _crafted(str(folder))
    chunked = str(folder / "chunked.weights.h5")
    craft_bombs.chunked_huge_weights(chunked)
    jobs = [f"model={path}" for path, _ in files.values()] + [f"weights={files['zip.keras'][0]}", f"weights={chunked}"]
    reports = [report for path, report in probe(jobs[0], jobs[1:], keyed=True)]
    return files, chunked, {(report["kind"], report["path"]): report for report in reports}


def test_compression_bombs_are_refused_within_bounded_memory(crafted):
    files, _, reports = crafted
    for path, _ in files.values():
        assert os.path.getsize(path) < 2 * 2**20, path
    reports = {path: report for (kind, path), report in reports.items() if kind == "model"}
    for name, (path, pattern) in files.items():
        report = reports[path]
        assert report["outcome"] == "FileLoadError", (name, report)
        assert re.search(pattern, report["message"]), (name, report)
        assert report["peak_rss_growth_bytes"] < _RSS_BOUND, (name, report)


def test_load_weights_reads_no_more_than_the_model_needs(crafted):
    # The zip bomb into a 4 -> 3 Dense model: the member is refused from the
    # directory (the model needs a few KB plus HDF5's metadata); a chunked
    # dataset declaring 2**40 bytes is refused by its shape, never read.
    files, chunked, all_reports = crafted
    bomb = files["zip.keras"][0]
    reports = {path: report for (kind, path), report in all_reports.items() if kind == "weights"}
    assert reports[bomb]["outcome"] == "FileLoadError", reports[bomb]
    assert re.search(r"4026\d{5} bytes, more than the weights and optimizer state of model '\w+' can be",
                     reports[bomb]["message"]), reports[bomb]
    assert reports[chunked]["outcome"] == "ValueError", reports[chunked]
    assert "expects shape (4, 3), the file has (4, 274877906944)" in reports[chunked]["message"]
    for report in reports.values():
        assert report["peak_rss_growth_bytes"] < _RSS_BOUND, report


def test_the_model_need_bounds_the_weights_member():
    model = mk.Sequential([mk.layers.Dense(3, input_shape=(4,))])
    values = 4 * 3 + 3
    assert _inflation.model_needed_bytes(model) == values * 8 * 5 + _inflation.HDF5_OVERHEAD_BYTES


def test_many_small_inflating_datasets_do_not_add_up(tmp_path):
    # Each dataset alone stays inside the 1 MiB allowance; together they are a bomb.
    path = tmp_path / "many.weights.h5"
    with h5py.File(path, "w") as handle:
        for index in range(8):
            handle.create_dataset(f"layers/extra_{index}/vars/0", data=numpy.zeros((2**18,), "float32"),
                                  compression="gzip")
    from minikeras.saving import keras_weights_h5

    with h5py.File(path, "r") as handle:
        with pytest.raises(FileLoadError, match="the sum of its 8 compressed datasets declares 8388608 bytes from .*" + _BOMB):
            keras_weights_h5.declared_bytes(handle, "'many.weights.h5'")
        assert keras_weights_h5.declared_bytes(handle, "'many.weights.h5'", max_bytes=None) == 8 * 2**20


def test_real_weights_compressed_still_load(tmp_path):
    # A .keras deflated (as zip tools and other writers may do) and an .h5 with
    # gzip-filtered datasets of real (random) weights: credible ratios, they load.
    mk.random.seed(0)
    model = mk.Sequential([mk.layers.Dense(64, input_shape=(32,), name="hidden"), mk.layers.Dense(2, name="head")])
    model.compile(optimizer="adam", loss="mse")
    path = tmp_path / "m.keras"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    restored = mk.models.load_model(path)
    for saved, loaded in zip(model.get_weights(), restored.get_weights()):
        numpy.testing.assert_array_equal(saved, loaded)
    weights = tmp_path / "w.weights.h5"
    model.save_weights(weights)
    with h5py.File(weights, "r+") as handle:
        kernel = handle["layers/dense/vars/0"][()]
        del handle["layers/dense/vars/0"]
        handle.create_dataset("layers/dense/vars/0", data=kernel, compression="gzip", shuffle=True)
    fresh = mk.Sequential([mk.layers.Dense(64, input_shape=(32,), name="hidden"), mk.layers.Dense(2, name="head")])
    fresh.load_weights(weights)
    numpy.testing.assert_array_equal(fresh.get_weights()[0], model.get_weights()[0])
