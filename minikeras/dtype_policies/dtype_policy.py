"""DTypePolicy: which dtype a layer computes in and which it stores weights in.

Keras 3's mixed precision: a policy named ``"mixed_float16"`` or
``"mixed_bfloat16"`` computes in the 16-bit type and keeps variables in
float32; a policy named after a float dtype (``"float32"``, ``"float16"``,
``"bfloat16"``, ``"float64"``) uses that dtype for both. Layers take one as
``dtype=`` (a policy, its name, or its serialized config); without one they
take the global policy (:func:`set_dtype_policy`), float32 unless set.
"""
import threading

from minikeras.backend import dtypes

_global = {"policy": None}
_lock = threading.Lock()


class DTypePolicy:
    """A dtype policy for a layer (``keras.DTypePolicy``).

    Args:
        name: ``"mixed_float16"``, ``"mixed_bfloat16"`` or a float dtype name;
            None means the global policy's name.

    Example:
        >>> policy = DTypePolicy("mixed_float16")
        >>> policy.compute_dtype, policy.variable_dtype
        ('float16', 'float32')
    """

    def __init__(self, name=None):
        if name is None:
            name = dtype_policy().name
        self._name = name
        self._compute_dtype, self._variable_dtype = _parse_name(name)

    @property
    def name(self):
        """The policy's name, e.g. ``"mixed_float16"``."""
        return self._name

    @property
    def compute_dtype(self):
        """The dtype layers cast their inputs and variables to, and output."""
        return self._compute_dtype

    @property
    def variable_dtype(self):
        """The dtype layers create their variables in."""
        return self._variable_dtype

    @property
    def quantization_mode(self):
        """None: a float policy (the quantized ones, quantized.py, name their mode)."""
        return None

    def convert_input(self, x, autocast, dtype):
        """``x`` cast to ``dtype`` when it is a floating Tensor of another
        dtype and ``autocast`` is on; integers and bools pass unchanged."""
        dtype = dtypes.standardize_dtype(dtype)
        x_dtype = getattr(x, "dtype", None)
        if autocast and x_dtype is not None and dtypes.is_float_dtype(x_dtype) and \
                dtypes.standardize_dtype(x_dtype) != dtype and hasattr(x, "astype"):
            return x.astype(dtypes.as_numpy_dtype(dtype))
        return x

    def get_config(self):
        """``{"name": ...}``, as Keras serializes it."""
        return {"name": self._name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f'<DTypePolicy "{self._name}">'

    def __eq__(self, other):
        # DTypePolicy and FloatDTypePolicy are one policy; the quantized ones differ (Keras).
        return type(other) in (DTypePolicy, FloatDTypePolicy) and self._name == other._name

    def __hash__(self):
        return hash(("DTypePolicy", self._name))


class FloatDTypePolicy(DTypePolicy):
    """Keras's other name for :class:`DTypePolicy`."""


def _parse_name(name):
    if not isinstance(name, str):
        raise TypeError(f"'name' must be a string, such as 'mixed_float16'. Received: name={name!r} "
                        f"(of type {type(name).__name__}).")
    if name == "mixed_float16":
        return "float16", "float32"
    if name == "mixed_bfloat16":
        return "bfloat16", "float32"
    try:
        dtype = dtypes.standardize_dtype(name)
    except ValueError:
        dtype = None
    if dtype is None:
        raise ValueError(f"Cannot convert '{name}' to a mixed precision DTypePolicy. Valid policies include "
                         "'mixed_float16', 'mixed_bfloat16', and the name of any float dtype such as 'float32'.")
    return dtype, dtype


def set_dtype_policy(policy):
    """Set the global dtype policy, used by layers made afterwards without
    a ``dtype`` (``keras.config.set_dtype_policy`` /
    ``keras.mixed_precision.set_global_policy``).

    Args:
        policy: a DTypePolicy or its name (``"mixed_float16"``,
            ``"int8_from_float32"``...).
    """
    if isinstance(policy, str):
        from minikeras.dtype_policies.quantized import QUANTIZATION_MODES, quantized_policy_from_name

        policy = quantized_policy_from_name(policy) if policy.startswith(QUANTIZATION_MODES) else DTypePolicy(policy)
    elif not isinstance(policy, DTypePolicy):
        raise ValueError("Invalid `policy` argument. Expected the string name of a policy (such as "
                         f"'mixed_float16') or a `DTypePolicy` instance. Received: policy={policy!r} "
                         f"(of type {type(policy).__name__})")
    with _lock:
        _global["policy"] = policy


def dtype_policy():
    """The global dtype policy (``DTypePolicy(floatx())`` unless set)."""
    policy = _global["policy"]
    if policy is None:
        from minikeras.backend.keras_helpers import floatx

        policy = DTypePolicy(floatx())
        with _lock:
            _global["policy"] = policy
    return policy
