"""Every size a file names counts against one loading budget before anything
is allocated (issue 36, items 1, 4 and 5): what a probe batch would return
through a layer or a ``keras.ops`` node (``RepeatVector(n)``, ``ops.repeat``), OOV counts, ``max_tokens``, a
FeatureSpace's ``crossing_dim``, hash bins, sequence lengths, embedding
rows, the vocabularies of the assets (one budget for all of them, checked
as they stream against the ``vocabulary_size`` declared), and the datasets
``KerasFileEditor`` inflates.

The crafted files (craft_configs.py) make an unfixed loader allocate
150-300 MB; each is loaded in one fresh process (rss_probe.py) that reports
the outcome and how much its peak RSS grew.
"""
import os
import re
import zipfile

import pytest

import minikeras as mk
from minikeras.saving import FileLoadError, keras_assets

import craft_configs
from test_security_memory import probe

_RSS_BOUND = 100 * 2**20
_BUDGET = "more than the file's weights justify"
# A layer's declared output (CategoryEncoding's, Hashing's) is refused before its own encoding check runs.
_ENCODING = r"(multi_hot encoding|output of (CategoryEncoding|Hashing) '\w+' on a probe batch)"

CASES = {  # name: (kind, craft, expected message)
    "oov.keras": ("model", lambda path: craft_configs.huge_oov_file(path, 2 * 10**7),
                  r"OOV tokens of StringLookup 'strings' \(num_oov_indices=20000000\).*" + _BUDGET),
    "padded.keras": ("model", lambda path: craft_configs.huge_padded_multi_hot_file(path, 2 * 10**7),
                     r"multi_hot encoding of layer 'bag' of shape \(2, 20000000\).*" + _BUDGET),
    "crossing.keras": ("model", lambda path: craft_configs.huge_crossing_file(path, 10**7),
                       _ENCODING + r" of shape \(2, 10000000\).*" + _BUDGET),
    "hash_bins.keras": ("model", lambda path: craft_configs.huge_hash_bins_file(path, 10**7),
                        _ENCODING + r" of shape \(2, 10000000\).*" + _BUDGET),
    "sequence.keras": ("model", lambda path: craft_configs.huge_sequence_file(path, 2 * 10**7),
                       r"token ids of layer 'vectorize' of shape \(2, 20000000\).*" + _BUDGET),
    "embedding.keras": ("model", lambda path: craft_configs.huge_embedding_file(path, 10**8),
                        r"weight 'embed/embeddings' of shape \(100000000, 4\).*" + _BUDGET),
    "repeat_vector.keras": ("model", lambda path: craft_configs.huge_repeat_vector_file(path, 10**7),
                            r"output of RepeatVector 'repeat' on a probe batch of shape \(2, 10000000, 4\).*" + _BUDGET),
    "op_node.keras": ("model", lambda path: craft_configs.huge_op_node_file(path, 10**7),
                      r"output of SymbolicOperation 'repeat' on a probe batch of shape \(2, 40000000\).*" + _BUDGET),
    "declared_assets.keras": ("model", lambda path: craft_configs.large_assets_file(path, 600_000, declared=7),
                              r"string_lookup/vocabulary.txt.*gives StringLookup 'strings' more than the 7 entries"),
    "undeclared_assets.keras": ("model", lambda path: craft_configs.large_assets_file(path, 400_000),
                                r"vocabulary of StringLookup 'strings_masked' \(entry \d+\).*" + _BUDGET),
    "editor.weights.h5": ("editor", lambda path: craft_configs.many_gzip_datasets_file(path, 300),
                          r"the sum of its 300 compressed datasets declares 314572800 bytes.*decompression bomb"),
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """One rss_probe.py run over every crafted file: {name: report}."""
    folder = tmp_path_factory.mktemp("sizes")
    paths = {name: craft(str(folder / name)) for name, (_, craft, _) in CASES.items()}
    jobs = [f"{CASES[name][0]}={path}" for name, path in paths.items()]
    found = dict(probe(jobs[0], jobs[1:], keyed=True))
    return {name: (paths[name], found[path]) for name, path in paths.items()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_size_the_file_names_is_refused_before_it_is_allocated(reports, name):
    path, report = reports[name]
    assert os.path.getsize(path) < 4 * 2**20, path
    assert report["outcome"] == "FileLoadError", report
    assert re.search(CASES[name][2], report["message"]), report
    assert report["peak_rss_growth_bytes"] < _RSS_BOUND, report


# ------------------------------------------------------------------ in this process
def test_the_budget_is_lifted_for_a_trusted_file(tmp_path):
    path = craft_configs.huge_hash_bins_file(str(tmp_path / "bins.keras"), 4 * 10**6)  # 96 MB of encoding: over
    with pytest.raises(FileLoadError, match=r"multi_hot encoding of shape \(2, 4000000\)"):
        mk.models.load_model(path)
    model = mk.models.load_model(path, max_bytes=None)
    assert model.get_layer("hash").num_bins == 4 * 10**6 and model.outputs[0].shape == (None, 4 * 10**6)


def test_sizes_within_the_budget_load_and_work(tmp_path):
    import numpy

    path = craft_configs.huge_padded_multi_hot_file(str(tmp_path / "padded.keras"), 1000)
    encoded = mk.models.load_model(path)(numpy.array([["a", "z"]], dtype=object)).numpy()
    assert encoded.shape == (1, 1000) and encoded[0, :3].tolist() == [1.0, 1.0, 0.0]  # OOV "z", then "a"
    path = craft_configs.huge_crossing_file(str(tmp_path / "crossing.keras"), 64)
    space = mk.models.load_model(path)
    assert space.crossers["a_X_b"].num_bins == 64
    assert space({"a": numpy.array([1, 2]), "b": numpy.array(["x", "q"])}).shape[-1] >= 64


def test_a_one_hot_encoding_allocates_its_output_only(tmp_path):
    # numpy.eye(depth) made a depth x depth matrix to pick rows from: 10**5 bins were 40 GB.
    layer = mk.layers.CategoryEncoding(num_tokens=10**5, output_mode="one_hot")
    out = layer(mk.ops.convert_to_tensor([[3], [99999], [10**5]])).numpy()
    assert out.shape == (3, 10**5) and out.sum(axis=1).tolist() == [1.0, 1.0, 0.0] and out[1, 99999] == 1.0
    lookup = mk.layers.IntegerLookup(vocabulary=list(range(10**5)), output_mode="one_hot")
    out = lookup(mk.ops.convert_to_tensor([7, -5])).numpy()
    assert out.shape == (2, 10**5 + 1) and out[0, 8] == 1.0 and out[1, 0] == 1.0 and out.sum() == 2.0


def test_a_sequence_length_that_is_not_a_positive_int_is_refused():
    for bad in (0, -3, 2.5, "4", True):
        with pytest.raises(ValueError, match="output_sequence_length must be None or a positive int"):
            mk.layers.TextVectorization(output_sequence_length=bad)


# ------------------------------------------------------------------ vocabulary assets
def test_all_the_assets_of_a_file_share_one_byte_budget(tmp_path, monkeypatch):
    # Each of the fixture's three vocabularies is under 64 bytes; together they are over.
    sizes = [len(data) for name, data in craft_configs.fixture_members("lookups").items() if name.startswith("assets")]
    assert max(sizes) < 64 < sum(sizes)
    monkeypatch.setattr(keras_assets, "MAX_VOCABULARY_BYTES", 64)
    with pytest.raises(FileLoadError, match="vocabulary.txt.*more than the vocabularies of one file can be"):
        mk.models.load_model(os.path.join(craft_configs.FIXTURES, "lookups.keras"))


def test_a_vocabulary_longer_than_declared_stops_at_the_first_extra_entry(tmp_path, monkeypatch):
    path = craft_configs.large_assets_file(str(tmp_path / "longer.keras"), 50, declared=7)
    seen = []
    original = keras_assets._VocabularyReader.feed
    monkeypatch.setattr(keras_assets, "_READ_BYTES", 16)
    monkeypatch.setattr(keras_assets._VocabularyReader, "feed",
                        lambda self, chunk, final=False: (seen.append(len(chunk)), original(self, chunk, final))[1])
    with pytest.raises(FileLoadError, match="more than the 7 entries its config says"):
        mk.models.load_model(path)
    assert sum(seen) < 100  # a few 16-byte chunks of ~250 bytes were read, not the rest


def _streamed(tmp_path, monkeypatch, data, chunk, integer=False):
    layer = mk.layers.IntegerLookup() if integer else mk.layers.StringLookup()
    path = craft_configs.write_zip(str(tmp_path / f"v{chunk}.zip"), {"v.txt": data})
    monkeypatch.setattr(keras_assets, "_READ_BYTES", chunk)
    with zipfile.ZipFile(path) as archive:
        return keras_assets.read_vocabulary(archive, "v.txt", layer, "'v.zip'")


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 2**20])
def test_streaming_reads_what_keras_reads_from_the_whole_text(tmp_path, monkeypatch, chunk):
    text = "[UNK]\r\nchat\rémile\n\nox\u2028naïve\r\n\n\n"
    expected = text.splitlines()
    while expected and expected[-1] == "":
        expected.pop()
    assert _streamed(tmp_path, monkeypatch, text.encode(), chunk) == expected
    assert _streamed(tmp_path, monkeypatch, b"-1\n7\n3\n\n", chunk, integer=True) == [-1, 7, 3]


@pytest.mark.parametrize("data, message", [(b"[UNK]\ncat\n\xff\xfe", "not UTF-8"),
                                           (b"-1\n7\nseven", "not an integer")])
def test_a_malformed_vocabulary_is_refused_while_streaming(tmp_path, monkeypatch, data, message):
    with pytest.raises(FileLoadError, match=message):
        _streamed(tmp_path, monkeypatch, data, 3, integer=b"seven" in data)


def test_real_vocabularies_load_within_the_budget(tmp_path):
    # 20,000 tokens in each of the three lookups load, with or without the vocabulary_size they declare.
    for declared in (None, 20_001):
        path = craft_configs.large_assets_file(str(tmp_path / f"real{declared}.keras"), 20_000, declared=declared)
        if declared is not None:
            path = craft_configs.with_config_edit(path, _declare_each)
        model = mk.models.load_model(path)
        sizes = [model.get_layer(name).vocabulary_size() for name in ("strings", "strings_masked", "integers")]
        assert sizes == [20_001, 20_003, 20_001]
        assert model.get_layer("strings").get_vocabulary()[:3] == ["[UNK]", "0", "1"]


def _declare_each(spec):
    specials = {"strings": 1, "strings_masked": 3, "integers": 1}
    for layer in spec["config"]["layers"]:
        if layer["config"].get("name") in specials:
            layer["config"]["vocabulary_size"] = 20_000 + specials[layer["config"]["name"]]
