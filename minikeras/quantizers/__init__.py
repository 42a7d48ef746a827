"""Quantizers (``keras.quantizers``): int8 / int4 / float8 quantization of
weights and activations, and the configs ``Model.quantize`` takes.

    >>> import minikeras as mk
    >>> model = mk.Sequential([mk.layers.Input((16,)), mk.layers.Dense(8)])
    >>> model.quantize("int8")          # int8 kernel, one float scale per output unit
    >>> model.layers[0].dtype_policy
    <QuantizedDTypePolicy "int8_from_float32">

Layers quantize themselves (layers/quantization.py); this package holds
the functions and classes Keras exports here. GPTQConfig and AWQConfig
(post-training calibration of large language models) are not supported
(README, "Quantization").
"""
from minikeras._support import object_registration
from minikeras.quantizers.fake_quant import fake_quant_with_min_max_vars
from minikeras.quantizers.float8 import compute_float8_amax_history, compute_float8_scale, quantize_and_dequantize
from minikeras.quantizers.int4 import abs_max_quantize_grouped_with_zero_point, pack_int4, unpack_int4
from minikeras.quantizers.quantization_config import (Float8QuantizationConfig, Int4QuantizationConfig,
                                                      Int8QuantizationConfig, QuantizationConfig)
from minikeras.quantizers.quantizers import AbsMaxQuantizer, Quantizer, abs_max_quantize

__all__ = ["Quantizer", "AbsMaxQuantizer", "abs_max_quantize", "abs_max_quantize_grouped_with_zero_point",
           "compute_float8_scale", "compute_float8_amax_history", "quantize_and_dequantize",
           "fake_quant_with_min_max_vars", "pack_int4", "unpack_int4", "QuantizationConfig",
           "Int8QuantizationConfig", "Int4QuantizationConfig", "Float8QuantizationConfig", "get", "serialize",
           "deserialize"]

_CLASSES = (Quantizer, AbsMaxQuantizer, QuantizationConfig, Int8QuantizationConfig, Int4QuantizationConfig,
            Float8QuantizationConfig)
_BY_NAME = {cls.__name__: cls for cls in _CLASSES}
_BY_NAME.update({"quantizer": Quantizer, "abs_max_quantizer": AbsMaxQuantizer,
                 "quantization_config": QuantizationConfig, "int8_quantization_config": Int8QuantizationConfig,
                 "int4_quantization_config": Int4QuantizationConfig,
                 "float8_quantization_config": Float8QuantizationConfig})


def serialize(quantizer):
    """Keras 3's form of a quantizer or config: ``{"module": "keras.quantizers",
    "class_name": ..., "config": ..., "registered_name": None}`` (a class
    registered with ``register_keras_serializable`` gets its registered
    name); None stays None."""
    if quantizer is None:
        return None
    cls = type(quantizer)
    if _BY_NAME.get(cls.__name__) is cls:
        return {"module": "keras.quantizers", "class_name": cls.__name__, "config": quantizer.get_config(),
                "registered_name": None}
    return {"module": cls.__module__, "class_name": cls.__name__, "config": quantizer.get_config(),
            "registered_name": object_registration.registered_name(cls) or cls.__name__}


def deserialize(config, custom_objects=None):
    """A quantizer or config from :func:`serialize`'s output. Class names
    resolve against this package, ``custom_objects`` and the classes
    registered with ``register_keras_serializable``; nothing is imported.

    Raises:
        ValueError: a config that is not such a dict, or an unknown class.
    """
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not interpret quantizer config: {config!r}. Expected a dict with 'class_name' and "
                         "'config'.")
    name = config.get("registered_name") or config["class_name"]
    tables = (custom_objects or {}, _BY_NAME, object_registration.registered_objects())
    cls = next((table[key] for key in (name, config["class_name"]) for table in tables if key in table), None)
    if cls is None:
        raise ValueError(f"Unknown quantizer class {config['class_name']!r}. Pass it in custom_objects or register "
                         "it with register_keras_serializable().")
    return cls.from_config(dict(config.get("config") or {}))


def get(identifier, **kwargs):
    """A quantizer or config from None, an instance, a config dict, or a
    class name (``"AbsMaxQuantizer"``, ``"abs_max_quantizer"``), made with
    ``kwargs``.

    Raises:
        ValueError: ``identifier`` names nothing callable here.
    """
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        found = deserialize(identifier)
    elif isinstance(identifier, str):
        found = _BY_NAME.get(identifier)
    else:
        found = identifier
    if not callable(found):
        raise ValueError(f"Could not interpret quantizer identifier: {identifier}")
    return found(**kwargs) if isinstance(found, type) else found
