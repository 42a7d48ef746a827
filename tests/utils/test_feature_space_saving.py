"""FeatureSpace.save / models.load_model: a saved space (hashed features,
crosses, a Normalization's weights, lookup vocabularies) loads back adapted
with identical encodings; the file has Keras's layout (that of
fixtures/feature_space_keras.keras, written by Keras 3.15.1's
FeatureSpace.save); Keras's own file loads here with Keras's encodings; a
damaged file is refused clearly. tests/compat/test_keras_feature_space_file.py
checks live that Keras loads minikeras's file."""
import io
import json
import pathlib
import zipfile

import h5py
import numpy
import pytest

import minikeras as mk

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
FS = mk.utils.FeatureSpace


@pytest.fixture(scope="module")
def table():
    data = numpy.load(FIXTURES / "feature_space.npz")
    columns = {key[len("column_"):]: data[key] for key in data.files if key.startswith("column_")}
    extra = {key[len("extra_"):]: data[key] for key in data.files if key.startswith("extra_")}
    return data, columns, {**columns, **extra}


def _space(output_mode="concat"):
    return FS({"age": "float_normalized", "city": "string_categorical", "rooms": "integer_hashed",
               "tag": FS.string_hashed(num_bins=8), "zip": FS.integer_categorical(), "score": "float",
               "hours": FS.float_discretized(num_bins=4)},
              crosses=[FS.cross(("city", "rooms"), crossing_dim=8), ("tag", "zip")], crossing_dim=6,
              hashing_dim=16, output_mode=output_mode)


def _keras_space():
    """The space fixtures/record_feature_space.py saved with Keras."""
    return FS({"age": "float_normalized", "income": FS.float_rescaled(scale=0.01, offset=-0.5, name="income"),
               "score": "float", "hours": FS.float_discretized(num_bins=4, name="hours"),
               "city": "string_categorical", "rooms": FS.integer_categorical(num_oov_indices=1, name="rooms")})


def _layout(path):
    with zipfile.ZipFile(path) as archive:
        members = set(archive.namelist())
        spec = json.loads(archive.read("config.json"))
        groups = []
        with h5py.File(io.BytesIO(archive.read("model.weights.h5")), "r") as handle:
            handle.visititems(lambda name, item: groups.append(
                (name, item.shape if isinstance(item, h5py.Dataset) else dict(item.attrs).get("name"))))
        assets = {name: archive.read(name).decode() for name in members if name.startswith("assets/")}
    return members, spec, dict(groups), assets


@pytest.mark.parametrize("output_mode", ["concat", "dict"])
def test_saved_space_loads_back_with_identical_encodings(table, tmp_path, output_mode):
    _, _, columns = table
    space = _space(output_mode)
    space.adapt(columns)
    space.save(tmp_path / "space.keras")
    loaded = mk.models.load_model(tmp_path / "space.keras")
    assert isinstance(loaded, FS) and loaded.output_mode == output_mode
    assert sorted(loaded.crossers) == ["city_X_rooms", "tag_X_zip"]
    expected, again = space(columns), loaded(columns)
    if output_mode == "concat":
        assert expected.shape == (40, 1 + 5 + 4 + 16 + 1 + 8 + 4 + 8 + 6)
        numpy.testing.assert_array_equal(again.numpy(), expected.numpy())
    else:
        assert list(again) == list(expected)
        for name, value in expected.items():
            numpy.testing.assert_array_equal(again[name].numpy(), value.numpy(), err_msg=name)
    sample = {name: values[5] for name, values in columns.items()}
    one, reference = loaded(sample), space(sample)
    for name in (one if output_mode == "dict" else [None]):
        got, want = (one[name], reference[name]) if name else (one, reference)
        numpy.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=str(name))
    # The loaded space builds a model on the raw columns like the original.
    assert loaded.get_inputs().keys() == space.get_inputs().keys()


def test_save_model_takes_a_feature_space_and_only_keras_files(tmp_path):
    space = FS({"x": "float", "c": FS.integer_hashed(num_bins=4)})
    mk.saving.save_model(space, tmp_path / "space.keras")
    loaded = mk.saving.load_model(tmp_path / "space.keras")
    numpy.testing.assert_array_equal(loaded({"x": [1.5], "c": [7]}).numpy(), space({"x": [1.5], "c": [7]}).numpy())
    with pytest.raises(ValueError, match="expected a `.keras` extension"):
        space.save(tmp_path / "space.h5")


def test_the_file_has_keras_layout(table, tmp_path):
    _, columns, _ = table
    space = _keras_space()
    space.adapt(columns)
    space.save(tmp_path / "space.keras")
    members, spec, groups, assets = _layout(tmp_path / "space.keras")
    keras_members, keras_spec, keras_groups, keras_assets = _layout(FIXTURES / "feature_space_keras.keras")
    assert members == keras_members
    assert assets == keras_assets  # the vocabularies, special tokens first, as Keras writes them
    assert {name: shape for name, shape in groups.items() if not isinstance(shape, str)} == {
        name: shape for name, shape in keras_groups.items() if not isinstance(shape, str)}
    assert set(groups) == set(keras_groups)
    assert groups["preprocessors/normalization/vars"] == keras_groups["preprocessors/normalization/vars"]
    assert (spec["module"], spec["class_name"]) == (keras_spec["module"], keras_spec["class_name"])
    assert set(spec["build_config"]) == set(keras_spec["build_config"])
    for name, feature in spec["config"]["features"].items():
        keras_feature = keras_spec["config"]["features"][name]
        assert feature["config"]["preprocessor"]["class_name"] == keras_feature["config"]["preprocessor"]["class_name"]
        assert feature["config"]["output_mode"] == keras_feature["config"]["output_mode"]


def test_a_file_keras_saved_loads_with_keras_encodings(table):
    data, columns, _ = table
    loaded = mk.models.load_model(FIXTURES / "feature_space_keras.keras")
    assert isinstance(loaded, FS)
    assert loaded.preprocessors["city"].get_vocabulary()[0] == "[UNK]"  # read from the vocabulary asset
    numpy.testing.assert_allclose(loaded(columns).numpy(), data["concat"], atol=1e-5)
    numpy.testing.assert_allclose(loaded({name: values[0] for name, values in columns.items()}).numpy(),
                                  data["single"], atol=1e-5)


def _rewrite(source, target, edit_config=None, drop=()):
    with zipfile.ZipFile(source) as archive, zipfile.ZipFile(target, "w") as out:
        for name in archive.namelist():
            if name in drop:
                continue
            content = archive.read(name)
            if name == "config.json" and edit_config is not None:
                spec = json.loads(content)
                edit_config(spec)
                content = json.dumps(spec)
            out.writestr(name, content)


def _drop_build_configs(value):
    if isinstance(value, dict):
        value.pop("build_config", None)
        for item in value.values():
            _drop_build_configs(item)
    elif isinstance(value, list):
        for item in value:
            _drop_build_configs(item)


def test_damaged_files_are_refused_clearly(table, tmp_path):
    data, columns, _ = table
    fixture = FIXTURES / "feature_space_keras.keras"
    # Without the space's own build_config each preprocessor still builds from
    # its build_config, as Keras 3.15 loads the same file (checked).
    _rewrite(fixture, tmp_path / "space_unbuilt.keras", lambda spec: spec.pop("build_config"))
    numpy.testing.assert_allclose(mk.models.load_model(tmp_path / "space_unbuilt.keras")(columns).numpy(),
                                  data["concat"], atol=1e-5)
    _rewrite(fixture, tmp_path / "unbuilt.keras", _drop_build_configs)
    with pytest.raises(ValueError, match="Weight count mismatch for preprocessor 'age_preprocessor'"):
        mk.models.load_model(tmp_path / "unbuilt.keras")
    _rewrite(fixture, tmp_path / "feature.keras",
             lambda spec: spec["config"]["features"].update(age={"class_name": "Dense", "config": {}}))
    with pytest.raises(ValueError, match="feature 'age' is not a serialized Feature"):
        mk.models.load_model(tmp_path / "feature.keras")
    _rewrite(fixture, tmp_path / "cross.keras",
             lambda spec: spec["config"].update(crosses=[{"class_name": "Cross", "config": {
                 "feature_names": ["city", "nowhere"], "crossing_dim": 4}}]))
    with pytest.raises(ValueError, match="unknown features: \\['nowhere'\\]"):
        mk.models.load_model(tmp_path / "cross.keras")
    _rewrite(fixture, tmp_path / "weights.keras", drop=("model.weights.h5",))
    with pytest.raises(ValueError, match="has no 'model.weights.h5'"):
        mk.models.load_model(tmp_path / "weights.keras")
    def huge(spec):  # the space's and the preprocessor's own build_config (the one read first)
        spec["build_config"].update(age={"input_shape": [None, 10**9]})
        spec["config"]["features"]["age"]["config"]["preprocessor"]["build_config"] = {"input_shape": [None, 10**9]}

    _rewrite(fixture, tmp_path / "huge.keras", huge)
    with pytest.raises(ValueError, match="more than the file's weights justify"):
        mk.models.load_model(tmp_path / "huge.keras")
