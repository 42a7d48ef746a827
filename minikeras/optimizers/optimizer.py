"""Optimizer: the base class of all optimizers (Keras 3 semantics).

An optimizer updates minikeras Tensors (``requires_grad=True`` leaves) in
place from their gradients. Per step it:

1. drops variables whose gradient is None (with a warning, like Keras),
2. divides by ``loss_scale_factor`` when one is set,
3. accumulates gradients when ``gradient_accumulation_steps`` is set and
   this is not an update step,
4. clips (``clipnorm`` / ``clipvalue`` / ``global_clipnorm``),
5. applies decoupled weight decay ``w -= lr * weight_decay * w``,
6. runs the subclass's ``update_step`` on every variable,
7. updates the moving averages (``use_ema``) and counts the step,
8. projects the variables that have a ``constraint`` (as Keras's ``apply``).

Variables marked ``overwrite_with_gradient`` (a float8 layer's scales) are
assigned their gradient instead, and get no slots (_overwrite.py).

An ``apply`` that builds the optimizer (its first) and then fails puts it
back unbuilt, whichever step called it.

Optimizer state ("slots": momenta, velocities...) is created by ``build`` on
the first update, one array per slot and variable, on the variable's device
and in its dtype. All updates write into ``variable.data`` and the slot
arrays with ``out=`` operations and a few reusable scratch buffers, so a
step allocates nothing the size of a weight (unless clipping or gradient
accumulation is on).
"""
import contextlib
import functools
import warnings

import numpy

from minikeras import backend
from minikeras.autograd import Tensor
from minikeras.optimizers._checks import (
    camel_to_snake, check_float_in_range, check_variable, checked_learning_rate, describe,
)
from minikeras.optimizers._clipping import clip_gradients
from minikeras.optimizers._fused import update_all
from minikeras.optimizers._overwrite import apply_overwrites, building_without_overwritten, without_overwritten
from minikeras._support.argument_validation import validate_tensor_input
from minikeras.optimizers._slots import ScratchBuffers
from minikeras.optimizers._state import OptimizerState, VariableReferences
from minikeras.optimizers.schedules import LearningRateSchedule
from minikeras.optimizers.schedules import deserialize as deserialize_schedule
from minikeras.optimizers.schedules import serialize as serialize_schedule


class Optimizer(OptimizerState):
    """Base class of the optimizers; subclasses implement ``update_step``.

    Args:
        learning_rate: a float, a LearningRateSchedule (evaluated at
            ``iterations`` every step), or a callable taking no arguments.
        weight_decay: if set, decoupled weight decay ``w -= lr * wd * w``
            before each update.
        clipnorm: if set, each gradient is scaled so its L2 norm is at most
            this value.
        clipvalue: if set, each gradient is clipped elementwise to
            ``[-clipvalue, clipvalue]``.
        global_clipnorm: if set, all gradients are scaled together so that
            their joint L2 norm is at most this value. At most one of the
            three clipping arguments may be set.
        use_ema: keep an exponential moving average of the weights.
        ema_momentum: momentum of that average.
        ema_overwrite_frequency: every this many steps, overwrite the weights
            with their average (None: only in ``finalize_variable_values``).
        loss_scale_factor: gradients are divided by this before use (the
            loss is expected to be multiplied by it, see ``scale_loss``).
        gradient_accumulation_steps: update only every this many calls, with
            the mean of the gradients received since the last update.
        name: a label; defaults to the snake_case class name.

    Attributes:
        iterations: number of update steps done (an int).
        built: True once the state exists.
    """

    def __init__(
        self,
        learning_rate,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        loss_scale_factor=None,
        gradient_accumulation_steps=None,
        name=None,
        **kwargs,
    ):
        owner = type(self).__name__
        if kwargs.pop("decay", None) is not None:
            warnings.warn("Argument `decay` is no longer supported and will be ignored.", stacklevel=2)
        if kwargs:
            raise ValueError(f"{owner}: argument(s) not recognized: {kwargs}")
        clip_arguments = {"clipnorm": clipnorm, "clipvalue": clipvalue, "global_clipnorm": global_clipnorm}
        if sum(value is not None for value in clip_arguments.values()) > 1:
            raise ValueError(
                f"{owner}: Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. "
                f"Received: clipnorm={clipnorm}, clipvalue={clipvalue}, global_clipnorm={global_clipnorm}"
            )
        for argument, value in clip_arguments.items():
            if value is not None:
                check_float_in_range(owner, argument, value, low=0.0, allow_inf=True)
        if weight_decay is not None:
            check_float_in_range(owner, "weight_decay", weight_decay)
        if use_ema:
            check_float_in_range(owner, "ema_momentum", ema_momentum, low=0.0, high=1.0)
            if ema_overwrite_frequency is not None and (
                isinstance(ema_overwrite_frequency, bool) or not isinstance(ema_overwrite_frequency, int)
                or ema_overwrite_frequency < 1
            ):
                raise ValueError(
                    f"{owner}: `ema_overwrite_frequency` must be an integer >= 1 or None. "
                    f"Received: ema_overwrite_frequency={ema_overwrite_frequency!r}"
                )
        if loss_scale_factor is not None:
            check_float_in_range(owner, "loss_scale_factor", loss_scale_factor, low=0.0, low_inclusive=False)
        if gradient_accumulation_steps is not None and (
            isinstance(gradient_accumulation_steps, bool) or not isinstance(gradient_accumulation_steps, int)
            or gradient_accumulation_steps < 2
        ):
            raise ValueError(
                f"{owner}: `gradient_accumulation_steps` must be an integer >= 2. "
                f"Received: gradient_accumulation_steps={gradient_accumulation_steps!r}"
            )
        self.name = name if name is not None else camel_to_snake(owner)
        self.weight_decay = weight_decay
        self.clipnorm = clipnorm
        self.clipvalue = clipvalue
        self.global_clipnorm = global_clipnorm
        self.use_ema = bool(use_ema)
        self.ema_momentum = ema_momentum
        self.ema_overwrite_frequency = ema_overwrite_frequency
        self.loss_scale_factor = loss_scale_factor
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self._learning_rate = checked_learning_rate(owner, learning_rate)
        self._iterations = 0
        self.built = False
        self._trainable_variables = []
        self._variable_index = {}  # id(variable) -> its position in the build list
        self._state = []  # StateEntry per slot array, in creation order
        self._scratch = ScratchBuffers()
        self._excluded_variables = VariableReferences()  # kept (not only their ids) for a deep copy to map
        self._exclude_ids = set()
        self._exclude_names = ()
        self._moving_averages = []
        self._accumulated_gradients = []

    # -------------------------------------------------------------- counters
    @property
    def iterations(self):
        """Update steps done. With gradient accumulation, calls // steps."""
        if self.gradient_accumulation_steps:
            return self._iterations // self.gradient_accumulation_steps
        return self._iterations

    # --------------------------------------------------------- learning rate
    @property
    def learning_rate(self):
        """The learning rate for the next step, as a float (a schedule is
        evaluated at the current step count)."""
        return self._current_learning_rate()

    @learning_rate.setter
    def learning_rate(self, learning_rate):
        if not isinstance(learning_rate, LearningRateSchedule) and not callable(learning_rate):
            if isinstance(self._learning_rate, LearningRateSchedule):
                raise TypeError(
                    f"{type(self).__name__} was created with a LearningRateSchedule as its `learning_rate`, "
                    "hence its learning rate is not settable to a number. To set it, make the optimizer with "
                    "a float `learning_rate`, or assign another schedule."
                )
        self._learning_rate = checked_learning_rate(type(self).__name__, learning_rate)

    # Whether a training step using this optimizer may be captured as a CUDA
    # graph: every per-step host value of its update goes through
    # ``_step_value`` (models/captured_step.py checks the rest).
    _capturable = False

    def capture_refusal(self):
        """Why a step with this optimizer cannot be captured as a graph, or None."""
        if not self._capturable or type(self).update_step is not _base_update_step(type(self)):
            return f"the {type(self).__name__} optimizer computes per-step values on the host"
        if self.use_ema:
            return "use_ema updates on a host-side schedule"
        if self.gradient_accumulation_steps:
            return "gradient_accumulation_steps decides on the host which steps update"
        return None

    def _step_value(self, value, recompute):
        """``value``, a number computed on the host for this step (a learning
        rate, a bias correction), as the update kernels get it: the number
        itself, or while a step is captured a device scalar that is
        ``recompute()``d before every replay (``optimizers/_step_scalars.py``)."""
        scalars = self.__dict__.get("_captured_scalars")
        return value if scalars is None else scalars.bind(value, recompute)

    @contextlib.contextmanager
    def capturing(self, scalars):
        """The block captures a training step as a CUDA graph
        (models/captured_step.py): per-step host values go through
        ``scalars`` (:meth:`_step_value`), and the step count is put back
        afterwards, since the capture ran nothing (:meth:`count_steps`
        counts each replay)."""
        iterations = self._iterations
        self._captured_scalars = scalars
        try:
            yield self
        finally:
            self._captured_scalars = None
            self._iterations = iterations

    @property
    def replicas_may_share_updates(self):
        """Whether data-parallel replicas on one host may take one replica's
        updated weights instead of each running this update
        (distribute/replica_step.py): not when the optimizer keeps state that
        changes the step (a loss scale) or the weights later (EMA averages)."""
        return not self.use_ema

    def count_steps(self, count):
        """Count ``count`` update steps that ran outside :meth:`apply` (a
        captured step's replays)."""
        self._iterations += int(count)

    def _current_learning_rate(self):
        if isinstance(self._learning_rate, LearningRateSchedule):
            return float(self._learning_rate(self._iterations))
        if callable(self._learning_rate):
            return float(self._learning_rate())
        return self._learning_rate

    # ----------------------------------------------------------------- state
    def build(self, variables):
        """Create the optimizer state for ``variables`` (called by the first
        ``apply`` if not before). Subclasses extend it to add their slots with
        :meth:`add_variable_from_reference` / :meth:`add_optimizer_variables`.

        Args:
            variables: the list of Tensors this optimizer will update.
        """
        if self.built:
            return
        variables = without_overwritten(list(variables))  # float8 scales: assigned, not updated (_overwrite.py)
        for index, variable in enumerate(variables):
            check_variable(type(self).__name__, variable, index)
            self._variable_index[id(variable)] = index
        self._trainable_variables = variables
        if self.use_ema:
            self._moving_averages = self.add_optimizer_variables(variables, "average")
        if self.gradient_accumulation_steps:
            self._accumulated_gradients = self.add_optimizer_variables(variables, "gradient_accumulator")
        self._scratch.reserve(variables, 2)
        self.built = True

    # ------------------------------------------------------------- updating
    def apply_gradients(self, grads_and_vars):
        """Update each variable from its gradient.

        Args:
            grads_and_vars: pairs ``(gradient, variable)``; a gradient is a
                Tensor or an array (or None to skip that variable).

        Returns:
            The step count after the update.
        """
        pairs = list(grads_and_vars)
        if not pairs:
            return self.iterations
        grads, variables = zip(*pairs)
        self.apply(grads, variables)
        return self.iterations

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Every class's own ``apply`` (LossScaleOptimizer's, a user's) undoes a
        # failed first build, as the base class's does.
        own = cls.__dict__.get("apply")
        if own is not None and not getattr(own, "_undoes_building", False):
            cls.apply = _undone_if_building_fails(own)
        own_build = cls.__dict__.get("build")
        if own_build is not None and not getattr(own_build, "_skips_overwritten", False):
            cls.build = building_without_overwritten(own_build)

    def apply(self, grads, trainable_variables=None):
        """Update variables from gradients (Keras 3 ``optimizer.apply``),
        then project the variables that have a ``constraint``.

        Args:
            grads: one gradient (Tensor, array or None) per variable.
            trainable_variables: the Tensors to update; may be omitted once
                the optimizer is built, and then ``grads`` match the build
                list one to one.

        Raises:
            ValueError: unknown variables, a mismatched gradient count or
                shape, or no gradient at all.
        """
        grads = list(grads)
        owner = type(self).__name__
        if not grads:
            return
        for grad in grads:
            if grad is not None:
                validate_tensor_input(owner, grad, allow_bool=False, allow_complex=False)
        if trainable_variables is None:
            if not self.built:
                raise ValueError(
                    f"{owner}: when passing `grads` without `variables`, the optimizer must already be built on a "
                    "list of variables. Call `optimizer.build(trainable_variables)` first."
                )
            if len(grads) != len(self._trainable_variables):
                raise ValueError(
                    f"{owner}: when passing `grads` alone, they must match the optimizer's variables one to one. "
                    f"Received {len(grads)} gradients, but the optimizer tracks "
                    f"{len(self._trainable_variables)} variables."
                )
            variables = list(self._trainable_variables)
        else:
            variables = list(trainable_variables)
            if len(grads) != len(variables):
                raise ValueError(f"{owner}: received {len(grads)} gradients for {len(variables)} variables.")
            if not self.built:
                self.build(variables)
            self._check_variables_are_known(without_overwritten(variables))
        grads, variables = self._filter_empty_gradients(grads, variables)
        grads, variables = apply_overwrites(self, grads, variables)
        if not grads:
            self._iterations += 1
            return
        grads = [self._gradient_array(grad, variable) for grad, variable in zip(grads, variables)]
        self._apply_filtered(grads, variables)
        apply_constraints(variables)

    def _apply_filtered(self, grads, variables):
        if self.gradient_accumulation_steps:
            steps = self.gradient_accumulation_steps
            accumulators = [self._accumulated_gradients[self._variable_index[id(v)]] for v in variables]
            if (self._iterations + 1) % steps == 0:
                # One update with the mean of this and the accumulated gradients.
                mean_grads = []
                for grad, accumulator, variable in zip(grads, accumulators, variables):
                    with variable.device.activate():
                        mean_grads.append((grad + accumulator) / steps)
                        accumulator.fill(0)
                self._clip_decay_and_update(mean_grads, variables)
            else:
                for grad, accumulator, variable in zip(grads, accumulators, variables):
                    with variable.device.activate():
                        accumulator += grad
        else:
            self._clip_decay_and_update(grads, variables)
        if self.use_ema:
            self._update_moving_averages()
        self._iterations += 1

    def _clip_decay_and_update(self, grads, variables):
        grads = self._clip_gradients(grads, variables)
        learning_rate = self._current_learning_rate()
        self._apply_weight_decay(variables, learning_rate)
        self._update_variables(grads, variables, learning_rate)

    def _update_variables(self, grads, variables, learning_rate):
        """Run ``update_step`` on every variable (a hook for optimizers with
        per-step, optimizer-wide state such as Nadam)."""
        for grad, variable in zip(grads, variables):
            with variable.device.activate():
                self.update_step(grad, variable, learning_rate)

    def update_step(self, gradient, variable, learning_rate):
        """Update one variable in place.

        Args:
            gradient: the (clipped) gradient array, dtype of the variable.
            variable: the Tensor to update (write into ``variable.data``).
            learning_rate: the learning rate for this step (a float).
        """
        raise NotImplementedError(f"{type(self).__name__} must implement update_step(gradient, variable, learning_rate).")

    def slot_index(self, variable):
        """Position of ``variable`` in the list the optimizer was built with."""
        return self._variable_index[id(variable)]

    def scratch(self, variable, count=2):
        """``count`` reusable scratch arrays shaped like ``variable`` (same
        device and dtype), valid until the next ``scratch`` call."""
        return self._scratch.get(variable, count)

    # ------------------------------------------------------------- clipping
    def _clip_gradients(self, grads, variables):
        return clip_gradients(grads, variables, self.clipnorm, self.clipvalue, self.global_clipnorm)

    # --------------------------------------------------------- weight decay
    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Exempt variables from weight decay (call before ``build``).

        Args:
            var_list: Tensors to exempt.
            var_names: substrings; a variable whose ``name`` contains any of
                them is exempt (e.g. ``["bias"]``).
        """
        if self.built:
            raise ValueError(f"{type(self).__name__}: exclude_from_weight_decay() must be called before build.")
        self._excluded_variables = VariableReferences(var_list or ())
        self._exclude_ids = {id(variable) for variable in self._excluded_variables}
        self._exclude_names = tuple(var_names or ())

    def _rekey_after_copy(self, original, memo):
        super()._rekey_after_copy(original, memo)
        # Mapped again now that the whole optimizer, its build list included, is copied.
        self._excluded_variables = VariableReferences(
            memo.get(id(variable), variable) for variable in original._excluded_variables)
        self._exclude_ids = {id(variable) for variable in self._excluded_variables}

    def _use_weight_decay(self, variable):
        if id(variable) in self._exclude_ids:
            return False
        name = variable.name or ""
        return not any(part in name for part in self._exclude_names)

    def _apply_weight_decay(self, variables, learning_rate):
        if self.weight_decay is None:
            return
        # One multi-tensor kernel per device (minikeras/kernels/optimizer_updates.py).
        pairs = [(variable.device, (variable.data, self.scratch(variable, 1)[0]))
                 for variable in variables if self._use_weight_decay(variable)]
        if pairs:
            learning_rate = self._step_value(learning_rate, self._current_learning_rate)
        update_all("weight_decay_update", pairs, self.weight_decay, learning_rate)

    # ------------------------------------------------------------------ EMA
    def _update_moving_averages(self):
        # The first step copies the weights (momentum 0), as Keras does.
        momentum = self.ema_momentum if self.iterations != 0 else 0.0
        for variable, average in zip(self._trainable_variables, self._moving_averages):
            (weighted,) = self.scratch(variable, 1)
            with variable.device.activate():
                average *= momentum
                variable.device.xp.multiply(variable.data, 1.0 - momentum, out=weighted)
                average += weighted
        if self.ema_overwrite_frequency and (self.iterations + 1) % self.ema_overwrite_frequency == 0:
            self._overwrite_with_moving_averages(self._trainable_variables)

    def _overwrite_with_moving_averages(self, variables):
        if len(variables) != len(self._moving_averages):
            raise ValueError(
                f"{type(self).__name__}: received {len(variables)} variables to overwrite with their moving "
                f"averages, but the optimizer holds {len(self._moving_averages)} averages."
            )
        for variable, average in zip(variables, self._moving_averages):
            with variable.device.activate():
                variable.data[...] = average

    def finalize_variable_values(self, var_list):
        """At the end of training: with ``use_ema``, set the weights to their
        moving averages; otherwise do nothing."""
        if self.use_ema:
            self._overwrite_with_moving_averages(list(var_list))

    def scale_loss(self, loss):
        """Multiply the loss by ``loss_scale_factor`` (if set) before backward."""
        return loss * self.loss_scale_factor if self.loss_scale_factor is not None else loss

    # --------------------------------------------------------------- checks
    def _check_variables_are_known(self, variables):
        for variable in variables:
            if id(variable) not in self._variable_index:
                raise ValueError(
                    f"{type(self).__name__}: unknown variable {describe(variable)}. This optimizer can only be "
                    "called for the variables it was originally built with. When working with a new set of "
                    "variables, you should recreate a new optimizer instance."
                )

    def _filter_empty_gradients(self, grads, variables):
        kept = [(grad, variable) for grad, variable in zip(grads, variables) if grad is not None]
        if not kept:
            raise ValueError(f"{type(self).__name__}: no gradients provided for any variable.")
        if len(kept) != len(grads):
            missing = [describe(v) for g, v in zip(grads, variables) if g is None]
            warnings.warn(
                f"Gradients do not exist for variables {missing} when minimizing the loss. "
                "If using `model.compile()`, did you forget to provide a `loss` argument?",
                stacklevel=3,
            )
        return [grad for grad, _ in kept], [variable for _, variable in kept]

    def _gradient_array(self, grad, variable):
        """The gradient as an array of the variable's dtype on its device,
        divided by ``loss_scale_factor`` when one is set."""
        data = grad.data if isinstance(grad, Tensor) else grad
        if (
            variable.device.owns(data) and data.dtype == variable.dtype
            and data.shape == variable.data.shape and self.loss_scale_factor is None
        ):
            return data  # the common CPU case: nothing to convert
        device = variable.device
        if not backend.is_array(data):
            data = numpy.asarray(data)
            if data.dtype == object:
                raise TypeError(
                    f"{type(self).__name__}: the gradient of {describe(variable)} must be a Tensor or an array, "
                    f"received {type(grad).__name__}."
                )
        if tuple(data.shape) != variable.shape:
            raise ValueError(
                f"{type(self).__name__}: the gradient of {describe(variable)} has shape {tuple(data.shape)}, "
                f"expected the variable's shape {variable.shape}."
            )
        with device.activate():
            data = device.asarray(data)  # from the host or another device
            if data.dtype != variable.dtype:
                data = data.astype(variable.dtype)
            if self.loss_scale_factor is not None:
                data = data / self.loss_scale_factor
        return data

    # --------------------------------------------------------------- config
    def get_config(self):
        """The constructor arguments as a JSON-friendly dict (no state)."""
        if isinstance(self._learning_rate, LearningRateSchedule):
            learning_rate = serialize_schedule(self._learning_rate)
        else:
            learning_rate = self._learning_rate if callable(self._learning_rate) else float(self._learning_rate)
        return {
            "name": self.name,
            "learning_rate": learning_rate,
            "weight_decay": self.weight_decay,
            "clipnorm": self.clipnorm,
            "global_clipnorm": self.global_clipnorm,
            "clipvalue": self.clipvalue,
            "use_ema": self.use_ema,
            "ema_momentum": self.ema_momentum,
            "ema_overwrite_frequency": self.ema_overwrite_frequency,
            "loss_scale_factor": self.loss_scale_factor,
            "gradient_accumulation_steps": self.gradient_accumulation_steps,
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """Make an optimizer (without state) from ``get_config()`` output.

        Args:
            config: the dict from ``get_config``; a ``learning_rate`` that is
                a dict is deserialized as a schedule.
            custom_objects: optional ``{name: class}`` for custom schedules.
        """
        config = dict(config)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = deserialize_schedule(config["learning_rate"], custom_objects)
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r} learning_rate={self.learning_rate!r}>"


def apply_constraints(variables):
    """Project each variable that has a ``constraint`` (``add_weight(constraint=...)``)
    after its update, in place: Keras's optimizers do this at the end of
    ``apply``, so every training step (the built-in one, a user's, each
    replica's) gets it from the one place."""
    for variable in variables:
        constraint = getattr(variable, "constraint", None)
        if constraint is not None:
            with variable.device.activate():
                variable.data[...] = constraint(variable.data)


def _undone_if_building_fails(apply):
    """``apply`` that, when it builds the optimizer and then fails, puts the
    optimizer back unbuilt (:meth:`OptimizerState.unbuilt_snapshot`), so a
    retry (e.g. with a smaller batch after running out of memory) starts
    from the optimizer as it was."""

    @functools.wraps(apply)
    def guarded(self, grads, trainable_variables=None):
        if self.__dict__.get("built", True):
            return apply(self, grads, trainable_variables)
        snapshot = self.unbuilt_snapshot()
        try:
            return apply(self, grads, trainable_variables)
        except BaseException:
            self.restore_unbuilt(snapshot)
            raise

    guarded._undoes_building = True
    return guarded


def _base_update_step(cls):
    """The ``update_step`` of the library class ``cls`` derives from (a
    user's subclass that overrides it is not capturable)."""
    for klass in cls.__mro__:
        if klass.__module__.startswith("minikeras.optimizers"):
            return klass.update_step
    return None


Optimizer.apply = _undone_if_building_fails(Optimizer.apply)
