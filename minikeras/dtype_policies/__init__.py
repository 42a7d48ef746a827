"""Dtype policies (``keras.dtype_policies``): how layers pick their compute
and variable dtypes. See :class:`DTypePolicy`; ``minikeras.mixed_precision``
holds the legacy names (``Policy``, ``set_global_policy``...).

Example:
    >>> import minikeras as mk
    >>> mk.dtype_policies.get("mixed_bfloat16").compute_dtype
    'bfloat16'
"""
from minikeras.dtype_policies.dtype_policy import (DTypePolicy, FloatDTypePolicy, dtype_policy,
                                                   set_dtype_policy)

__all__ = ["DTypePolicy", "FloatDTypePolicy", "get", "serialize", "deserialize"]

_CLASSES = {"DTypePolicy": DTypePolicy, "FloatDTypePolicy": FloatDTypePolicy, "Policy": DTypePolicy}


def serialize(policy):
    """``{"module": "keras", "class_name": "DTypePolicy", "config": {"name": ...},
    "registered_name": None}``: Keras 3's serialized form."""
    if not isinstance(policy, DTypePolicy):
        raise TypeError(f"serialize expects a DTypePolicy, received {type(policy).__name__}.")
    return {"module": "keras", "class_name": type(policy).__name__, "config": policy.get_config(),
            "registered_name": None}


def deserialize(config, custom_objects=None):
    """A policy from :func:`serialize` output (or Keras 2's ``Policy`` config)."""
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"deserialize expects a dict with 'class_name' and 'config', received {config!r}.")
    name = config["class_name"]
    cls = (custom_objects or {}).get(name) or _CLASSES.get(name)
    if cls is None:
        raise ValueError(f"Unknown dtype policy class {name!r}. Known: DTypePolicy, FloatDTypePolicy.")
    return cls.from_config(dict(config.get("config") or {}))


def get(identifier):
    """A DTypePolicy from None (the global policy), a policy, its name, a
    serialized config dict, or a dtype (``numpy.float16``).

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
        return DTypePolicy(identifier)
    try:
        from minikeras.backend.dtypes import standardize_dtype

        return DTypePolicy(standardize_dtype(identifier))
    except (TypeError, ValueError):
        raise ValueError("Cannot interpret `dtype` argument. Expected a string or an instance of DTypePolicy. "
                         f"Received: dtype={identifier!r}") from None
