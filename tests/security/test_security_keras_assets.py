"""A ``.keras`` file's ``assets/`` (lookup vocabularies, saving/keras_assets.py)
are data: read only under the exact member names the rebuilt model gives,
never extracted, capped in size before and while inflating, and a malformed
one is the library's FileLoadError naming the member and the layer."""
import io
import json
import os
import zipfile

import h5py
import numpy
import pytest

import minikeras as mk
from minikeras.saving import FileLoadError, UnsafeDeserializationError, keras_assets

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "saving", "fixtures", "keras_assets")
STRINGS = "assets/layers/string_lookup/vocabulary.txt"
INTEGERS = "assets/layers/integer_lookup/vocabulary.txt"


def members_of(name):
    with zipfile.ZipFile(os.path.join(FIXTURES, f"{name}.keras")) as archive:
        return {member: archive.read(member) for member in archive.namelist()}


def crafted(tmp_path, name, replace=None, drop=(), weights=None):
    """The fixture ``name`` with members replaced/dropped and ``weights(h5 file)`` applied to its weights."""
    members = {key: value for key, value in members_of(name).items() if key not in drop}
    members.update(replace or {})
    if weights is not None:
        buffer = io.BytesIO(members["model.weights.h5"])
        with h5py.File(buffer, "r+") as handle:
            weights(handle)
        members["model.weights.h5"] = buffer.getvalue()
    path = tmp_path / f"crafted_{name}.keras"
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    return path


def test_the_fixture_loads_untouched(tmp_path):
    model = mk.models.load_model(crafted(tmp_path, "lookups"))
    assert model.get_layer("strings").vocabulary_size() == 7


def test_a_vocabulary_that_is_not_utf8_is_refused(tmp_path):
    path = crafted(tmp_path, "lookups", replace={STRINGS: b"[UNK]\n\xff\xfe\ncat"})
    with pytest.raises(FileLoadError, match="string_lookup/vocabulary.txt.*StringLookup 'strings'.*not UTF-8"):
        mk.models.load_model(path)


def test_an_integer_vocabulary_with_a_word_is_refused(tmp_path):
    path = crafted(tmp_path, "lookups", replace={INTEGERS: b"-1\n7\nseven\n42\n11\n9\n5"})
    with pytest.raises(FileLoadError, match="IntegerLookup 'integers' holds a line that is not an integer"):
        mk.models.load_model(path)


def test_a_missing_vocabulary_is_an_error_not_an_empty_layer(tmp_path):
    path = crafted(tmp_path, "lookups", drop=(STRINGS,))
    with pytest.raises(FileLoadError, match="no 'assets/layers/string_lookup/vocabulary.txt'.*'strings' .7 entries"):
        mk.models.load_model(path)


def test_a_vocabulary_of_another_size_than_the_config_says_is_refused(tmp_path):
    path = crafted(tmp_path, "lookups", replace={STRINGS: "[UNK]\ndog\ncat".encode()})
    with pytest.raises(FileLoadError, match="gives StringLookup 'strings' 3 entries, its config says 7"):
        mk.models.load_model(path)


def test_a_repeated_token_is_refused(tmp_path):
    path = crafted(tmp_path, "lookups", replace={STRINGS: "[UNK]\ndog\ncat\ndog\nox\nfish\nbird".encode()})
    with pytest.raises(FileLoadError, match="does not fit StringLookup 'strings'.*repeats"):
        mk.models.load_model(path)


def test_a_vocabulary_over_the_cap_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(keras_assets, "MAX_VOCABULARY_BYTES", 16)
    with pytest.raises(FileLoadError, match="string_lookup/vocabulary.txt.*more than the vocabularies of one file can be"):
        mk.models.load_model(crafted(tmp_path, "lookups"))


def test_a_highly_compressed_vocabulary_is_refused(tmp_path):
    bomb = tmp_path / "bomb.keras"
    members = members_of("lookups")
    members[STRINGS] = b"[UNK]\n" + b"a" * (8 * 2**20)
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    with pytest.raises(FileLoadError, match="string_lookup/vocabulary.txt.*decompression bomb"):
        mk.models.load_model(bomb)


def test_members_whose_names_escape_the_archive_are_never_read_or_extracted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    escaping = {"assets/layers/../../../escaped/vocabulary.txt": members_of("lookups")[STRINGS],
                "/tmp/absolute/vocabulary.txt": members_of("lookups")[STRINGS],
                "assets/layers/string_lookup/../string_lookup/vocabulary.txt": members_of("lookups")[STRINGS]}
    path = crafted(tmp_path, "lookups", replace=escaping, drop=(STRINGS,))
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(FileLoadError, match="no 'assets/layers/string_lookup/vocabulary.txt'"):
        mk.models.load_model(path)  # only the exact name the model's structure gives is read
    assert sorted(os.listdir(tmp_path)) == before and not os.path.exists("/tmp/absolute")


def test_tf_idf_weights_must_be_present_finite_and_one_per_entry(tmp_path):
    weights = "layers/string_lookup/vars/idf_weights"
    with pytest.raises(FileLoadError, match="No TF-IDF weights for StringLookup 'strings'"):
        mk.models.load_model(crafted(tmp_path, "tf_idf_lookups", weights=lambda handle: handle.__delitem__(weights)))

    def shorter(handle):
        values = handle[weights][()]
        del handle[weights]
        handle[weights] = values[:3]

    with pytest.raises(FileLoadError, match=r"TF-IDF weights .*idf_weights.* have shape \(3,\), expected .*\(7,\)"):
        mk.models.load_model(crafted(tmp_path, "tf_idf_lookups", weights=shorter))

    def not_finite(handle):
        handle[weights][1] = numpy.nan

    with pytest.raises(FileLoadError, match="not all finite"):
        mk.models.load_model(crafted(tmp_path, "tf_idf_lookups", weights=not_finite))

    def text(handle):
        del handle[weights]
        handle[weights] = numpy.array([b"x"] * 7)

    with pytest.raises(FileLoadError, match="expected a numeric array"):
        mk.models.load_model(crafted(tmp_path, "tf_idf_lookups", weights=text))


def with_vocabulary_size(tmp_path, name, size):
    spec = json.loads(members_of(name)["config.json"])
    for layer in spec["config"]["layers"]:
        if "vocabulary_size" in layer["config"]:
            layer["config"]["vocabulary_size"] = size
    return crafted(tmp_path, name, replace={"config.json": json.dumps(spec)})


def test_a_vocabulary_size_that_is_not_a_count_is_refused(tmp_path):
    with pytest.raises(ValueError, match="vocabulary_size must be None or a non-negative int, received 'many'"):
        mk.models.load_model(with_vocabulary_size(tmp_path, "lookups", "many"))


def test_a_huge_declared_vocabulary_size_is_refused_before_anything_is_allocated(tmp_path):
    # The vocabulary it declares is charged when the layer is made (before its multi-hot encoding, as wide as
    # the declared size, is probed while the graph is rebuilt, and before the assets load).
    with pytest.raises(FileLoadError, match=r"vocabulary of StringLookup 'bag' \(vocabulary_size=1000000000000\).*"
                                            "more than the file's weights justify"):
        mk.models.load_model(with_vocabulary_size(tmp_path, "encoded", 10**12))


def test_a_config_naming_a_vocabulary_file_outside_the_archive_is_refused_in_safe_mode(tmp_path):
    # Keras keeps a vocabulary given as a path in the config, and refuses it in safe mode: so does minikeras.
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\nwords\n")
    spec = json.loads(members_of("lookups")["config.json"])
    for layer in spec["config"]["layers"]:
        if layer["config"].get("name") == "strings":
            layer["config"].update(vocabulary=str(outside), vocabulary_size=3)
    path = crafted(tmp_path, "lookups", replace={"config.json": json.dumps(spec)})
    with pytest.raises(UnsafeDeserializationError, match="'strings'.*vocabulary file .*outside.txt.*safe mode"):
        mk.models.load_model(path)
    trusted = mk.models.load_model(path, safe_mode=False)  # the file named wins over the asset, as in Keras
    assert trusted.get_layer("strings").get_vocabulary() == ["[UNK]", "secret", "words"]
