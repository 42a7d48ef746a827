"""Making and inspecting model replicas for MirroredModel.

A replica is the same architecture with the same weights, built on another
logical device: rebuilt from ``get_config()`` inside a device scope when
the model has a config (Sequential, functional, subclasses that define
``get_config``), else deep-copied with its weights moved to the device.
"""
import copy


from minikeras import random
from minikeras.device import device as device_scope
from minikeras.device import registry
from minikeras.layers.base import Layer, weight_constraint


def _has_own_config(model):
    from minikeras.models.functional import Functional
    from minikeras.models.sequential import Sequential

    if isinstance(model, (Functional, Sequential)):
        return True
    defining = next(cls for cls in type(model).__mro__ if "get_config" in vars(cls))
    return defining is not Layer


def _same_weights_layout(replica, values):
    weights = replica.weights
    return len(weights) == len(values) and all(w.shape == v.shape for w, v in zip(weights, values))


def clone_model(model, device, sample_inputs=None):
    """A replica of ``model`` on ``device`` with the same weight values.

    Args:
        model: a built Model.
        device: the target logical Device.
        sample_inputs: a batch to build a replica that builds lazily.

    Returns:
        The replica (a new Model; its weights live on ``device``).
    """
    values = model.get_weights()
    generator = random.host_rng()
    saved_state = generator.bit_generator.state  # initializers draw from it: leave the user's stream alone
    try:
        replica = None
        if _has_own_config(model):
            try:
                with device_scope(device):
                    replica = type(model).from_config(model.get_config())
                    if not replica.built and sample_inputs is not None:
                        _build_with(replica, sample_inputs)
            except (NotImplementedError, TypeError, ValueError, KeyError):
                replica = None
        if replica is None or not _same_weights_layout(replica, values):
            replica = _deep_copy_to(model, device)
    finally:
        generator.bit_generator.state = saved_state
    replica.set_weights(values)
    return replica


def _build_with(model, sample_inputs):
    from minikeras.autograd import no_grad

    with no_grad():
        model(_first_rows(sample_inputs, 1), training=False)


def _first_rows(structure, count):
    if isinstance(structure, (list, tuple)):
        return type(structure)(_first_rows(item, count) for item in structure)
    if isinstance(structure, dict):
        return {key: _first_rows(value, count) for key, value in structure.items()}
    return structure[:count]


def _deep_copy_to(model, device):
    """``copy.deepcopy`` of a model (devices, optimizer and compiled state
    excluded), with its weights moved to ``device``."""
    memo = {id(d): d for d in registry.list_logical_devices()}
    for name in ("optimizer", "compiled_loss", "compiled_metrics", "history"):
        value = model.__dict__.get(name)
        if value is not None:
            memo[id(value)] = None
    for weight in model.weights:  # shared by the deep copy, then copied below by the device
        memo[id(weight.data)] = weight.data
    replica = copy.deepcopy(model, memo)
    for weight in replica.weights:
        data = device.copy_from(weight.data, weight.device)
        weight.data = data
        weight.device = device
        weight.grad = None
        device.memory.track(data)
    return replica


def call_losses(layer):
    """The losses added by the last call (activity regularizers, add_loss),
    walked as ``Layer.losses`` walks them, weight penalties left out."""
    result = list(layer._losses)
    for sub in layer._sublayers():
        result.extend(call_losses(sub))
    return result


def weight_losses(model, from_calls):
    """``model.losses`` without the losses of the last call: the weight
    regularization penalties, which depend on the weights only."""
    return [term for term in model.losses if not any(term is other for other in from_calls)]


def apply_constraints(weights):
    """Project weights with constraints, as Model.train_step does."""
    for weight in weights:
        constraint = weight_constraint(weight)
        if constraint is not None:
            weight.data[...] = constraint(weight.data)


def clone_optimizer(optimizer):
    """A new optimizer with the same class and configuration, no state."""
    clone = type(optimizer).from_config(optimizer.get_config())
    clone._exclude_names = tuple(getattr(optimizer, "_exclude_names", ()))
    return clone


def copy_hyperparameters(source, target):
    """Make ``target`` use ``source``'s current hyperparameters (callbacks
    such as LearningRateScheduler change the primary optimizer only)."""
    target._learning_rate = source._learning_rate
    for key, value in vars(source).items():
        if not key.startswith("_") and key != "built" and (value is None or isinstance(value, (bool, int, float))):
            setattr(target, key, value)


def built_on(optimizer, weights):
    """True when ``optimizer`` was built on exactly ``weights``."""
    index = getattr(optimizer, "_variable_index", {})
    return optimizer.built and len(index) == len(weights) and all(id(w) in index for w in weights)


def build_optimizers(optimizers, weight_lists):
    """Build each optimizer on its replica's weights, all or none.

    Returns:
        Snapshots for :func:`unbuild_optimizers` (None for optimizers that
        were built already): when the step that built them fails, they are
        put back unbuilt, so that a failed step (e.g. out of memory for the
        slots, or later in the step) leaves nothing behind.
    """
    snapshots = [None if optimizer.built else _unbuilt_state(optimizer) for optimizer in optimizers]
    try:
        for optimizer, weights in zip(optimizers, weight_lists):
            optimizer.build(weights)
    except BaseException:
        unbuild_optimizers(optimizers, snapshots)
        raise
    return snapshots


def _unbuilt_state(optimizer):
    """The attributes of an optimizer with no state yet (the learning rate,
    maybe a user's schedule or callable, shared rather than copied)."""
    rate = vars(optimizer).get("_learning_rate")
    try:
        return copy.deepcopy(vars(optimizer), {id(rate): rate})
    except Exception:  # an attribute of a custom optimizer that cannot be copied
        return None


def unbuild_optimizers(optimizers, snapshots):
    """Put optimizers back as they were before :func:`build_optimizers`."""
    for optimizer, snapshot in zip(optimizers, snapshots):
        if snapshot is not None:
            optimizer.__dict__.clear()
            optimizer.__dict__.update(snapshot)
