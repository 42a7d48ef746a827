"""Model: a Layer that can be trained (compile/fit/evaluate/predict) and saved.

Three ways to make one, as in Keras:
- ``Sequential([...])`` (sequential.py),
- ``Model(inputs, outputs)`` on the functional graph (functional.py),
- subclassing ``Model`` with layers as attributes and a ``call()``.
"""
import copy

import numpy

from minikeras.autograd import Tensor
from minikeras.layers.base import Layer
from minikeras.layers.input import KerasTensor
from minikeras.models.training import Trainer
from minikeras._support import array_like
from minikeras._support.nest import map_structure as _map_structure
from minikeras._support.nest import flatten
from minikeras._support.traceback_utils import filter_traceback


class Model(Trainer, Layer):
    """A trainable stack of layers (see module docstring).

    ``Model(inputs, outputs, name=None)`` builds a functional model;
    ``Model()`` in a subclass makes a subclassed model.
    """

    _passes_text = True  # to its first layers (TextVectorization); see Layer

    @filter_traceback
    def __call__(self, inputs, *args, **kwargs):
        # A model called eagerly on another library's arrays (a custom loop's
        # tf.data batch, a torch tensor) computes on minikeras Tensors, so
        # that its outputs have gradients: Keras switches to TensorFlow only
        # for preprocessing layers inside a tf graph (Dataset.map), whose
        # symbolic tensors have no value and stay as they are. A Tensor or a
        # NumPy array goes in as it is.
        if type(inputs) is not Tensor and type(inputs) is not numpy.ndarray:
            inputs = _map_structure(_eager_array, inputs)
        return super().__call__(inputs, *args, **kwargs)

    def __new__(cls, *args, **kwargs):
        if cls is Model and (args or "inputs" in kwargs or "outputs" in kwargs):
            from minikeras.models.functional import Functional

            return super().__new__(Functional)
        if _functional_arguments(args, kwargs):
            return super().__new__(_functional_subclass(cls))
        return super().__new__(cls)

    def __deepcopy__(self, memo):
        """``copy.deepcopy``: Python's own copy, the model's weights copied
        first. Its compiled optimizer refers to weights by identity (those
        it was built for, those excluded from weight decay) and comes before
        the layers among the model's attributes: with the weights in
        ``memo`` already, every such reference maps to the copy's weights,
        built or not (``optimizers/_state.py``)."""
        clone = type(self).__new__(type(self))  # as Python's own copy makes it
        memo[id(self)] = clone
        copy.deepcopy(self.weights, memo)
        clone.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return clone

    def __reduce__(self):
        """``pickle``: the model's ``.keras`` bytes (architecture, weights,
        compile arguments, optimizer and random state), as Keras 3 pickles a
        model; loading rebuilds it, compiled (saving/pickled_model.py)."""
        from minikeras.saving import pickled_model

        return pickled_model.model_from_keras_bytes, (pickled_model.model_to_keras_bytes(self),)

    def __init__(self, *args, **kwargs):
        trainable = kwargs.pop("trainable", True)
        name = kwargs.pop("name", None)
        dtype = kwargs.pop("dtype", None)
        super().__init__(trainable=trainable, name=name, dtype=dtype, **kwargs)
        self._init_training()

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A model from ``get_config()``'s output, as ``keras.Model.from_config``.

        A functional config (layers, inputs and outputs) is rebuilt as a
        graph, as an instance of ``cls`` when that is a Model subclass;
        other configs are passed to ``cls(**config)``. Classes not built
        into minikeras are looked up in ``custom_objects``.
        """
        from minikeras.models.functional import Functional

        if isinstance(config, dict) and "layers" in config and "input_layers" in config:
            target = Functional if cls is Model else cls
            return Functional.from_config.__func__(target, config, custom_objects=custom_objects)
        return cls(**config)

    @property
    def layers(self):
        """The model's layers, in order (sub-layers held as attributes for a
        subclassed model)."""
        return self._sublayers()

    def get_layer(self, name=None, index=None):
        """A layer by name or by index in ``layers``."""
        layers = self.layers
        if index is not None:
            if not -len(layers) <= index < len(layers):
                raise ValueError(f"get_layer: index {index} out of range, the model has {len(layers)} layers.")
            return layers[index]
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name!r}. Existing layers are: {[layer.name for layer in layers]}.")

    @property
    def weights(self):
        seen, result = set(), []
        for weight in list(self._all_own_weights()) + [w for layer in self.layers for w in layer.weights]:
            if id(weight) not in seen:
                seen.add(id(weight))
                result.append(weight)
        return result

    def quantize(self, mode=None, config=None, filters=None, **kwargs):
        """Quantize the model's weights (Keras 3's ``Model.quantize``): every
        layer that can be (Dense, EinsumDense, Embedding) gets int8 / int4
        kernels with float scales, or float8 training; others warn.

        Args:
            mode: "int8", "int4" or "float8" (optional with ``config``).
            config: a ``minikeras.quantizers.QuantizationConfig``.
            filters: a regex (or list of them) searched in layer names, or a
                callable of the layer: only the layers that pass are quantized.
            **kwargs: ``type_check=False`` quantizes subclasses of those layers too.

        Raises:
            ValueError: an unbuilt model, an unknown mode, unknown keyword
                arguments, a layer already quantized.

        Example:
            >>> model.quantize("int8")  # doctest: +SKIP
        """
        from minikeras.models.quantize import quantize_model

        type_check = kwargs.pop("type_check", True)
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments passed to {type(self).__name__}: {kwargs}")
        quantize_model(self, mode, config, filters=filters, type_check=type_check)

    def reset_states(self):
        """Zero the kept states of every stateful layer, nested models
        included (tf.keras's ``Model.reset_states``; Keras 3 layers keep
        ``reset_state()``)."""
        for layer in self.layers:
            reset = getattr(layer, "reset_states", None)
            if reset is not None:
                reset()

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False, show_trainable=False,
                layer_range=None):
        """Print layers, output shapes and parameter counts in Keras 3's
        layout (``positions``, ``expand_nested`` and ``layer_range`` are
        accepted and ignored)."""
        from minikeras.models.summary import print_summary

        print_summary(self, line_length=line_length, print_fn=print_fn, show_trainable=show_trainable)

    def save(self, filepath, overwrite=True, include_optimizer=True, save_format=None):
        """Save architecture, weights, compile arguments and optimizer state,
        atomically: ``.keras`` gives Keras 3's zip, ``.h5`` tf.keras's HDF5
        (see ``minikeras.saving.save_model``)."""
        from minikeras.saving import save_model

        save_model(self, filepath, overwrite=overwrite, include_optimizer=include_optimizer, save_format=save_format)

    def save_weights(self, filepath, overwrite=True):
        """Save every layer's weights to an HDF5 file, atomically (see
        ``minikeras.saving.save_weights``)."""
        from minikeras.saving import save_weights

        save_weights(self, filepath, overwrite=overwrite)

    def to_json(self, **kwargs):
        """The architecture (no weights) as Keras 3's JSON; ``kwargs`` go to
        ``json.dumps``. ``models.model_from_json`` (or Keras's) reads it back."""
        from minikeras.saving import serialization_lib

        return serialization_lib.model_to_json(self, **kwargs)

    def load_weights(self, filepath, skip_mismatch=False, by_name=False):
        """Load weights from an HDF5 file written by ``save_weights`` or
        ``save`` (see ``minikeras.saving.load_weights``)."""
        from minikeras.saving import load_weights

        load_weights(self, filepath, skip_mismatch=skip_mismatch, by_name=by_name)


_FUNCTIONAL_SUBCLASSES = {}


def _functional_arguments(args, kwargs):
    """True when a Model subclass is called as ``M(inputs, outputs)``."""
    from minikeras.layers.input import KerasTensor

    inputs = args[0] if args else kwargs.get("inputs")
    outputs = args[1] if len(args) > 1 else kwargs.get("outputs")
    if inputs is None or outputs is None:
        return False
    leaves = flatten(inputs) + flatten(outputs)
    return bool(leaves) and all(isinstance(leaf, KerasTensor) for leaf in leaves)


def _functional_subclass(cls):
    """``cls`` with Functional behind it, so that a subclass of Model called
    as ``M(inputs, outputs)`` builds a functional model while keeping its
    own methods (train_step, ...), as Keras 3 does."""
    from minikeras.models.functional import Functional

    if issubclass(cls, Functional):
        return cls
    if cls not in _FUNCTIONAL_SUBCLASSES:
        _FUNCTIONAL_SUBCLASSES[cls] = type(cls.__name__, (cls, Functional), {"__module__": cls.__module__,
                                                                           "__qualname__": cls.__qualname__})
    return _FUNCTIONAL_SUBCLASSES[cls]


def _eager_array(value):
    """Another library's eager array as an array; anything else unchanged."""
    if isinstance(value, KerasTensor):
        return value
    try:
        return array_like.foreign_to_array(value)
    except NotImplementedError:  # a symbolic tf.Tensor (tf.function, Dataset.map): no value to convert
        return value
