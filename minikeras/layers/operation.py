"""``keras.Operation``: the base of Keras's ops and layers.

In Keras every Layer is an Operation (a graph node with ``call``); a user's
Operation subclass implements ``call`` and is used like a weightless layer.
Here ``Operation`` is a Layer subclass marked as an operation (a node of a
functional graph that ``model.layers`` leaves out, as Keras's ops), and
``isinstance(any_layer, Operation)`` holds, as in Keras. A
``compute_output_spec`` a subclass defines is not needed: symbolic calls
find the output by running ``call`` on a probe, as for every layer.
"""
from minikeras.layers.base import Layer

__all__ = []  # exported at the top level (minikeras.Operation), as Keras does


class _OperationType(type(Layer)):
    """Every Layer instance (and subclass) counts as an Operation."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, Layer) if cls is Operation else super().__instancecheck__(instance)

    def __subclasscheck__(cls, subclass):
        return issubclass(subclass, Layer) if cls is Operation else super().__subclasscheck__(subclass)


class Operation(Layer, metaclass=_OperationType):
    """A weightless computation: subclass it and implement ``call``.

    Args:
        name: the operation's name (no ``/``); default: from the class name.

    Example:
        >>> class Scale(minikeras.Operation):
        ...     def call(self, x):
        ...         return minikeras.ops.multiply(x, 2.0)
        >>> Scale()(numpy.ones(3)).numpy()
        array([2., 2., 2.], dtype=float32)
    """

    _is_operation = True

    def __init__(self, name=None, **kwargs):
        if name is not None and (not isinstance(name, str) or "/" in name):
            raise ValueError(f"Argument `name` must be a string and cannot contain character `/`. Received: "
                             f"name={name} (of type {type(name)})")
        super().__init__(name=name, **kwargs)
