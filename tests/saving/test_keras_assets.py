"""Lookup vocabularies in a ``.keras`` file's ``assets/`` (saving/keras_assets.py).

The fixtures (tests/saving/make_keras_asset_fixtures.py) are Keras 3.15
models whose adapted StringLookup, IntegerLookup and TextVectorization keep
their vocabulary only in ``assets/<path>/vocabulary.txt`` (and their TF-IDF
weights in ``<path>/vars/idf_weights``): loaded here they must give Keras's
outputs, and saved here they must hold the same assets. The last test runs
only where Keras is importable: Keras reads minikeras's files back.
"""
import io
import json
import os
import zipfile

import numpy
import pytest

import minikeras as mk
from minikeras.saving import _checksum

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras_assets")
NAMES = ("lookups", "tf_idf_lookups", "encoded", "text", "text_tf_idf")


def fixture(name):
    return os.path.join(FIXTURES, f"{name}.keras")


def data(name):
    arrays = numpy.load(os.path.join(FIXTURES, f"{name}.npz"))
    pick = lambda prefix: [arrays[key] for key in sorted(arrays) if key.startswith(prefix)]  # noqa: E731
    return pick("x"), pick("y"), pick("adapt")


def outputs(model, inputs):
    result = model(inputs if len(inputs) > 1 else inputs[0])
    return [numpy.asarray(y.numpy()) for y in (result if isinstance(result, list) else [result])]


def assert_keras_outputs(model, name):
    inputs, expected, _ = data(name)
    for actual, wanted in zip(outputs(model, inputs), expected, strict=True):
        assert actual.shape == wanted.shape
        numpy.testing.assert_allclose(actual, wanted, rtol=1e-6, atol=1e-6)


def assets_of(path):
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist() if name.startswith("assets/")}


def rewrite(path, target, config=None, members=None, drop=()):
    """Copy the archive at ``path`` to ``target`` with ``config`` (a function of the
    spec) applied, members replaced or dropped; the CRC minikeras checks is updated."""
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(target, "w") as out:
        spec = json.loads(source.read("config.json"))
        text = json.dumps(config(spec) if config else spec)
        metadata = json.loads(source.read("metadata.json"))
        if _checksum.CONFIG_ATTRIBUTE in metadata:
            metadata[_checksum.CONFIG_ATTRIBUTE] = _checksum.config_crc32(text)
        for name in source.namelist():
            if name in drop or name in (members or {}):
                continue
            content = {"config.json": text, "metadata.json": json.dumps(metadata)}.get(name)
            out.writestr(name, content if content is not None else source.read(name))
        for name, content in (members or {}).items():
            out.writestr(name, content)
    return target


def without_inline_vocabularies(spec):
    """The spec with every ``vocabulary``/``idf_weights`` None, as Keras writes an adapted layer."""
    if isinstance(spec, dict):
        return {key: None if key in ("vocabulary", "idf_weights") else without_inline_vocabularies(value)
                for key, value in spec.items()}
    if isinstance(spec, list):
        return [without_inline_vocabularies(value) for value in spec]
    return spec


@pytest.mark.parametrize("name", NAMES)
def test_a_keras_file_with_vocabularies_in_its_assets_gives_keras_outputs(name):
    assert_keras_outputs(mk.models.load_model(fixture(name)), name)


def test_the_vocabulary_is_the_assets_with_its_special_tokens_first():
    model = mk.models.load_model(fixture("lookups"))
    assert model.get_layer("strings").get_vocabulary() == ["[UNK]", "dog", "cat", "émile", "ox", "fish", "bird"]
    assert model.get_layer("strings_masked").get_vocabulary()[:3] == ["[MASK]", "[UNK]", "[UNK]"]
    assert model.get_layer("integers").get_vocabulary() == [-1, 7, 3, 42, 11, 9, 5]
    text = mk.models.load_model(fixture("text"))
    assert text.get_layer("sequences").get_vocabulary()[:3] == ["", "[UNK]", "the"]  # the mask token "" first


@pytest.mark.parametrize("name", NAMES)
def test_minikeras_writes_the_assets_keras_writes(name, tmp_path):
    model = mk.models.load_model(fixture(name))
    model.save(tmp_path / "again.keras")
    assert assets_of(tmp_path / "again.keras") == assets_of(fixture(name))  # same members, same bytes
    assert_keras_outputs(mk.models.load_model(tmp_path / "again.keras"), name)


@pytest.mark.parametrize("name", ["tf_idf_lookups", "text_tf_idf"])
def test_tf_idf_weights_are_saved_where_keras_reads_them(name, tmp_path):
    import h5py

    model = mk.models.load_model(fixture(name))
    model.save(tmp_path / "again.keras")

    def idf_weights(path):
        with zipfile.ZipFile(path) as archive:
            with h5py.File(io.BytesIO(archive.read("model.weights.h5")), "r") as handle:
                found = {}
                handle.visititems(lambda key, item: found.__setitem__(key, item[()])
                                  if key.endswith("/idf_weights") else None)
                return found

    keras, ours = idf_weights(fixture(name)), idf_weights(tmp_path / "again.keras")
    assert sorted(ours) == sorted(keras) and keras
    for key in keras:
        numpy.testing.assert_allclose(ours[key], keras[key], rtol=1e-6)


def test_a_keras_weights_file_sets_the_tf_idf_weights_of_lookups_built_in_code(tmp_path):
    keras_model = mk.models.load_model(fixture("tf_idf_lookups"))
    model = mk.models.load_model(fixture("tf_idf_lookups"))
    for name in ("strings", "integers"):  # the same vocabularies, other weights: load_weights must replace them
        layer = model.get_layer(name)
        layer.set_vocabulary(layer.get_vocabulary(), idf_weights=numpy.ones(layer.vocabulary_size()))
    inputs, expected, _ = data("tf_idf_lookups")
    assert not numpy.allclose(outputs(model, inputs)[0], expected[0])
    model.load_weights(os.path.join(FIXTURES, "tf_idf_lookups.weights.h5"))
    assert_keras_outputs(model, "tf_idf_lookups")
    model.save_weights(tmp_path / "again.weights.h5")  # ... and minikeras writes them where Keras reads them
    fresh = mk.models.load_model(fixture("tf_idf_lookups"))
    fresh.get_layer("strings").set_vocabulary(fresh.get_layer("strings").get_vocabulary(), idf_weights=[0.0] * 7)
    fresh.load_weights(tmp_path / "again.weights.h5")
    for actual, wanted in zip(outputs(fresh, inputs), outputs(keras_model, inputs)):
        numpy.testing.assert_allclose(actual, wanted, rtol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_minikeras_files_load_from_their_assets_alone(name, tmp_path):
    # minikeras also keeps the vocabulary in the config; without it the assets must suffice.
    model = mk.models.load_model(fixture(name))
    model.save(tmp_path / "full.keras")
    stripped = rewrite(tmp_path / "full.keras", tmp_path / "stripped.keras", config=without_inline_vocabularies)
    assert "vocabulary\": [" not in zipfile.ZipFile(stripped).read("config.json").decode()
    assert_keras_outputs(mk.models.load_model(stripped), name)


def test_an_unadapted_lookup_round_trips_without_a_vocabulary(tmp_path):
    inputs = mk.Input((2,), dtype="string")
    model = mk.Model(inputs, mk.layers.StringLookup(name="fresh")(inputs))
    model.save(tmp_path / "fresh.keras")
    assert assets_of(tmp_path / "fresh.keras") == {"assets/layers/string_lookup/vocabulary.txt": b"[UNK]"}
    restored = mk.models.load_model(tmp_path / "fresh.keras")
    assert restored.get_layer("fresh").get_vocabulary() == ["[UNK]"]


def test_text_vectorization_adapts_tf_idf_as_keras():
    _, _, (texts,) = data("text_tf_idf")
    keras_layer = mk.models.load_model(fixture("text_tf_idf")).get_layer("weighted")
    layer = mk.layers.TextVectorization(output_mode="tf_idf")
    layer.adapt(texts)
    assert layer.get_vocabulary() == keras_layer.get_vocabulary()
    numpy.testing.assert_allclose(layer._lookup_layer._idf, keras_layer._lookup_layer._idf, rtol=1e-6)
    inputs, expected, _ = data("text_tf_idf")
    numpy.testing.assert_allclose(layer(inputs[0]).numpy(), expected[0], rtol=1e-6)
    rebuilt = mk.layers.TextVectorization.from_config(layer.get_config())  # the inline vocabulary and weights
    numpy.testing.assert_allclose(rebuilt(inputs[0]).numpy(), expected[0], rtol=1e-6)


def test_keras_reads_the_vocabularies_minikeras_writes(tmp_path):
    keras = pytest.importorskip("keras", reason="Keras is not installed here: the Keras -> minikeras -> Keras round "
                                                "trip runs only in an environment with Keras 3 (not in CI)")
    tensorflow = pytest.importorskip("tensorflow", reason="the Keras round trip needs the TensorFlow backend")
    for name in NAMES:
        model = mk.models.load_model(fixture(name))
        model.save(tmp_path / f"{name}.keras")
        # As written (vocabulary inline and in the assets), and from the assets alone as Keras writes them.
        stripped = rewrite(tmp_path / f"{name}.keras", tmp_path / f"{name}_assets.keras",
                           config=without_inline_vocabularies)
        for path in (tmp_path / f"{name}.keras", stripped):
            loaded = keras.saving.load_model(path)
            inputs, expected, _ = data(name)
            result = loaded([tensorflow.constant(x) for x in inputs] if len(inputs) > 1
                            else tensorflow.constant(inputs[0]))
            for actual, wanted in zip(result if isinstance(result, list) else [result], expected, strict=True):
                numpy.testing.assert_allclose(keras.ops.convert_to_numpy(actual), wanted, rtol=1e-6, atol=1e-6)
