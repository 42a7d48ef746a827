"""The quantized dtype policies and DTypePolicyMap against Keras 3.15's, and
the name count of keras.quantizers / keras.dtype_policies (every Keras name
present except README's table of names not supported)."""
import json
import pathlib
import re

import pytest

import minikeras as mk
from minikeras import dtype_policies as P
from minikeras import layers
from tests.quantizers.keras_fixtures import names

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def _not_supported():
    """``{module: names}`` from README's "Quantization: names not supported" table."""
    text = README.read_text()
    section = text[text.index("## Quantization: names not supported"):]
    section = section[:section.index("\n## ", 5)]
    found = {}
    for module, name in re.findall(r"^\| `(quantizers|dtype_policies)\.(\w+)` \|", section, flags=re.M):
        found.setdefault(module, set()).add(name)
    return found


@pytest.mark.parametrize("module", ["quantizers", "dtype_policies"])
def test_every_keras_name_is_here_or_in_the_not_supported_table(module):
    keras_names = set(names()["names"][module])
    left_out = _not_supported().get(module, set())
    ours = {name for name in dir(getattr(mk, module)) if not name.startswith("_")}
    missing = sorted(keras_names - ours - left_out)
    assert not missing, f"Keras 3.15's {module} names missing here and not in README's table: {missing}"
    assert left_out <= keras_names, f"README lists names Keras does not have: {sorted(left_out - keras_names)}"
    assert not left_out & ours, f"README lists names that exist: {sorted(left_out & ours)}"


def test_the_count_keras_has():
    assert len(names()["names"]["quantizers"]) == 19 and len(names()["names"]["dtype_policies"]) == 11
    assert mk.Quantizer is mk.quantizers.Quantizer


@pytest.mark.parametrize("name", sorted(names()["policies"]))
def test_policies_as_keras(name):
    recorded = names()["policies"][name]
    policy = P.get(name)
    assert repr(policy) == recorded["repr"]
    assert (policy.compute_dtype, policy.variable_dtype, policy.quantization_mode) == (
        recorded["compute_dtype"], recorded["variable_dtype"], recorded["quantization_mode"])
    assert json.loads(json.dumps(P.serialize(policy))) == recorded["serialized"]
    assert P.deserialize(recorded["serialized"]) == policy
    assert P.get(recorded["serialized"]) == policy


def test_float8_policy_keeps_its_history_length():
    policy = P.QuantizedFloat8DTypePolicy("float8", "float32", amax_history_length=16)
    assert policy.amax_history_length == 16
    assert P.deserialize(P.serialize(policy)).amax_history_length == 16
    assert policy != P.QuantizedFloat8DTypePolicy("float8", "float32")
    with pytest.raises(TypeError, match="`amax_history_length` must be an integer"):
        P.QuantizedFloat8DTypePolicy("float8", "float32", "16")


@pytest.mark.parametrize("name, error, message", [
    ("int8", ValueError, r"Cannot convert `policy` into a valid pair \(`mode`, `source_name`\)"),
    ("int8_from", ValueError, "Cannot convert `policy` into a valid pair"),
    ("int8_from_float16", ValueError, "Quantization mode='int8' doesn't work well with compute_dtype='float16'"),
    ("int8_from_mixed_float16", ValueError, "doesn't work well with compute_dtype='float16'"),
    ("float8_from_x", ValueError, "Cannot convert 'x' to a mixed precision DTypePolicy"),
    ("int4/0_from_float32", ValueError, "Invalid block_size in mode"),
    ("int4/x_from_float32", ValueError, "<block_size> must be an integer"),
    ("gptq/5/128_from_float32", ValueError, "Supported values are 2, 3, 4, and 8"),
    ("awq/8/128_from_float32", ValueError, "AWQ only supports 4-bit quantization"),
    ("int3_from_float32", ValueError, "Cannot convert 'int3_from_float32' to a mixed precision DTypePolicy"),
])
def test_bad_quantized_names_get_keras_errors(name, error, message):
    with pytest.raises(error, match=message):
        P.get(name)
    with pytest.raises(error, match=message):
        layers.Dense(2, dtype=name)


def test_unknown_mode_and_equality():
    with pytest.raises(ValueError, match=r"Expected one of \('int8', 'float8', 'int4', 'gptq', 'awq'\)"):
        P.QuantizedDTypePolicy("int3", "float32")
    int8 = P.QuantizedDTypePolicy("int8", "float32")
    assert int8 == P.get("int8_from_float32") and int8 != mk.DTypePolicy("float32")
    assert mk.DTypePolicy("float32") == mk.FloatDTypePolicy("float32")
    assert mk.DTypePolicy("int8").compute_dtype == "int8"  # the plain integer policy, built directly


def test_the_global_policy_may_be_quantized():
    try:
        mk.config.set_dtype_policy("int8_from_float32")
        assert mk.config.dtype_policy() == P.QuantizedDTypePolicy("int8", "float32")
        layer = layers.Dense(3)
        assert layer.dtype_policy.name == "int8_from_float32"
        layer.build((None, 4))  # built under the policy: quantized variables from the start (a file loading)
        assert layer.kernel.dtype.name == "int8" and layer.kernel_scale.shape == (3,)
    finally:
        mk.config.set_dtype_policy("float32")


def test_policy_map_as_keras():
    policies = P.DTypePolicyMap(default_policy="float32")
    policies["encoder/layer_0/dense"] = "bfloat16"
    policies["encoder/.*"] = "float16"
    policies["decoder"] = P.get("int8_from_float32")
    assert policies["encoder/layer_0/dense"].name == "bfloat16"
    assert policies["encoder/attention/query"].name == "float16"
    assert policies["decoder/attention"].name == "float32"
    assert policies.name == "map_float32" and policies.quantization_mode is None
    with pytest.raises(ValueError, match="already exist in the DTypePolicyMap"):
        policies["decoder"] = "float32"
    policies["encoder/attention/.*"] = "bfloat16"
    with pytest.raises(ValueError, match="matches multiple dtype policy specification keys"):
        policies["encoder/attention/query"]
    with pytest.raises(ValueError, match="Cannot interpret the assigned value"):
        policies["x"] = 3
    with pytest.raises(ValueError, match="cannot be a `DTypePolicyMap`"):
        P.DTypePolicyMap(default_policy=policies)
    with pytest.raises(TypeError, match="`policy_map` must be a dict"):
        P.DTypePolicyMap(policy_map=[1])
    again = P.deserialize(json.loads(json.dumps(P.serialize(policies))))
    assert again == policies and len(again) == 4 and "decoder" in again
    del again["decoder"]
    assert "decoder" not in again


def test_policy_map_without_default_serializes_policies_without_their_source():
    policies = P.DTypePolicyMap()
    policies["a"] = "int8_from_float32"
    config = P.serialize(policies)["config"]
    assert config == {"default_policy": None, "policy_map": {"a": {
        "module": "keras.dtype_policies", "class_name": "QuantizedDTypePolicy",
        "config": {"mode": "int8", "source_name": None}, "registered_name": None}}}
    try:
        mk.config.set_dtype_policy("mixed_bfloat16")
        assert P.deserialize(P.serialize(policies))["a"].name == "int8_from_mixed_bfloat16"
    finally:
        mk.config.set_dtype_policy("float32")


@pytest.mark.parametrize("name", ["gptq/4/128_from_float32", "awq/4/-1_from_float32"])
def test_calibration_policies_parse_but_layers_refuse_them_clearly(name):
    layer = layers.Dense(3, dtype=name)
    assert layer.dtype_policy.name == name
    with pytest.raises(NotImplementedError, match=f"the '{name[:4].rstrip('/')}' quantization mode .* is not "
                                                  "supported by minikeras"):
        layer.build((None, 4))
