"""LossScaleOptimizer: dynamic loss scaling for float16 training (Keras 3).

float16 has 5 exponent bits: gradients below ~6e-8 flush to zero. Scaling
the loss by a large factor scales every gradient of the backward pass by it
too, so small gradients survive; the optimizer divides them back before the
update. The scale adapts: a step whose gradients hold an inf or a NaN (the
scale was too large) is skipped and the scale halved; after
``dynamic_growth_steps`` finite steps in a row it doubles.

``Model.compile`` wraps the optimizer in one under a ``mixed_float16``
policy (``auto_scale_loss=True``, as Keras), and the training step calls
``scale_loss`` before ``backward()``. bfloat16 has float32's exponent range
and needs no scaling.

The scale never halves below 1, as tf.keras 2's dynamic loss scale
(``maximum(scale / 2, 1)``): Keras 3 halves without a floor, so that after
about 165 non-finite steps in a row a float32 scale of 2**15 reaches 0 and
the next finite step divides every gradient by it, writing NaN into every
weight. A scale of 1 is no scaling, and a non-finite one is refused.

The scale and the step counter live on the host, as minikeras's step count
does; deciding whether a step is finite reads one boolean per device per
step from it.
"""
import math

import numpy

from minikeras.autograd import Tensor
from minikeras.optimizers.optimizer import Optimizer

# The base-optimizer arguments Keras's LossScaleOptimizer refuses unless at
# their defaults (older Keras configs list them all).
_INNER_ONLY_DEFAULTS = {
    "weight_decay": None, "clipnorm": None, "global_clipnorm": None, "clipvalue": None, "use_ema": False,
    "ema_momentum": 0.99, "ema_overwrite_frequency": None, "loss_scale_factor": None,
    "gradient_accumulation_steps": None,
}

#: The scale never halves below this (module docstring).
_MINIMUM_SCALE = 1.0


class LossScaleOptimizer(Optimizer):
    """An optimizer that scales the loss dynamically to prevent float16
    gradient underflow (``keras.optimizers.LossScaleOptimizer``).

    Args:
        inner_optimizer: the Optimizer that applies the (unscaled) gradients.
        initial_scale: the first loss scale, 2**15 by default. Too high
            costs a few skipped steps at the start; too low is slow to grow.
        dynamic_growth_steps: after this many consecutive steps with finite
            gradients, the scale doubles.
        name: the optimizer's name.

    Example:
        >>> optimizer = LossScaleOptimizer(SGD(0.1), initial_scale=1024.0)  # doctest: +SKIP
        >>> scaled = optimizer.scale_loss(loss); scaled.backward()          # doctest: +SKIP
        >>> optimizer.apply([w.grad for w in weights], weights)             # doctest: +SKIP
    """

    #: What Keras saves as this wrapper's own (unused) learning rate.
    saved_learning_rate = 0.0

    def __init__(self, inner_optimizer, initial_scale=2.0 ** 15, dynamic_growth_steps=2000, name=None, **kwargs):
        if not kwargs.pop("dynamic", True):
            raise ValueError("LossScaleOptimizer no longer supports `dynamic=False`. Instead, simply set "
                             "`loss_scale_factor` directly on the `inner_optimizer`.")
        for argument, default in _INNER_ONLY_DEFAULTS.items():
            if argument in kwargs and kwargs.pop(argument) != default:
                raise ValueError(f"LossScaleOptimizer does not support `{argument}`. Instead, set `{argument}` "
                                 "on the `inner_optimizer`.")
        if kwargs:
            raise ValueError(f"LossScaleOptimizer does not support arguments: `{'`, `'.join(kwargs)}`.")
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError("LossScaleOptimizer expects an Optimizer as inner_optimizer, received "
                            f"{type(inner_optimizer).__name__}.")
        if isinstance(initial_scale, bool) or not isinstance(initial_scale, (int, float)) \
                or not 0 < initial_scale < math.inf:
            raise ValueError(f"LossScaleOptimizer: initial_scale must be a finite positive number, received "
                             f"{initial_scale!r}.")
        if isinstance(dynamic_growth_steps, bool) or not isinstance(dynamic_growth_steps, int) \
                or dynamic_growth_steps < 1:
            raise ValueError("LossScaleOptimizer: dynamic_growth_steps must be an integer >= 1, received "
                             f"{dynamic_growth_steps!r}.")
        super().__init__(learning_rate=0.0, name=name)
        self.inner_optimizer = inner_optimizer
        self.initial_scale = initial_scale
        self.dynamic_growth_steps = dynamic_growth_steps
        # The inner optimizer must not unscale a second time.
        self.inner_optimizer.loss_scale_factor = None
        self._step_counter = 0
        self._dynamic_scale = float(initial_scale)

    # ---------------------------------------------------------------- state
    @property
    def dynamic_scale(self):
        """The current loss scale (a float32 scalar)."""
        return numpy.float32(self._dynamic_scale)

    @property
    def step_counter(self):
        """Finite steps since the scale last changed."""
        return self._step_counter

    @property
    def iterations(self):
        """The inner optimizer's step count (skipped steps do not count)."""
        return self.inner_optimizer.iterations

    @property
    def learning_rate(self):
        """The inner optimizer's learning rate (settable)."""
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, learning_rate):
        if "inner_optimizer" in self.__dict__:
            self.inner_optimizer.learning_rate = learning_rate
        else:  # Optimizer.__init__ sets the wrapper's own (unused) rate
            self._learning_rate = learning_rate

    def build(self, variables):
        """Build the inner optimizer on ``variables`` (its slots are the state)."""
        if self.built:
            return
        variables = list(variables)
        self.inner_optimizer.build(variables)
        super().build(variables)

    # --------------------------------------------------------------- update
    def scale_loss(self, loss):
        """``loss`` times the current scale (the initial one before the
        first step): call before ``backward()``."""
        return loss * self._dynamic_scale

    def check_finite(self, grads):
        """True when no gradient holds an inf or a NaN (one host read per device)."""
        verdicts = {}
        for grad in grads:
            if grad is None:
                continue
            data = grad.data if isinstance(grad, Tensor) else grad
            device = grad.device if isinstance(grad, Tensor) else None
            key = id(device)
            xp = device.xp if device is not None else numpy
            if device is None:
                verdicts.setdefault(key, (None, []))[1].append(bool(numpy.isfinite(numpy.asarray(data)).all()))
                continue
            with device.activate():
                verdicts.setdefault(key, (device, []))[1].append(xp.isfinite(data).all())
        for device, flags in verdicts.values():
            if device is None:
                if not all(flags):
                    return False
                continue
            with device.activate():
                if not bool(device.to_host(device.xp.stack(flags).all())):
                    return False
        return True

    def apply(self, grads, trainable_variables=None):
        """Apply the unscaled gradients through the inner optimizer when
        they are all finite, then maybe double the scale; otherwise skip
        the step and halve the scale.

        Args:
            grads: one gradient (Tensor, array or None) per variable, of the
                scaled loss.
            trainable_variables: the variables; may be omitted once built.
        """
        grads = list(grads)
        if not self.built:
            if trainable_variables is None:
                raise ValueError("LossScaleOptimizer: when passing `grads` without `variables`, the optimizer "
                                 "must already be built. Call `optimizer.build(trainable_variables)` first.")
            self.build(trainable_variables)
        if not self.check_finite(grads):
            self._step_counter = 0
            self._dynamic_scale = max(self._dynamic_scale * 0.5, _MINIMUM_SCALE)
            return
        self.inner_optimizer.apply([self._unscaled(grad) for grad in grads], trainable_variables)
        if self._step_counter == self.dynamic_growth_steps - 1:
            self._step_counter = 0
            self._dynamic_scale *= 2.0
        else:
            self._step_counter += 1

    @property
    def replicas_may_share_updates(self):
        """False: every replica's scale must follow the gradients it sees."""
        return False

    def _unscaled(self, grad):
        if grad is None:
            return None
        if isinstance(grad, Tensor):
            with grad.device.activate():
                return grad.data / numpy.float32(self._dynamic_scale)
        return numpy.asarray(grad) / numpy.float32(self._dynamic_scale)

    def finalize_variable_values(self, var_list):
        self.inner_optimizer.finalize_variable_values(var_list)

    # ---------------------------------------------------- saving the state
    def get_state(self):
        """Keras's ``variables`` order less the wrapper's learning rate:
        the wrapper's own step count (always 0, as in Keras), the step
        counter, the scale, then the inner optimizer's step count, its
        learning rate (float32) and its slots."""
        inner = self.inner_optimizer.get_state()
        own = [numpy.array(0, dtype=numpy.int64), numpy.array(self._step_counter, dtype=numpy.int64),
               numpy.array(self._dynamic_scale, dtype=numpy.float32)]
        return own + inner[:1] + [numpy.array(self.inner_optimizer.learning_rate, dtype=numpy.float32)] + inner[1:]

    def state_names(self):
        inner = self.inner_optimizer.state_names()
        return ["iteration", "step_counter", "dynamic_scale"] + [f"{self.inner_optimizer.name}/{inner[0]}",
                                                                  f"{self.inner_optimizer.name}/learning_rate"] + inner[1:]

    @property
    def variables(self):
        return self.get_state()

    def set_state(self, state):
        """Restore a :meth:`get_state` list (the inner learning rate is
        configuration, not restored from it)."""
        state = list(state)
        if len(state) < 5:
            raise ValueError(f"LossScaleOptimizer.set_state expects at least 5 arrays ({', '.join(self.state_names()[:5])}, "
                             f"then the inner optimizer's slots), received {len(state)}.")
        counter, scale = numpy.asarray(state[1]).reshape(()), numpy.asarray(state[2]).reshape(())
        if float(counter) < 0 or not 0 < float(scale) < math.inf:
            raise ValueError(f"LossScaleOptimizer.set_state: invalid step counter {counter} or scale {scale}.")
        self.inner_optimizer.set_state([state[3]] + state[5:])
        self._step_counter = int(counter)
        self._dynamic_scale = float(scale)

    # --------------------------------------------------------------- config
    def get_config(self):
        """Keras's config: the name, the serialized inner optimizer, the
        initial scale and the growth interval."""
        from minikeras.optimizers import serialize

        inner = serialize(self.inner_optimizer)
        inner["module"] = "keras.optimizers"
        return {"name": self.name, "inner_optimizer": inner, "initial_scale": self.initial_scale,
                "dynamic_growth_steps": self.dynamic_growth_steps}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from minikeras.optimizers import deserialize

        config = dict(config)
        inner = config.pop("inner_optimizer")
        inner = inner if isinstance(inner, Optimizer) else deserialize(inner, custom_objects)
        return cls(inner, **config)

    def __repr__(self):
        return (f"<LossScaleOptimizer name={self.name!r} inner={self.inner_optimizer!r} "
                f"dynamic_scale={self._dynamic_scale}>")
