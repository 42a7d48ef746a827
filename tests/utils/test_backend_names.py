"""keras.backend / keras.utils helper names: result_type (against Keras's
recorded promotion table), standardize_dtype, is_float/int_dtype, get_uid,
is_keras_tensor, get_source_inputs, Config."""
import json
import pathlib

import numpy
import pytest

import minikeras as mk

_RECORDED = json.loads((pathlib.Path(__file__).parent / "fixtures" / "keras_names.json").read_text())
_PYTHON = {"int": int, "float": float}


def test_result_type_matches_keras_promotion_table():
    checked = 0
    for pair, expected in _RECORDED["result_type"].items():
        arguments = [_PYTHON.get(name, name) for name in pair.split(",")]
        if expected.startswith("ValueError"):
            with pytest.raises(ValueError):
                mk.backend.result_type(*arguments)
        else:
            assert mk.backend.result_type(*arguments) == expected, pair
        checked += 1
    assert checked == 14 * 14
    assert mk.backend.result_type() == "float32" and mk.backend.result_type(None, "int8") == "float32"
    with pytest.raises(ValueError, match="float8"):
        mk.backend.result_type("float8_e4m3fn", "float32")


def test_standardize_dtype_and_kind_predicates():
    assert mk.utils.standardize_dtype(numpy.float16) == "float16"
    assert mk.backend.standardize_dtype(numpy.dtype("uint8")) == "uint8"
    assert mk.backend.standardize_dtype(None) == "float32" and mk.backend.standardize_dtype(float) == "float32"
    assert mk.backend.standardize_dtype(mk.ops.ones((2,)).dtype) == "float32"
    with pytest.raises(ValueError, match="Invalid dtype: float128x"):
        mk.backend.standardize_dtype("float128x")
    assert mk.backend.is_float_dtype("bfloat16") and not mk.backend.is_float_dtype("int32")
    assert mk.backend.is_int_dtype(numpy.uint16) and not mk.backend.is_int_dtype("bool")


def test_get_uid_shares_the_layer_name_counter_and_clear_session_resets_it():
    mk.backend.clear_session()
    assert mk.backend.get_uid("thing") == 1 and mk.backend.get_uid("thing") == 2
    mk.layers.Dense(2)
    assert mk.backend.get_uid("dense") == 2  # one Dense named "dense" already
    assert mk.layers.Dense(2).name == "dense_2"
    mk.backend.clear_session()
    assert mk.backend.get_uid("thing") == 1


def test_is_keras_tensor_and_get_source_inputs():
    a, b = mk.Input((3,), name="a"), mk.Input((3,), name="b")
    merged = mk.layers.Add()([mk.layers.Dense(3)(a), b])
    out = mk.layers.Dense(1)(merged)
    assert mk.utils.is_keras_tensor(out) and mk.backend.is_keras_tensor(a)
    assert not mk.utils.is_keras_tensor(numpy.ones(3)) and not mk.backend.is_keras_tensor(mk.ops.ones((3,)))
    sources = mk.utils.get_source_inputs(out)
    assert len(sources) == 2 and sources[0] is a and sources[1] is b
    assert mk.utils.get_source_inputs(a) == [a]
    with pytest.raises(TypeError, match="symbolic tensor"):
        mk.utils.get_source_inputs(numpy.ones(3))


def test_config_object():
    config = mk.utils.Config(learning_rate=0.1)
    config.momentum = 0.9
    config["nesterov"] = True
    assert config["momentum"] == 0.9 and config.learning_rate == 0.1 and len(config) == 3
    assert json.loads(config.to_json()) == {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True}
    config.freeze()
    assert config.frozen
    with pytest.raises(ValueError, match="frozen"):
        config.momentum = 0.5
    config.unfreeze()
    config.momentum = 0.5
    assert config.as_dict()["momentum"] == 0.5
    with pytest.raises(AttributeError):
        config.missing
