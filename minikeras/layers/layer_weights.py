"""What a layer holds: its weights, its sublayers and its losses (Keras 3's
``weights``, ``trainable_weights``, ``get_weights``, ``losses``...).

``LayerWeights`` is a part of ``Layer`` (layers/base.py, which holds
``add_weight``), kept apart from the call protocol. A layer's sublayers are
the layers it holds as attributes or in lists of attributes; their weights
follow its own.
"""
import numpy

from minikeras.autograd.tensor import Tensor, array_of
from minikeras.layers.weight_info import weight_info


class LayerWeights:
    """The weights, sublayers and losses of a layer (see module docstring)."""

    def _sublayers(self):
        """Layers held as attributes (or in lists of attributes), in order.

        Runs several times a step for every layer, so the scan of all
        attributes is kept (``_SublayerPlan``): the names of the attributes
        that hold a layer, a list or a tuple. Each call reads those names'
        current values, so a list appended to in place, or an attribute
        given another layer, is seen at once; ``__setattr__`` drops the
        plan when a layer or sequence goes to a name outside it, and
        ``__delattr__`` when an attribute goes (its order changes).
        """
        attributes = self.__dict__
        plan = attributes.get("_sublayer_plan")
        if plan is None or plan.size != len(attributes):  # (an attribute added past __setattr__)
            plan = _SublayerPlan(attributes)
            attributes["_sublayer_plan"] = plan
            plan.size = len(attributes)
        if not plan.names:
            return []
        # The layer's own weight and loss lists hold Variables and Tensors, never layers: not scanned.
        own = (attributes.get("_trainable_weights"), attributes.get("_non_trainable_weights"),
               attributes.get("_losses"))
        found = []
        for name in plan.names:
            value = attributes.get(name)
            if isinstance(value, LayerWeights):
                found.append(value)
            elif (isinstance(value, (list, tuple)) and value and value is not own[0] and value is not own[1]
                  and value is not own[2]):
                found.extend([item for item in value if isinstance(item, LayerWeights)])
        return found

    @property
    def trainable_weights(self):
        if not self._trainable:
            return []
        weights = list(self._trainable_weights)
        seen = {id(w) for w in weights}
        for layer in self._sublayers():
            _append_unseen(weights, seen, layer.trainable_weights)
        return weights

    @property
    def non_trainable_weights(self):
        weights = list(self._non_trainable_weights)
        if not self._trainable:
            weights = list(self._trainable_weights) + weights
        seen = {id(w) for w in weights}
        for layer in self._sublayers():
            frozen = [] if self._trainable else layer.trainable_weights
            _append_unseen(weights, seen, layer.non_trainable_weights + frozen)
        return weights

    @property
    def weights(self):
        """All weights, in creation order, as Keras lists them: trainable and
        non-trainable interleaved by layer (own weights first)."""
        weights = list(self._all_own_weights())
        seen = {id(w) for w in weights}
        for layer in self._sublayers():
            _append_unseen(weights, seen, layer.weights)
        return weights

    def _all_own_weights(self):
        order = self._trainable_weights + self._non_trainable_weights
        return sorted(order, key=lambda w: _creation_order(w))

    @property
    def trainable_variables(self):
        return self.trainable_weights

    @property
    def variables(self):
        return self.weights

    def get_weights(self):
        """The weights as host NumPy arrays, in ``weights`` order."""
        return [_host_copy(w) for w in self.weights]

    def set_weights(self, values):
        """Overwrite the weights from arrays, checking count and shapes."""
        weights = self.weights
        values = list(values)
        if len(values) != len(weights):
            raise ValueError(
                f"Layer '{self.name}' expects {len(weights)} weight array(s), received {len(values)}."
            )
        for weight, value in zip(weights, values):
            shape = tuple(numpy.shape(value))
            if shape != weight.shape:
                raise ValueError(
                    f"Layer '{self.name}': weight '{weight.name}' has shape {weight.shape}, "
                    f"received an array of shape {shape}."
                )
        for weight, value in zip(weights, values):
            weight.assign(array_of(value))

    def count_params(self):
        if not self.built:
            raise ValueError(f"Layer '{self.name}' is not built yet: call it on data or call build() first.")
        return int(sum(int(numpy.prod(w.shape)) for w in self.weights))

    # -------------------------------------------------------------- losses
    def add_loss(self, loss):
        """Add a loss Tensor (e.g. an activity regularizer) from this call.

        Raises:
            ValueError: for a symbolic KerasTensor (Keras 3 refuses one too:
                a loss has a value only inside ``call()``).
        """
        if not isinstance(loss, Tensor) and _is_symbolic(loss):
            raise ValueError(f"{type(self).__name__}.add_loss() can only be called from inside build() or call(), "
                             f"on a tensor input, received a symbolic KerasTensor {loss!r}: compute the loss in a "
                             "layer's call() (as keras.io's VAE does), or override Model.compute_loss().")
        self._losses.append(loss)

    @property
    def losses(self):
        """Regularization losses: the weights' (recomputed, differentiable)
        and those added during the last call."""
        result = []
        for weight in self._trainable_weights + self._non_trainable_weights:
            info = weight_info(weight)
            if info is not None and info.regularizer is not None:
                result.append(info.regularizer(weight))
        result.extend(self._losses)
        for layer in self._sublayers():
            result.extend(layer.losses)
        return result

    def _clear_call_losses(self):
        self.__dict__["_losses"] = []  # as in _checked_call
        for layer in self._sublayers():
            layer._clear_call_losses()



class _WeightInfo:
    __slots__ = ("regularizer", "trainable", "order")

    def __init__(self, regularizer, trainable):
        global _weight_counter
        self.regularizer = regularizer
        self.trainable = trainable
        _weight_counter += 1
        self.order = _weight_counter


_LAYER_OR_SEQUENCE = (LayerWeights, list, tuple)  # what _sublayers looks into
_OWN_LISTS = ("_trainable_weights", "_non_trainable_weights", "_losses")


class _SublayerPlan:
    """Where a layer's sublayers may be: the names of its attributes that
    hold a layer, a list or a tuple, in attribute order (its own weight and
    loss lists left out unless they hold a layer). Not itself a list, so
    no scan of a layer's attributes (saving's, the metrics') takes it for
    a list of sublayers."""

    __slots__ = ("names", "size")

    def __init__(self, attributes):
        self.names = tuple(name for name, value in attributes.items() if _may_hold_sublayers(name, value))
        self.size = None


def _append_unseen(weights, seen, candidates):
    """Append to ``weights`` each of ``candidates`` not in it yet (by identity;
    ``seen`` holds the ids of what ``weights`` holds, all alive meanwhile):
    a set, not a scan of the list per weight, which grew with the square of
    a deep model's weight count every step."""
    for weight in candidates:
        key = id(weight)
        if key not in seen:
            seen.add(key)
            weights.append(weight)


def _may_hold_sublayers(name, value):
    """Whether ``_sublayers`` must look at attribute ``name`` while it holds ``value``."""
    return isinstance(value, _LAYER_OR_SEQUENCE) and (name not in _OWN_LISTS or isinstance(value, LayerWeights))
_weight_counter = 0


def _creation_order(weight):
    info = weight_info(weight)
    return info.order if info is not None else 0



def _host_copy(weight):
    """A host copy of a weight that the caller may keep and change."""
    host = weight.numpy()
    return host.copy() if host is weight.data else host


def _is_symbolic(value):
    from minikeras.layers.input import KerasTensor  # here: layers/input.py imports the layers this module makes

    return isinstance(value, KerasTensor)
