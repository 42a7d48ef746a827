"""save_weights / load_weights: order, names, mismatch errors, subclassed models."""
import h5py
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from tests.saving.conftest import assert_same_arrays, build_functional, build_sequential
from tests.saving.test_model_round_trip import NoConfig


def test_sequential_weights_round_trip(data, tmp_path):
    x, y = data
    model = build_sequential()
    model.fit(x, y, epochs=1, verbose=0)
    model.save_weights(tmp_path / "w.h5")
    other = build_sequential()
    assert not numpy.array_equal(other.get_weights()[0], model.get_weights()[0])
    other.load_weights(tmp_path / "w.h5")
    assert_same_arrays(other.get_weights(), model.get_weights())
    numpy.testing.assert_array_equal(other.predict(x, verbose=0), model.predict(x, verbose=0))
    with h5py.File(tmp_path / "w.h5", "r") as handle:
        assert "model_config" not in handle.attrs  # weights only
        assert [n.decode() for n in handle.attrs["layer_names"]] == ["hidden", "norm", "head"]


def test_functional_weights_round_trip(functional_data, tmp_path):
    model = build_functional()
    model.save_weights(tmp_path / "w.h5")
    other = build_functional()
    other.load_weights(tmp_path / "w.h5")
    assert_same_arrays(other.get_weights(), model.get_weights())


def test_load_weights_from_a_whole_model_file(data, tmp_path):
    model = build_sequential()
    model.save(tmp_path / "m.h5")
    other = build_sequential()
    other.load_weights(tmp_path / "m.h5")
    assert_same_arrays(other.get_weights(), model.get_weights())


def test_subclassed_model_weights(data, tmp_path):
    x, _ = data
    model = NoConfig()
    model(x)
    model.save_weights(tmp_path / "w.h5")
    other = NoConfig()
    with pytest.raises(ValueError, match="has not created its weights yet.*Call the model on a batch"):
        other.load_weights(tmp_path / "w.h5")
    other(x)
    other.load_weights(tmp_path / "w.h5")
    numpy.testing.assert_array_equal(other.predict(x, verbose=0), model.predict(x, verbose=0))


def test_unbuilt_model_cannot_save_weights(tmp_path):
    with pytest.raises(ValueError, match="has not been built yet"):
        NoConfig().save_weights(tmp_path / "w.h5")


def test_weight_order_is_by_layer_not_by_name(tmp_path):
    # Positional loading ignores names, as Keras's h5 loading does.
    source = mk.Sequential([layers.Dense(3, input_shape=(2,), name="a"), layers.Dense(1, name="b")])
    target = mk.Sequential([layers.Dense(3, input_shape=(2,), name="x"), layers.Dense(1, name="y")])
    source.save_weights(tmp_path / "w.h5")
    target.load_weights(tmp_path / "w.h5")
    assert_same_arrays(target.get_weights(), source.get_weights())


def test_by_name_loads_matching_layers_only(tmp_path):
    source = mk.Sequential([layers.Dense(3, input_shape=(2,), name="a"), layers.Dense(1, name="b")])
    source.save_weights(tmp_path / "w.h5")
    target = mk.Sequential([layers.Dense(3, input_shape=(2,), name="a"), layers.Dense(4, name="c"),
                            layers.Dense(1, name="d")])
    before = target.get_weights()
    target.load_weights(tmp_path / "w.h5", by_name=True)
    assert_same_arrays(target.layers[0].get_weights(), source.layers[0].get_weights())
    assert_same_arrays(target.layers[1].get_weights(), before[2:4])
    assert_same_arrays(target.layers[2].get_weights(), before[4:6])


def test_shape_mismatch_names_the_layer_and_shapes_and_changes_nothing(tmp_path):
    build_sequential(hidden=8).save_weights(tmp_path / "w.h5")
    other = build_sequential(hidden=9)
    before = other.get_weights()
    message = (r"Shape mismatch in layer #0 \(named 'hidden' in the current model, 'hidden' in '.*w\.h5'\) "
               r"for weight 'hidden/kernel': the layer expects shape \(4, 9\), the file has shape \(4, 8\)")
    with pytest.raises(ValueError, match=message):
        other.load_weights(tmp_path / "w.h5")
    assert_same_arrays(other.get_weights(), before)


def test_weight_count_mismatch(tmp_path):
    mk.Sequential([layers.Dense(3, input_shape=(2,), name="a")]).save_weights(tmp_path / "w.h5")
    other = mk.Sequential([layers.Dense(3, input_shape=(2,), use_bias=False, name="a")])
    with pytest.raises(ValueError, match="Weight count mismatch for layer #0 \\(named 'a'.*expects 1 weight\\(s\\), "
                                         "the file has 2"):
        other.load_weights(tmp_path / "w.h5")


def test_layer_count_mismatch(tmp_path):
    mk.Sequential([layers.Dense(3, input_shape=(2,), name="a")]).save_weights(tmp_path / "w.h5")
    other = mk.Sequential([layers.Dense(3, input_shape=(2,), name="a"), layers.Dense(1, name="b")])
    with pytest.raises(ValueError, match=r"Layer count mismatch.*the model has 2 layers with weights "
                                         r"\(\['a', 'b'\]\), the file has 1 \(\['a'\]\)"):
        other.load_weights(tmp_path / "w.h5")


def test_skip_mismatch_loads_the_rest(tmp_path):
    source = mk.Sequential([layers.Dense(3, input_shape=(2,), name="a"), layers.Dense(1, name="b")])
    source.save_weights(tmp_path / "w.h5")
    target = mk.Sequential([layers.Dense(4, input_shape=(2,), name="a"), layers.Dense(1, name="b")])
    before = target.layers[0].get_weights()
    with pytest.warns(UserWarning, match="Skipping loading weights for layer") as records:
        target.load_weights(tmp_path / "w.h5", skip_mismatch=True)
    # "b" has a 4-wide input now, so its kernel mismatches too: both skipped.
    assert ["layer 'a'" in str(r.message) for r in records] == [True, False]
    assert ["layer 'b'" in str(r.message) for r in records] == [False, True]
    assert_same_arrays(target.layers[0].get_weights(), before)
    target = mk.Sequential([layers.Dense(3, input_shape=(2,), name="a"), layers.Dense(2, name="b")])
    with pytest.warns(UserWarning, match="layer 'b'"):
        target.load_weights(tmp_path / "w.h5", skip_mismatch=True)
    assert_same_arrays(target.layers[0].get_weights(), source.layers[0].get_weights())


def test_load_model_with_a_corrupted_shape_names_the_layer(data, tmp_path):
    path = tmp_path / "m.h5"
    build_sequential().save(path)
    with h5py.File(path, "r+") as handle:
        group = handle["model_weights"]["head"]
        del group["head/kernel"]
        group.create_dataset("head/kernel", data=numpy.zeros((7, 1), dtype="float32"))
    with pytest.raises(ValueError, match=r"layer #2 \(named 'head'.*expects shape \(8, 1\), the file has shape "
                                         r"\(7, 1\)"):
        mk.models.load_model(path)
