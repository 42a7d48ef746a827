"""MultiOptimizer and OptimizerMap: different optimizers for different
variables (Keras 3's ``keras.optimizers.MultiOptimizer``).

An :class:`OptimizerMap` maps variable paths (exact, else regular
expressions matched in full) to optimizers, with a default for the rest;
a MultiOptimizer built on the model's variables asks it (or any callable
``variable -> optimizer``) once per variable, builds each inner optimizer
on its share and, per step, hands each the gradients of its variables.
Each inner optimizer keeps its own step count, learning rate and slots; the
wrapper counts steps and has no learning rate of its own (reading it
raises, as in Keras). Its state is its step count, then each inner
optimizer's step count, learning rate and slots: Keras's ``variables``
order.

Variable paths are minikeras's ``"<layer>/<weight>"`` (Keras 3 prefixes the
model's name, ``"sequential/dense/kernel"``), so a key such as
``".*dense/.*"`` matches in both.
"""
import re
from collections.abc import MutableMapping

import numpy

from minikeras.optimizers._state import rekeyed
from minikeras.optimizers.loss_scale_optimizer import LossScaleOptimizer
from minikeras.optimizers.optimizer import Optimizer

__all__ = ["MultiOptimizer", "OptimizerMap"]


def _check_inner(optimizer, where):
    if not isinstance(optimizer, Optimizer):
        raise ValueError(f"{where}: optimizer must be a Keras Optimizer instance. Received: {optimizer!r}")
    if isinstance(optimizer, LossScaleOptimizer):
        raise ValueError(f"{where}: optimizer cannot be LossScaleOptimizer.")
    if isinstance(optimizer, MultiOptimizer):
        raise ValueError(f"{where}: optimizer cannot be MultiOptimizer.")


class OptimizerMap(MutableMapping):
    """Variable path (or regular expression) -> optimizer, with a default.

    Args:
        default_optimizer: the optimizer of every variable no key matches.
        optimizer_map: optional initial ``{key: optimizer}``.

    Example:
        >>> mapping = OptimizerMap(SGD(), {".*encoder/.*": Adam()})  # doctest: +SKIP
        >>> mapping["encoder/dense/kernel"]                           # doctest: +SKIP
        <Adam ...>
    """

    def __init__(self, default_optimizer, optimizer_map=None):
        if not isinstance(default_optimizer, Optimizer):
            raise TypeError(f"default_optimizer must be a Keras Optimizer instance. Received: {default_optimizer!r}")
        if optimizer_map is not None and not isinstance(optimizer_map, dict):
            raise TypeError(f"optimizer_map must be a dictionary. Received: {optimizer_map!r}")
        self._default_optimizer = default_optimizer
        self._optimizer_map = {}
        for key, optimizer in (optimizer_map or {}).items():
            self[key] = optimizer

    @property
    def default_optimizer(self):
        return self._default_optimizer

    def __getitem__(self, key):
        """The optimizer of ``key``: an exact key first, else the one key
        whose pattern matches all of it, else the default.

        Raises:
            ValueError: more than one pattern matches.
        """
        if key in self._optimizer_map:
            return self._optimizer_map[key]
        matching = [pattern for pattern in self._optimizer_map if re.fullmatch(pattern, key)]
        if len(matching) > 1:
            raise ValueError(f"Multiple optimizers assigned to variable {key}: patterns {matching}.")
        return self._optimizer_map[matching[0]] if matching else self._default_optimizer

    def __setitem__(self, key, optimizer):
        if key in self._optimizer_map:
            raise ValueError(f"'{key}' already exists in the OptimizerMap with value {self._optimizer_map[key]}. "
                             "Please make sure to not use duplicated keys.")
        if not isinstance(key, str):
            raise ValueError(f"key must be a string. Received: {key!r}")
        _check_inner(optimizer, "OptimizerMap")
        self._optimizer_map[key] = optimizer

    def __delitem__(self, key):
        del self._optimizer_map[key]

    def __len__(self):
        return len(self._optimizer_map)

    def __iter__(self):
        return iter(self._optimizer_map)

    def __call__(self, variable):
        return self[variable.path]

    def get_config(self):
        return {"default_optimizer": _serialize_inner(self._default_optimizer),
                "optimizer_map": {key: _serialize_inner(optimizer) for key, optimizer in self._optimizer_map.items()}}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from minikeras.optimizers import deserialize

        def made(value):
            return value if isinstance(value, Optimizer) else deserialize(value, custom_objects)

        mapping = config.get("optimizer_map") or {}
        if isinstance(mapping, dict) and "class_name" in mapping and "config" in mapping:  # a serialized dict
            mapping = mapping["config"]
        return cls(made(config["default_optimizer"]), {key: made(value) for key, value in mapping.items()})


def _serialize_inner(optimizer):
    """An inner optimizer's spec under Keras's module name (Keras finds it there)."""
    from minikeras.optimizers import serialize

    spec = serialize(optimizer)
    spec["module"] = "keras.optimizers"
    return spec


def _serialize_map(optimizer_map):
    if isinstance(optimizer_map, OptimizerMap):
        return {"module": "keras.optimizers", "class_name": "OptimizerMap", "config": optimizer_map.get_config(),
                "registered_name": None}
    return optimizer_map  # a callable: usable in memory, not written to a file


class MultiOptimizer(Optimizer):
    """Delegate each variable to the optimizer an OptimizerMap (or a
    callable ``variable -> optimizer``) gives it.

    Args:
        optimizer_map: an :class:`OptimizerMap` or a callable.
        loss_scale_factor: set on every inner optimizer (gradients divided
            by it; see ``Optimizer.scale_loss``).
        name: the optimizer's name.

    Attributes:
        optimizers: the inner optimizers, in the order they were met.
        iterations: steps this wrapper applied.
    """

    #: What Keras saves as this wrapper's own (unused) learning rate.
    saved_learning_rate = 0.0

    def __init__(self, optimizer_map, loss_scale_factor=None, name=None):
        if not isinstance(optimizer_map, OptimizerMap) and not callable(optimizer_map):
            raise TypeError(f"MultiOptimizer expects an OptimizerMap or a callable returning an optimizer for a "
                            f"variable, received {optimizer_map!r}.")
        self._inner_optimizers = []
        super().__init__(learning_rate=0.0, loss_scale_factor=loss_scale_factor, name=name)
        self._optimizer_map = optimizer_map
        if isinstance(optimizer_map, OptimizerMap):
            for optimizer in list(optimizer_map.values()) + [optimizer_map.default_optimizer]:
                self._adopt(optimizer)
        self._owner_of = {}  # id(variable) -> index of its inner optimizer

    def _adopt(self, optimizer):
        if not any(optimizer is known for known in self._inner_optimizers):
            optimizer.loss_scale_factor = self.loss_scale_factor
            self._inner_optimizers.append(optimizer)
        return next(i for i, known in enumerate(self._inner_optimizers) if known is optimizer)

    @property
    def optimizers(self):
        return list(self._inner_optimizers)

    @property
    def learning_rate(self):
        raise AttributeError("Learning rate cannot be accessed on a MultiOptimizer. Access the learning rate on the "
                             "individual sub-optimizers instead.")

    @learning_rate.setter
    def learning_rate(self, value):
        raise AttributeError("Learning rate cannot be set on a MultiOptimizer. Set the learning rate on the "
                             "individual sub-optimizers instead.")

    @property
    def loss_scale_factor(self):
        return self.__dict__.get("_loss_scale_factor")

    @loss_scale_factor.setter
    def loss_scale_factor(self, value):
        self._loss_scale_factor = value
        for optimizer in self.__dict__.get("_inner_optimizers", []):
            optimizer.loss_scale_factor = value

    def _rekey_after_copy(self, original, memo):
        super()._rekey_after_copy(original, memo)
        self._owner_of = rekeyed(original._owner_of, original._trainable_variables, self._trainable_variables)

    def build(self, variables):
        """Ask the map for each variable's optimizer and build each on its share."""
        if self.built:
            return
        variables = list(variables)
        shares = [[] for _ in self._inner_optimizers]
        for variable in variables:
            optimizer = self._optimizer_map(variable)
            _check_inner(optimizer, f"MultiOptimizer (variable '{getattr(variable, 'path', variable)}')")
            index = self._adopt(optimizer)
            shares.extend([] for _ in range(len(self._inner_optimizers) - len(shares)))
            shares[index].append(variable)
            self._owner_of[id(variable)] = index
        for optimizer, share in zip(self._inner_optimizers, shares):
            if share:
                optimizer.build(share)
        super().build(variables)

    def apply(self, grads, trainable_variables=None):
        """Hand each inner optimizer the gradients of its variables, then count the step."""
        grads = list(grads)
        if not grads:
            return
        if trainable_variables is None:
            if not self.built:
                raise ValueError("MultiOptimizer: when passing `grads` without `variables`, the optimizer must "
                                 "already be built on a list of variables. Call `optimizer.build("
                                 "trainable_variables)` first.")
            trainable_variables = self._trainable_variables
        trainable_variables = list(trainable_variables)
        if not self.built:
            self.build(trainable_variables)
        if len(grads) != len(trainable_variables):
            raise ValueError(f"MultiOptimizer: gradients must match trainable variables one-to-one. Received "
                             f"{len(grads)} gradients and {len(trainable_variables)} variables.")
        self._check_variables_are_known(trainable_variables)
        shares = [([], []) for _ in self._inner_optimizers]
        for grad, variable in zip(grads, trainable_variables):
            share = shares[self._owner_of[id(variable)]]
            share[0].append(grad)
            share[1].append(variable)
        for optimizer, (share_grads, share_variables) in zip(self._inner_optimizers, shares):
            if share_variables:
                optimizer.apply(share_grads, share_variables)
        self._iterations += 1

    def finalize_variable_values(self, var_list):
        shares = [[] for _ in self._inner_optimizers]
        for variable in var_list:
            shares[self._owner_of[id(variable)]].append(variable)
        for optimizer, share in zip(self._inner_optimizers, shares):
            if share:
                optimizer.finalize_variable_values(share)

    # ---------------------------------------------------- saving the state
    def _inner_state(self, optimizer):
        state = optimizer.get_state()
        rate = numpy.array(getattr(optimizer, "saved_learning_rate", None) or optimizer.learning_rate, "float32")
        return state[:1] + [rate] + state[1:]

    def get_state(self):
        """The step count, then each inner optimizer's step count, learning
        rate (float32) and slots (Keras's ``variables`` order, less the
        wrapper's own learning rate)."""
        state = [numpy.array(self._iterations, dtype=numpy.int64)]
        for optimizer in self._inner_optimizers:
            state.extend(self._inner_state(optimizer))
        return state

    def state_names(self):
        names = ["iteration"]
        for optimizer in self._inner_optimizers:
            inner = optimizer.state_names()
            names += [f"{optimizer.name}/{inner[0]}", f"{optimizer.name}/learning_rate"] + \
                [f"{optimizer.name}/{name}" for name in inner[1:]]
        return names

    @property
    def variables(self):
        return self.get_state()

    def set_state(self, state):
        """Restore a :meth:`get_state` list (inner learning rates are configuration, not restored)."""
        state = list(state)
        expected = 1 + sum(len(optimizer.get_state()) + 1 for optimizer in self._inner_optimizers)
        if len(state) != expected:
            raise ValueError(f"MultiOptimizer.set_state expects {expected} arrays ({', '.join(self.state_names())}), "
                             f"received {len(state)}.")
        position = 1
        for optimizer in self._inner_optimizers:
            count = len(optimizer.get_state())
            optimizer.set_state(state[position:position + 1] + state[position + 2:position + 1 + count])
            position += count + 1
        self._iterations = int(numpy.asarray(state[0]).reshape(()))

    # --------------------------------------------------------------- config
    def get_config(self):
        return {"optimizer_map": _serialize_map(self._optimizer_map), "loss_scale_factor": self.loss_scale_factor,
                "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        mapping = config["optimizer_map"]
        if isinstance(mapping, dict):
            if mapping.get("class_name") != "OptimizerMap":
                raise ValueError(f"MultiOptimizer.from_config: optimizer_map must be a serialized OptimizerMap, "
                                 f"received class {mapping.get('class_name')!r}.")
            config["optimizer_map"] = OptimizerMap.from_config(mapping["config"], custom_objects)
        return cls(**config)

    def __repr__(self):
        return f"<MultiOptimizer name={self.name!r} optimizers={self._inner_optimizers!r}>"
