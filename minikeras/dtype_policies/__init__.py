"""Dtype policies (``keras.dtype_policies``): how layers pick their compute
and variable dtypes. See :class:`DTypePolicy`; ``minikeras.mixed_precision``
holds the legacy names (``Policy``, ``set_global_policy``...). The quantized
policies (``"int8_from_float32"``...) are in quantized.py, the policies by
layer path in dtype_policy_map.py.

Example:
    >>> import minikeras as mk
    >>> mk.dtype_policies.get("mixed_bfloat16").compute_dtype
    'bfloat16'
    >>> mk.dtype_policies.get("int8_from_float32").quantization_mode
    'int8'
"""
from minikeras.dtype_policies.dtype_policy import (DTypePolicy, FloatDTypePolicy, dtype_policy,
                                                   set_dtype_policy)
from minikeras.dtype_policies.dtype_policy_map import DTypePolicyMap
from minikeras.dtype_policies.quantized import (QUANTIZATION_MODES, AWQDTypePolicy, GPTQDTypePolicy,
                                                Int4DTypePolicy, QuantizedDTypePolicy, QuantizedFloat8DTypePolicy,
                                                quantized_policy_from_name)

__all__ = ["DTypePolicy", "FloatDTypePolicy", "DTypePolicyMap", "QuantizedDTypePolicy", "QuantizedFloat8DTypePolicy",
           "Int4DTypePolicy", "GPTQDTypePolicy", "AWQDTypePolicy", "get", "serialize", "deserialize"]

_CLASSES = {cls.__name__: cls for cls in (DTypePolicy, FloatDTypePolicy, DTypePolicyMap, QuantizedDTypePolicy,
                                          QuantizedFloat8DTypePolicy, Int4DTypePolicy, GPTQDTypePolicy,
                                          AWQDTypePolicy)}
_CLASSES["Policy"] = DTypePolicy  # tf.keras 2's name


def serialize(policy):
    """Keras 3's serialized form: ``{"module": "keras", "class_name":
    "DTypePolicy", "config": {"name": ...}, "registered_name": None}``
    (module ``"keras.dtype_policies"`` for the quantized policies and maps)."""
    if not isinstance(policy, DTypePolicy):
        raise TypeError(f"serialize expects a DTypePolicy, received {type(policy).__name__}.")
    name = type(policy).__name__
    known = _CLASSES.get(name) is type(policy)
    module = "keras" if name in ("DTypePolicy", "FloatDTypePolicy") else "keras.dtype_policies"
    return {"module": module if known else type(policy).__module__, "class_name": name,
            "config": policy.get_config(), "registered_name": None if known else name}


def deserialize(config, custom_objects=None):
    """A policy from :func:`serialize` output (or Keras 2's ``Policy`` config).

    Raises:
        ValueError: a config that is not a dict with ``class_name``, or a
            class that is neither a dtype policy nor in ``custom_objects``.
    """
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"deserialize expects a dict with 'class_name' and 'config', received {config!r}.")
    name = config["class_name"]
    custom_objects = custom_objects or {}
    cls = custom_objects.get(config.get("registered_name") or name) or custom_objects.get(name) or _CLASSES.get(name)
    if cls is None:
        raise ValueError(f"Unknown dtype policy class {name!r}. Known: {sorted(set(_CLASSES) - {'Policy'})}.")
    arguments = dict(config.get("config") or {})
    if cls is DTypePolicyMap:
        return cls.from_config(arguments, custom_objects=custom_objects)
    return cls.from_config(arguments)


def get(identifier):
    """A DTypePolicy from None (the global policy), a policy, its name
    (``"mixed_float16"``, ``"int8_from_float32"``), a serialized config
    dict, or a dtype (``numpy.float16``).

    A name starting with a quantization mode (``int8``, ``float8``,
    ``int4``, ``gptq``, ``awq``) is a quantized policy, ``"<mode>_from_<source>"``,
    as in Keras: ``"int8"`` alone is refused (``DTypePolicy("int8")`` makes
    the plain integer policy).

    Raises:
        ValueError: when ``identifier`` names no policy.
    """
    if identifier is None:
        return dtype_policy()
    if isinstance(identifier, DTypePolicy):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        if identifier.startswith(QUANTIZATION_MODES):
            return quantized_policy_from_name(identifier)
        return DTypePolicy(identifier)
    try:
        from minikeras.backend.dtypes import standardize_dtype

        return DTypePolicy(standardize_dtype(identifier))
    except (TypeError, ValueError):
        raise ValueError("Cannot interpret `dtype` argument. Expected a string or an instance of DTypePolicy. "
                         f"Received: dtype={identifier!r}") from None
