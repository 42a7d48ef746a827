"""DTypePolicyMap: dtype policies by layer path (``keras.dtype_policies.DTypePolicyMap``).

A dict-like policy whose keys are layer paths (``"encoder/layer_0/dense"``)
or regular expressions over them (``"encoder/.*"``), with a default policy
for every path no key matches. Keras's layers that hold sublayers pass one
as ``dtype`` to give a quantized policy to some of them. As a policy its
compute/variable dtypes and quantization mode are the default policy's;
minikeras's layers have no ``path``, so a layer given a map computes under
its default policy, and the map is kept for the config.
"""
import re
from collections.abc import MutableMapping

from minikeras.dtype_policies.dtype_policy import DTypePolicy

__all__ = ["DTypePolicyMap"]


class DTypePolicyMap(DTypePolicy, MutableMapping):
    """Layer path -> DTypePolicy, exact keys first, then regular expressions.

    Args:
        default_policy: the policy of paths no key matches (a policy, its
            name or config; None: the global policy, looked up when used).
        policy_map: an optional initial ``{key: policy}`` dict.

    Example:
        >>> policies = DTypePolicyMap(default_policy="float32")
        >>> policies["encoder/.*"] = "bfloat16"
        >>> policies["encoder/attention/query"].name, policies["decoder"].name
        ('bfloat16', 'float32')
    """

    def __init__(self, default_policy=None, policy_map=None):
        if isinstance(default_policy, DTypePolicyMap):
            raise ValueError("`default_policy` cannot be a `DTypePolicyMap`.")
        if policy_map is not None and not isinstance(policy_map, dict):
            raise TypeError(f"If specified, `policy_map` must be a dict. Received: policy_map={policy_map} of type "
                            f"{type(policy_map)}")
        from minikeras import dtype_policies

        self._default_policy_arg = default_policy
        self._default_policy = dtype_policies.get(default_policy)
        self._policy_map = dict(policy_map or {})

    @property
    def name(self):
        return f"map_{self.default_policy.name}"

    @property
    def _name(self):
        return self.name

    @property
    def default_policy(self):
        """The policy of paths no key matches."""
        from minikeras import dtype_policies

        return dtype_policies.get(self._default_policy_arg) if self._default_policy_arg is None \
            else self._default_policy

    @property
    def compute_dtype(self):
        return self.default_policy.compute_dtype

    @property
    def variable_dtype(self):
        return self.default_policy.variable_dtype

    @property
    def quantization_mode(self):
        return self.default_policy.quantization_mode

    def __getitem__(self, key):
        """The policy of path ``key``: an exact key, else the one key that
        matches it as a full regular expression, else the default.

        Raises:
            ValueError: ``key`` matches more than one pattern.
        """
        if key in self._policy_map:
            return self._policy_map[key]
        matching = [pattern for pattern in self._policy_map if re.fullmatch(pattern, key)]
        if len(matching) > 1:
            raise ValueError(f"Path '{key}' matches multiple dtype policy specification keys: {matching}. Please "
                             "make sure each path only matches at most one dtype policy specification key in the "
                             "DTypePolicyMap.")
        return self._policy_map[matching[0]] if matching else self.default_policy

    def __setitem__(self, key, policy):
        from minikeras import dtype_policies

        if key in self._policy_map:
            raise ValueError(f"{key} already exist in the DTypePolicyMap with value {self._policy_map[key]}. Please "
                             "make sure to not use duplicated keys.")
        try:
            policy = dtype_policies.get(policy)
        except Exception:  # noqa: BLE001  (Keras's message for any value get refuses)
            raise ValueError("Cannot interpret the assigned value by `keras.dtype_policies.get`. "
                             f"Received: {policy} of type {type(policy)}") from None
        self._policy_map[key] = policy

    def __delitem__(self, key):
        return self._policy_map.pop(key)

    def __contains__(self, key):
        return key in self._policy_map

    def __len__(self):
        return len(self._policy_map)

    def __iter__(self):
        return iter(self._policy_map)

    def __eq__(self, other):
        return (isinstance(other, DTypePolicyMap) and self.default_policy == other.default_policy
                and self._policy_map == other._policy_map)

    __hash__ = None

    def get_config(self):
        """``{"default_policy": ..., "policy_map": {key: serialized policy}}``, as Keras. Without a
        default policy, the policies are written without their source (``source_name``/``name``
        None), so that loading takes the global policy then, as Keras does."""
        from minikeras import dtype_policies

        default = self._default_policy_arg
        if isinstance(default, DTypePolicy):
            default = dtype_policies.serialize(default)
        policy_map = {}
        for key, policy in self._policy_map.items():
            serialized = dtype_policies.serialize(policy)
            if self._default_policy_arg is None:
                field = "source_name" if "source_name" in serialized["config"] else "name"
                serialized["config"] = {**serialized["config"], field: None}
            policy_map[key] = serialized
        return {"default_policy": default, "policy_map": policy_map}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from minikeras import dtype_policies

        config = dict(config)
        config["policy_map"] = {key: dtype_policies.deserialize(value, custom_objects)
                                for key, value in (config.get("policy_map") or {}).items()}
        return cls(**config)

    def __repr__(self):
        mapping = [(key, policy.name) for key, policy in self._policy_map.items()]
        return f"<DTypePolicyMap at {hex(id(self))} default_policy={self.default_policy.name}, mapping={mapping}>"
