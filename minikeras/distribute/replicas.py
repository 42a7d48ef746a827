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
from minikeras.layers.base import Layer


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


def optimizer_attributes(model):
    """``[(attribute name, optimizer)]`` for each optimizer ``model`` holds
    (``optimizer``, and those a custom ``compile`` keeps, e.g. a GAN's
    ``d_optimizer`` and ``g_optimizer``), in attribute order."""
    from minikeras.optimizers import Optimizer

    return [(name, value) for name, value in vars(model).items() if isinstance(value, Optimizer)]


def _is_metric_like(value):
    from minikeras.metrics import Metric
    from minikeras.models.compile_utils import LossContainer, MetricsContainer

    if isinstance(value, (list, tuple)) and value:
        return all(isinstance(item, Metric) for item in value)
    return isinstance(value, (Metric, LossContainer, MetricsContainer))


# Attributes a replica never takes from the primary: its own step functions
# and graphs (they point at the model they were made for) and its training flags.
_OWN = ("train_function", "test_function", "predict_function", "_captured_step", "_pending_logs",
        "stop_training", "history")


def mirror_compiled_state(primary, replica):
    """Make ``replica`` (a copy of ``primary`` on another device) compiled as
    ``primary`` is: for each attribute of ``primary``, an optimizer becomes
    a new optimizer of the same configuration (built by the replica's first
    step, or by :func:`copy_optimizer_state`), metrics, the compiled loss and
    the compiled metrics become fresh copies (each replica counts its own
    rows; their states are combined when the logs are read), and whatever
    else ``compile`` set that the replica lacks is shared (a loss function,
    ``steps_per_execution``). The replica keeps its own layers and weights.
    """
    mine = vars(replica)
    for name, value in vars(primary).items():
        if name in _OWN:
            continue
        if _is_optimizer(value):
            mine[name] = clone_optimizer(value)
        elif _is_metric_like(value):
            mine[name] = _fresh_copy(value)
        elif name not in mine:
            mine[name] = value
    loss = mine.get("compiled_loss")
    if loss is not None and "_loss_tracker" in mine:
        loss.loss_tracker = mine["_loss_tracker"]
    for name in ("train_function", "test_function", "predict_function"):
        mine[name] = None


def _is_optimizer(value):
    from minikeras.optimizers import Optimizer

    return isinstance(value, Optimizer)


def _fresh_copy(value):
    """A deep copy of a metric (or of a container of them) with its state reset."""
    copied = copy.deepcopy(value)
    for item in (copied if isinstance(copied, (list, tuple)) else [copied]):
        reset = getattr(item, "reset_state", None)
        if reset is not None:
            reset()
        for metric in getattr(item, "metrics", None) or []:
            metric.reset_state()
    return copied


def copy_optimizer_state(source, source_model, target, target_model):
    """Build ``target`` on ``target_model``'s copies of the variables
    ``source`` was built on (matched by position in ``weights``) and give it
    ``source``'s state. Nothing when ``source`` is not built."""
    if not source.built:
        return
    position = {id(weight): index for index, weight in enumerate(source_model.weights)}
    targets = target_model.weights
    try:
        variables = [targets[position[id(variable)]] for variable in source.built_variables()]
    except KeyError:
        raise ValueError(f"{type(source).__name__} was built on variables that are not the model's weights; "
                         "a replicated model's optimizers must update its own weights.") from None
    target.build(variables)
    target.set_state(source.get_state())


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
