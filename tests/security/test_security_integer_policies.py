"""A layer whose dtype policy is an integer type cannot take a file's float
weights (issue 36, item 11): they would be truncated (``[-0.06, -0.16,
0.01]`` -> ``[0, 0, 0]``) and the model would train on. Every reader refuses
it from the datasets' headers, naming the layer, its policy and both
dtypes, and leaves the model unchanged. (Keras's quantized policies,
``int8_from_float32`` and kin, are another thing, not supported yet.)"""
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.saving import FileLoadError

import craft_configs

_REFUSED = r"Layer 'd' \(Dense, dtype policy '{policy}'\) keeps its weight 'd/kernel' as {policy}, but the file " \
           r"stores it as float32 values: loading would truncate them"


@pytest.mark.parametrize("policy", ["int8", "uint8", "int32"])
@pytest.mark.parametrize("suffix", [".keras", ".h5"])
def test_load_model_refuses_float_weights_for_an_integer_policy(tmp_path, policy, suffix):
    path = str(tmp_path / f"m{suffix}")
    craft_configs.integer_policy_file(path, policy, suffix)
    with pytest.raises(FileLoadError, match=_REFUSED.format(policy=policy)):
        mk.models.load_model(path)


def test_load_weights_refuses_them_too_and_changes_nothing(tmp_path):
    source = craft_configs.small_model()
    source.get_layer("d").kernel.assign(numpy.array([[-0.06, -0.16, 0.01]] * 4, "float32"))
    source.save_weights(str(tmp_path / "m.weights.h5"))
    source.save(str(tmp_path / "m.h5"))
    for name in ("m.weights.h5", "m.h5"):
        target = mk.Sequential([layers.Input((4,)), layers.Dense(3, name="d", dtype=mk.DTypePolicy("int8"),
                                                                  kernel_initializer="zeros")])
        target.get_layer("d").kernel.assign(numpy.full((4, 3), 5, "int8"))
        with pytest.raises(FileLoadError, match=_REFUSED.format(policy="int8")):
            target.load_weights(str(tmp_path / name))
        assert numpy.all(target.get_layer("d").kernel.numpy() == 5)


def test_integer_weights_saved_as_integers_still_load(tmp_path):
    # Nothing is truncated when the file holds integers: an int8 model's own file round-trips.
    model = mk.Sequential([layers.Input((4,)), layers.Dense(3, name="d", dtype=mk.DTypePolicy("int8"),
                                                            kernel_initializer="zeros")])
    model.get_layer("d").kernel.assign(numpy.arange(12, dtype="int8").reshape(4, 3))
    model.save_weights(str(tmp_path / "int8.weights.h5"))
    other = mk.Sequential([layers.Input((4,)), layers.Dense(3, name="d", dtype=mk.DTypePolicy("int8"),
                                                            kernel_initializer="zeros")])
    other.load_weights(str(tmp_path / "int8.weights.h5"))
    assert numpy.array_equal(other.get_layer("d").kernel.numpy(), numpy.arange(12).reshape(4, 3))


def test_float_policies_load_as_before(tmp_path):
    model = craft_configs.small_model()
    model.save(str(tmp_path / "m.keras"))
    restored = mk.models.load_model(str(tmp_path / "m.keras"))
    assert numpy.array_equal(restored.get_layer("d").kernel.numpy(), model.get_layer("d").kernel.numpy())
