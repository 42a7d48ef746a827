"""keras.layers.Lambda: a function as a layer (saved only as its name unless
unsafe loading is enabled).
"""
import inspect

from minikeras._support import object_registration
from minikeras._support.safe_mode import refuse_lambda, resolve_safe_mode
from minikeras.layers.base import Layer

__all__ = ["Lambda"]


# ----------------------------------------------------------------- Lambda
class Lambda(Layer):
    """Wrap a function of Tensors as a layer: ``Lambda(lambda x: x * 2)``.

    The function gets ``training`` too when its signature has that argument.

    Serialisation: Python code is never stored, so ``get_config`` records
    only the function's name and module. Loading a Lambda is refused in
    safe mode (the default, as in Keras 3: a model file must not choose code
    to run); with ``safe_mode=False`` (or after
    ``minikeras.config.enable_unsafe_deserialization()``) the function is
    taken from ``custom_objects`` (``{name: fn}``; a lambda is named
    ``"<lambda>"``) or from the functions registered with
    ``minikeras.saving.register_keras_serializable``. It is never imported
    or looked up in a module by the name the config gives.

    Args:
        function: a callable taking the input (Tensor or list of Tensors).
        output_shape: optional, recorded in the config (shapes are inferred
            by running the function).
        arguments: optional dict of extra keyword arguments for ``function``.
        **kwargs: base Layer arguments.
    """

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise TypeError(f"Lambda expects a callable, received {function!r}.")
        self.function = function
        self.output_shape = output_shape
        self.mask = mask
        self.arguments = dict(arguments or {})
        try:
            parameters = inspect.signature(function).parameters
        except (TypeError, ValueError):
            parameters = {}
        self._function_has_training = "training" in parameters

    def call(self, inputs, training=None):
        kwargs = dict(self.arguments)
        if self._function_has_training:
            kwargs["training"] = training
        return self.function(inputs, **kwargs)

    def get_config(self):
        name = getattr(self.function, "__name__", type(self.function).__name__)
        return {
            **super().get_config(),
            "function": name,
            "module": getattr(self.function, "__module__", None),
            "function_type": "lambda" if name == "<lambda>" else "function",
            "output_shape": list(self.output_shape) if isinstance(self.output_shape, tuple) else self.output_shape,
            "arguments": self.arguments,
        }

    @classmethod
    def from_config(cls, config, custom_objects=None, safe_mode=None):
        """Rebuild the layer (see the class docstring).

        Args:
            config: ``get_config()``'s output.
            custom_objects: ``{name: function}`` holding the Lambda's function.
            safe_mode: refuse the Lambda (default: True unless unsafe
                deserialisation was enabled).

        Raises:
            UnsafeDeserializationError: in safe mode (a ValueError).
            ValueError: the function is neither in ``custom_objects`` nor
                registered.
        """
        config = dict(config)
        name = config.pop("function", None)
        module_name = config.pop("module", None)
        config.pop("function_type", None)
        if callable(name):  # a live config (not from a file): the function itself
            return cls(name, **config)
        if resolve_safe_mode(safe_mode):
            refuse_lambda(config.get("name"), name, module_name)
        try:
            function = object_registration.resolve_name(name, {}, custom_objects, kind="Lambda function")
        except ValueError:
            raise ValueError(
                f"Cannot rebuild Lambda layer '{config.get('name')}': its function {name!r} (module "
                f"{module_name!r}) is not in custom_objects nor registered. Pass it as "
                f"custom_objects={{{name!r}: function}} (a lambda needs a name there: the one in the config)."
            ) from None
        if not callable(function):
            raise ValueError(f"Cannot rebuild Lambda layer '{config.get('name')}': custom_objects[{name!r}] is "
                             f"not callable ({function!r}).")
        return cls(function, **config)
