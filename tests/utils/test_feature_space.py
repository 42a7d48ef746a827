"""keras.utils.FeatureSpace: encodings equal Keras 3.15's on a recorded table
(fixtures/record_feature_space.py), hashed features and crosses included,
adapt on batches, the symbolic inputs and encoded features as a model,
config round trip, and Keras's errors."""
import pathlib

import numpy
import pytest

import minikeras as mk

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "feature_space.npz"
FS = mk.utils.FeatureSpace


@pytest.fixture(scope="module")
def recorded():
    data = numpy.load(FIXTURE)
    return data, {key[len("column_"):]: data[key] for key in data.files if key.startswith("column_")}


def _space(output_mode="concat"):
    return FS({"age": "float_normalized", "income": FS.float_rescaled(scale=0.01, offset=-0.5, name="income"),
               "score": "float", "hours": FS.float_discretized(num_bins=4, name="hours"),
               "city": "string_categorical", "rooms": FS.integer_categorical(num_oov_indices=1, name="rooms")},
              output_mode=output_mode)


def test_encodings_equal_keras(recorded):
    data, columns = recorded
    space = _space()
    space.adapt(columns)
    numpy.testing.assert_allclose(space(columns).numpy(), data["concat"], atol=1e-5)
    single = space({name: values[0] for name, values in columns.items()})
    assert single.shape == (18,)
    numpy.testing.assert_allclose(single.numpy(), data["single"], atol=1e-5)
    by_name = _space("dict")
    by_name.adapt(columns)
    encoded = by_name(columns)
    assert sorted(encoded) == ["age", "city", "hours", "income", "rooms", "score"]
    for name, value in encoded.items():
        numpy.testing.assert_allclose(value.numpy(), data[f"dict_{name}"], atol=1e-5)


def test_adapt_on_batches_and_a_model_on_the_raw_columns(recorded):
    _, columns = recorded
    batches = [{name: values[start:start + 16] for name, values in columns.items()} for start in range(0, 40, 16)]
    space = _space()
    space.adapt(batches)
    whole = _space()
    whole.adapt(columns)
    numpy.testing.assert_allclose(space(columns).numpy(), whole(columns).numpy(), atol=1e-5)
    inputs = space.get_inputs()
    assert sorted(inputs) == sorted(columns) and inputs["city"].dtype == "string"
    model = mk.Model(inputs, mk.layers.Dense(1, kernel_initializer="ones")(space.get_encoded_features()))
    raw = {name: values[:, None] for name, values in columns.items()}
    numpy.testing.assert_allclose(model.predict(raw, verbose=0)[:, 0], space(columns).numpy().sum(-1), rtol=1e-5)
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(raw, numpy.zeros((40, 1), "float32"), epochs=2, batch_size=8, verbose=0)
    assert history.history["loss"][1] < history.history["loss"][0]


def test_config_round_trip_gives_an_unadapted_space(recorded):
    _, columns = recorded
    space = _space("dict")
    config = space.get_config()
    assert config["output_mode"] == "dict" and config["features"]["city"]["class_name"] == "Feature"
    again = FS.from_config(config)
    with pytest.raises(ValueError, match="You need to call `.adapt"):
        again(columns)
    again.adapt(columns)
    space.adapt(columns)
    numpy.testing.assert_array_equal(again(columns)["rooms"].numpy(), space(columns)["rooms"].numpy())


def test_spaces_without_state_need_no_adapt_and_custom_features():
    space = FS({"x": "float", "y": FS.feature("float32", mk.layers.Rescaling(2.0), "float")}, output_mode="dict")
    out = space({"x": [1.0, 2.0], "y": numpy.array([3.0, 4.0])})
    numpy.testing.assert_allclose(out["x"].numpy(), [[1.0], [2.0]])
    numpy.testing.assert_allclose(out["y"].numpy(), [[6.0], [8.0]])
    concat = FS({"x": "float", "y": FS.float_rescaled(scale=0.5)})
    numpy.testing.assert_allclose(concat({"x": 1.0, "y": 4.0}).numpy(), [1.0, 2.0])


def test_keras_errors():
    with pytest.raises(ValueError, match="cannot be None or empty"):
        FS({})
    with pytest.raises(ValueError, match="Invalid feature type"):
        FS({"x": "float_squared"})
    with pytest.raises(ValueError, match="Expected one of {'dict', 'concat'}"):
        FS({"x": "float"}, output_mode="list")
    with pytest.raises(ValueError, match="Expected one of {'int', 'one_hot', 'float'}"):
        FS.feature("float32", mk.layers.Rescaling(1.0), "binary")
    with pytest.raises(ValueError, match="can only be called with a dict"):
        FS({"x": "float"})([1.0])
    with pytest.raises(ValueError, match="should return an integer dtype"):
        FS({"x": FS.feature("float32", mk.layers.Rescaling(1.0), "one_hot")})({"x": [1.0]})
    with pytest.raises(ValueError, match="has not been encoded"):
        FS({"c": FS.integer_categorical(output_mode="int")}).adapt({"c": [1, 2]})
    with pytest.raises(ValueError, match="missing|no column"):
        FS({"x": "float", "y": "float"})({"x": [1.0]})
    with pytest.raises(ValueError, match="Received unknown features: \\['z'\\]"):
        FS({"a": "string_hashed", "b": "integer_hashed"}, crosses=[("a", "z")])
    with pytest.raises(ValueError, match="Received unknown features"):
        FS({"a": "string_hashed", "b": "integer_hashed"}, crosses=[FS.cross(("b", "c"), crossing_dim=4)])
    with pytest.raises(ValueError, match="`crossing_dim`.*should be specified"):
        FS({"a": "string_hashed", "b": "integer_hashed"}, crosses=[("a", "b")], crossing_dim=None)
    with pytest.raises(ValueError, match="Expected one of {'int', 'one_hot'}"):
        FS.cross(("a", "b"), crossing_dim=4, output_mode="float")
    with pytest.raises(ValueError, match="exactly two features"):
        FS.cross(("a", "b", "c"), crossing_dim=4)
    with pytest.raises(ValueError, match="positive int"):
        FS.cross(("a", "b"), crossing_dim=0)
    with pytest.raises(ValueError, match="num_bins"):
        FS.string_hashed(num_bins=0)
    with pytest.raises(ValueError, match="has not been encoded"):
        FS({"a": "string_hashed", "b": "integer_hashed"},
           crosses=[FS.cross(("a", "b"), crossing_dim=4, output_mode="int")])({"a": ["x"], "b": [1]})


def _hashed_space(output_mode):
    """The recorder's space of hashed features and crosses (make_hashed in fixtures/record_feature_space.py)."""
    crosses = [FS.cross(("tag", "zip"), crossing_dim=8), ("city", "hours"), FS.cross(("rooms", "city"), 6)]
    if output_mode == "dict":
        crosses.append(FS.cross(("rooms", "zip"), crossing_dim=5, output_mode="int"))
    city_mode = "int" if output_mode == "dict" else "one_hot"
    return FS({"city": FS.string_hashed(num_bins=8, output_mode=city_mode, name="city"), "rooms": "integer_hashed",
               "tag": "string_categorical", "zip": FS.integer_categorical(name="zip"),
               "hours": FS.float_discretized(num_bins=4, name="hours"), "score": "float"},
              crosses=crosses, crossing_dim=12, hashing_dim=16, output_mode=output_mode)


@pytest.fixture(scope="module")
def hashed_table(recorded):
    data, columns = recorded
    extra = {key[len("extra_"):]: data[key] for key in data.files if key.startswith("extra_")}
    return data, {**{name: columns[name] for name in ("city", "rooms", "hours", "score")}, **extra}


def test_hashed_features_and_crosses_equal_keras(hashed_table):
    data, table = hashed_table
    space = _hashed_space("concat")
    space.adapt(table)
    numpy.testing.assert_array_equal(space(table).numpy(), data["hashed_concat"])
    numpy.testing.assert_array_equal(space({name: values[3] for name, values in table.items()}).numpy(),
                                     data["hashed_single"])
    assert space.get_encoded_features().shape == (None, 65)
    assert sorted(space.crossers) == ["city_X_hours", "rooms_X_city", "tag_X_zip"]
    by_name = _hashed_space("dict")
    by_name.adapt(table)
    encoded = by_name(table)
    # Keras's order: the features sorted by name, then the crosses sorted by name.
    assert list(encoded) == ["city", "hours", "rooms", "score", "tag", "zip", "city_X_hours", "rooms_X_city",
                             "rooms_X_zip", "tag_X_zip"]
    for name, value in encoded.items():
        expected = data[f"hashed_dict_{name}"]
        assert value.dtype == expected.dtype.name, name
        numpy.testing.assert_array_equal(value.numpy(), expected, err_msg=name)


def test_hashed_config_round_trip(hashed_table):
    _, table = hashed_table
    space = _hashed_space("dict")
    config = space.get_config()
    assert config["crosses"][1] == {"module": "keras.src.layers.preprocessing.feature_space", "class_name": "Cross",
                                    "config": {"feature_names": ("city", "hours"), "crossing_dim": 12,
                                               "output_mode": "one_hot"}, "registered_name": "Cross"}
    again = FS.from_config(config)
    assert [cross.name for cross in again.crosses] == [cross.name for cross in space.crosses]
    space.adapt(table)
    again.adapt(table)
    for name, value in space(table).items():
        numpy.testing.assert_array_equal(again(table)[name].numpy(), value.numpy())
