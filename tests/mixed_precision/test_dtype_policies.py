"""Dtype policies: Keras 3's names, dtypes, errors and per-layer plumbing."""
import numpy
import pytest

import minikeras as mk
from minikeras import layers


@pytest.mark.parametrize("name, compute, variable", [
    ("float32", "float32", "float32"), ("float16", "float16", "float16"), ("bfloat16", "bfloat16", "bfloat16"),
    ("mixed_float16", "float16", "float32"), ("mixed_bfloat16", "bfloat16", "float32"),
    ("float64", "float64", "float64"),
])
def test_policy_dtypes(name, compute, variable):
    policy = mk.mixed_precision.Policy(name)
    assert (policy.name, policy.compute_dtype, policy.variable_dtype) == (name, compute, variable)
    assert repr(policy) == f'<DTypePolicy "{name}">'
    assert mk.dtype_policies.deserialize(mk.dtype_policies.serialize(policy)) == policy
    assert mk.dtype_policies.serialize(policy) == {"module": "keras", "class_name": "DTypePolicy",
                                                   "config": {"name": name}, "registered_name": None}


def test_bad_policy_names_are_refused():
    with pytest.raises(ValueError, match="mixed_float16"):
        mk.DTypePolicy("mixed_float8")
    with pytest.raises(TypeError, match="must be a string"):
        mk.DTypePolicy(16)
    with pytest.raises(ValueError, match="Invalid `policy`"):
        mk.mixed_precision.set_global_policy(16)


def test_global_policy_is_used_by_new_layers_only():
    before = layers.Dense(2)
    mk.mixed_precision.set_global_policy("mixed_float16")
    assert mk.mixed_precision.global_policy().name == "mixed_float16"
    assert mk.config.dtype_policy() is mk.mixed_precision.global_policy()
    after = layers.Dense(2)
    assert before.dtype_policy.name == "float32"
    assert (after.dtype, after.variable_dtype, after.compute_dtype) == ("float32", "float32", "float16")
    mk.config.set_dtype_policy("float32")
    assert layers.Dense(2).compute_dtype == "float32"


@pytest.mark.parametrize("dtype", ["mixed_bfloat16", mk.DTypePolicy("mixed_bfloat16"),
                                   {"module": "keras", "class_name": "DTypePolicy",
                                    "config": {"name": "mixed_bfloat16"}, "registered_name": None}])
def test_layer_dtype_takes_a_policy_its_name_or_its_config(dtype):
    layer = layers.Dense(3, dtype=dtype)
    y = layer(numpy.ones((2, 4), "float32"))
    assert layer.dtype_policy == mk.DTypePolicy("mixed_bfloat16")
    assert layer.kernel.dtype == numpy.float32 and y.dtype.name == "bfloat16"
    assert layer.get_config()["dtype"] == "mixed_bfloat16"
    assert layers.Dense.from_config(layer.get_config()).dtype_policy.name == "mixed_bfloat16"


@pytest.mark.parametrize("policy", ["float16", "bfloat16"])
def test_pure_16_bit_policies_store_variables_in_16_bits(policy):
    layer = layers.Dense(3, dtype=policy)
    y = layer(numpy.ones((2, 4)))
    assert layer.kernel.dtype.name == policy and y.dtype.name == policy


def test_integer_inputs_are_not_cast_and_float_inputs_are():
    embedding = layers.Embedding(5, 3, dtype="mixed_float16")
    ids = numpy.array([[1, 2]], "int32")
    assert embedding(ids).dtype == numpy.float16
    dense = layers.Dense(2, dtype="mixed_float16")
    assert dense._convert_input(numpy.ones((1, 2), "float64")).dtype == numpy.float16
    assert dense._convert_input(mk.tensor(numpy.ones((1, 2), "int32"))).dtype == numpy.int32


def test_softmax_activation_in_float32_ends_a_mixed_model():
    mk.mixed_precision.set_global_policy("mixed_float16")
    model = mk.Sequential([mk.Input((4,)), layers.Dense(3), layers.Activation("softmax", dtype="float32")])
    out = model(numpy.ones((2, 4), "float32"))
    assert model.layers[0](numpy.ones((2, 4), "float32")).dtype == numpy.float16
    assert out.dtype == numpy.float32
    numpy.testing.assert_allclose(out.numpy().sum(-1), 1.0, rtol=1e-6)


def test_autocast_false_keeps_variables_in_their_dtype():
    layer = layers.BatchNormalization(dtype="mixed_float16")
    layer(numpy.ones((3, 2), "float32"), training=True)
    assert all(not w.autocast for w in layer.weights)
    assert layers.Dense(2, dtype="mixed_float16").add_weight(shape=(2,), name="w").autocast


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
@pytest.mark.parametrize("make", [
    lambda: layers.Rescaling(0.5, offset=1.0), lambda: layers.Normalization(mean=1.0, variance=4.0),
    lambda: layers.Resizing(4, 4), lambda: layers.CenterCrop(4, 4), lambda: layers.RandomFlip(seed=1),
    lambda: layers.Bidirectional(layers.LSTM(2)), lambda: layers.Conv2DTranspose(2, 3),
], ids=["Rescaling", "Normalization", "Resizing", "CenterCrop", "RandomFlip", "Bidirectional", "Conv2DTranspose"])
def test_layers_compute_in_the_global_policy(policy, make):
    mk.mixed_precision.set_global_policy(policy)
    layer = make()
    shape = (2, 6, 4) if isinstance(layer, layers.Bidirectional) else (2, 8, 8, 3)
    out = layer(numpy.random.default_rng(0).normal(size=shape).astype("float32"), training=True)
    assert out.dtype.name == layer.compute_dtype == policy.split("_")[1]
