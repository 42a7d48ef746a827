"""Sequential: a plain stack of layers, each feeding the next."""
from minikeras.autograd import Tensor
from minikeras.layers.base import Layer
from minikeras.layers.build_config import build_from_saved, overrides
from minikeras.layers.core.input_layer import Input, InputLayer
from minikeras.layers.input import KerasTensor
from minikeras.layers.layer_paths import open_name_scope
from minikeras.models.functional import standardize_input_rank
from minikeras.models.model import Model


class Sequential(Model):
    """A linear stack of layers.

    Args:
        layers: a list of layers (or add them with ``add``).
        name: the model's name.

    The model is built when its input shape is known: from an ``Input`` or
    ``input_shape=`` on the first layer, from ``build(input_shape)``, or on
    the first call.

    Example:
        >>> model = Sequential([layers.Dense(64, activation="relu", input_shape=(784,)),
        ...                     layers.Dense(10, activation="softmax")])
    """

    _casts_inputs = False  # each layer casts its own inputs to its compute dtype (as Keras's Functional)

    def __init__(self, layers=None, name=None, trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        self._stack = []
        self._input_tensor = None
        self._output_tensor = None
        for layer in layers or []:
            self.add(layer)

    def add(self, layer):
        """Append a layer (or an ``Input``, which fixes the input shape)."""
        if isinstance(layer, KerasTensor):
            if self._stack or self._input_tensor is not None:
                raise ValueError("An Input can only be the first entry of a Sequential model.")
            self._input_tensor = layer
            self._output_tensor = layer
            return
        if isinstance(layer, InputLayer):
            self.add(layer.output)
            return
        if not isinstance(layer, Layer):
            raise TypeError(f"Sequential.add expects a Layer, received {type(layer).__name__}: {layer!r}.")
        if any(layer is existing for existing in self._stack):
            raise ValueError(f"Layer '{layer.name}' is already in model '{self.name}'.")
        names = {existing.name for existing in self._stack}
        if layer.name in names:
            raise ValueError(f"All layers in a Sequential model need unique names; '{layer.name}' is repeated.")
        self._stack.append(layer)
        if self._input_tensor is None and not self._stack[:-1] and layer._batch_input_shape is not None:
            self._input_tensor = Input(batch_shape=layer._batch_input_shape)
            self._output_tensor = self._input_tensor
        if self._output_tensor is not None:
            with open_name_scope(self):  # the layer's weights: "sequential/dense/kernel" (layers/layer_paths.py)
                self._output_tensor = layer(self._output_tensor)
            self.built = True

    def pop(self):
        """Remove the last layer."""
        if not self._stack:
            raise ValueError("pop() on an empty Sequential model.")
        layer = self._stack.pop()
        if self._input_tensor is not None:
            self._rebuild(self._input_tensor.shape)
        return layer

    def _rebuild(self, batch_shape):
        dtype = "float32" if self._input_tensor is None else self._input_tensor.dtype  # "string" stays text
        if self._input_tensor is None or tuple(self._input_tensor.shape) != tuple(batch_shape):
            # The same input otherwise (as Keras keeps its InputLayer): each layer's
            # first output (``layer.output``) stays reachable from ``model.inputs``.
            self._input_tensor = Input(batch_shape=tuple(batch_shape), dtype=dtype)
        tensor = self._input_tensor
        with open_name_scope(self):  # the layers' weights: "sequential/dense/kernel" (layers/layer_paths.py)
            for layer in self._stack:
                tensor = layer(tensor)
        self._output_tensor = tensor
        self.built = True

    def build(self, input_shape=None):
        """Build for ``input_shape`` (batch axis included, may be None)."""
        if input_shape is None:
            raise ValueError("Sequential.build needs an input_shape, e.g. (None, 784).")
        self._rebuild((None,) + tuple(input_shape)[1:])

    def _build_from(self, inputs):
        if self._input_tensor is None:
            self._rebuild((None,) + tuple(inputs.shape)[1:])

    @property
    def layers(self):
        return list(self._stack)

    def _sublayers(self):
        return list(self._stack)

    @property
    def input_shape(self):
        return None if self._input_tensor is None else self._input_tensor.shape

    @property
    def output_shape(self):
        return None if self._output_tensor is None else self._output_tensor.shape

    @property
    def inputs(self):
        return None if self._input_tensor is None else [self._input_tensor]

    @property
    def outputs(self):
        return None if self._output_tensor is None else [self._output_tensor]

    def call(self, inputs, training=None):
        if self._input_tensor is not None:
            expected = self._input_tensor.shape
            # A Tensor of a shape that fitted the input before goes in as it is.
            if type(inputs) is not Tensor or self.__dict__.get("_fitting_shape") != (expected, inputs.data.shape):
                inputs = self._fit_input(inputs, expected)
        outputs = inputs
        for layer in self._stack:
            outputs = layer(outputs, training=training)
        return outputs

    def _fit_input(self, inputs, expected):
        """``inputs`` fitted to the model's input of shape ``expected`` (functional.py's rule)."""
        if not hasattr(inputs, "shape"):
            raise TypeError(f"Sequential model '{self.name}' takes one array or Tensor as input, received "
                            f"{type(inputs).__name__}. Convert nested lists with numpy.asarray first "
                            "(fit, evaluate and predict take them as they are).")
        fitted = standardize_input_rank(inputs, expected, f"Input 0 of Sequential model '{self.name}' is "
                                        "incompatible: expected shape {expected}, received {received}.")
        if fitted is inputs and type(inputs) is Tensor:
            self.__dict__["_fitting_shape"] = (expected, inputs.data.shape)
        return fitted

    def get_config(self):
        layers = []
        for layer in self._stack:
            spec = {"class_name": type(layer).__name__, "config": layer.get_config()}
            if overrides(layer, "get_build_config"):  # a user's own, saved as Keras saves it
                spec["build_config"] = layer.get_build_config()
            layers.append(spec)
        config = {"name": self.name, "trainable": self.trainable, "layers": layers}
        if self._input_tensor is not None:
            config["batch_input_shape"] = list(self._input_tensor.shape)
            if self._input_tensor.dtype != "float32":
                config["input_dtype"] = self._input_tensor.dtype  # e.g. "string" for a text model
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from minikeras.layers.base import get_layer_class, layer_from_config

        model = cls(name=config.get("name"), trainable=config.get("trainable", True))
        if config.get("batch_input_shape") is not None:
            model.add(Input(batch_shape=tuple(config["batch_input_shape"]),
                            dtype=config.get("input_dtype", "float32")))
        for spec in config["layers"]:
            layer_class = get_layer_class(spec["class_name"], custom_objects)
            layer = layer_from_config(layer_class, spec["config"], custom_objects)
            build_from_saved(layer, spec.get("build_config"))  # as Keras deserializes each layer
            model.add(layer)
        return model
