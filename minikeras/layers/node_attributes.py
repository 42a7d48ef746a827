"""``layer.input`` and ``layer.output``: the functional graph seen from a layer.

Keras 3 keeps them on every operation, read from the layer's *first* call on
symbolic tensors (its first Node): that is what ``keras.io``'s guides use to
build feature extractors,

    >>> extractor = Model(inputs=base.input, outputs=base.get_layer("block_1_expand_relu").output)

Eager calls record no node, so a layer only ever called on data has neither,
and says so with Keras's AttributeError. Layers have no ``input_shape`` /
``output_shape`` in Keras 3 (functional and Sequential models do).
"""
from minikeras._support.nest import flatten as _flatten


class NodeAttributes:
    """The ``input`` / ``output`` properties of :class:`~minikeras.layers.Layer`
    (Keras's ``Operation.input`` / ``Operation.output``)."""

    __slots__ = ()

    @property
    def input(self):
        """The symbolic input(s) of the layer's first call: one KerasTensor,
        or a list when that call read several (an InputLayer read none: ``[]``).

        Raises:
            AttributeError: the layer was never called on symbolic tensors.
        """
        return self._first_node_tensors("input", lambda node: node.parent_tensors)

    @property
    def output(self):
        """The symbolic output(s) of the layer's first call: one KerasTensor,
        or a list for a layer returning several.

        Raises:
            AttributeError: the layer was never called on symbolic tensors.
        """
        return self._first_node_tensors("output", lambda node: _flatten(node.outputs))

    def _first_node_tensors(self, what, tensors_of):
        nodes = self.__dict__.get("_inbound_nodes")
        if not nodes:
            raise AttributeError(f"The layer {self.name} has never been called and thus has no defined {what}.")
        tensors = list(tensors_of(nodes[0]))
        return tensors[0] if len(tensors) == 1 else tensors
