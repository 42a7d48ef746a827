"""Model: a Layer that can be trained (compile/fit/evaluate/predict) and saved.

Three ways to make one, as in Keras:
- ``Sequential([...])`` (sequential.py),
- ``Model(inputs, outputs)`` on the functional graph (functional.py),
- subclassing ``Model`` with layers as attributes and a ``call()``.
"""
from minikeras.layers.base import Layer
from minikeras.models.training import Trainer


class Model(Trainer, Layer):
    """A trainable stack of layers (see module docstring).

    ``Model(inputs, outputs, name=None)`` builds a functional model;
    ``Model()`` in a subclass makes a subclassed model.
    """

    def __new__(cls, *args, **kwargs):
        if cls is Model and (args or "inputs" in kwargs or "outputs" in kwargs):
            from minikeras.models.functional import Functional

            return super().__new__(Functional)
        return super().__new__(cls)

    def __init__(self, *args, **kwargs):
        trainable = kwargs.pop("trainable", True)
        name = kwargs.pop("name", None)
        dtype = kwargs.pop("dtype", None)
        super().__init__(trainable=trainable, name=name, dtype=dtype, **kwargs)
        self._init_training()

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

    def summary(self, line_length=None, print_fn=None):
        """Print layers, output shapes and parameter counts, like Keras."""
        from minikeras.models.summary import print_summary

        print_summary(self, line_length=line_length, print_fn=print_fn)

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

    def load_weights(self, filepath, skip_mismatch=False, by_name=False):
        """Load weights from an HDF5 file written by ``save_weights`` or
        ``save`` (see ``minikeras.saving.load_weights``)."""
        from minikeras.saving import load_weights

        load_weights(self, filepath, skip_mismatch=skip_mismatch, by_name=by_name)
