"""``keras.Function``: a callable graph from symbolic inputs to outputs."""
from minikeras.models.functional import Functional
from minikeras._support import nest


class Function:
    """The computation from ``inputs`` to ``outputs`` (symbolic tensors from
    ``Input`` and the layers and ops applied to them), as a callable.

    Unlike a Model it has no training API; calling it runs the recorded
    operations on real inputs (or records them again on symbolic ones).

    Args:
        inputs: a KerasTensor, or a list/tuple/dict of them.
        outputs: KerasTensor(s) computed from ``inputs``.
        name: the function's name.

    Example:
        >>> x = minikeras.Input((3,))
        >>> double = minikeras.Function(x, x * 2.0)
        >>> double(numpy.ones((1, 3))).numpy()
        array([[2., 2., 2.]], dtype=float32)
    """

    def __init__(self, inputs, outputs, name=None):
        if not nest.flatten(inputs):
            raise ValueError(f"`inputs` argument cannot be empty. Received: inputs={inputs}")
        if not nest.flatten(outputs):
            raise ValueError(f"`outputs` argument cannot be empty. Received: outputs={outputs}")
        self._graph = Functional(inputs, outputs, name=name)
        self.name = self._graph.name

    @property
    def inputs(self):
        """The flat list of input KerasTensors."""
        return list(self._graph.inputs)

    @property
    def outputs(self):
        """The flat list of output KerasTensors."""
        return list(self._graph.outputs)

    @property
    def operations(self):
        """The graph's operations (Input layers, layers and ops), inputs first."""
        return list(self._graph._layers)

    def __call__(self, inputs):
        return self._graph(inputs)

    def call(self, inputs):
        return self._graph(inputs)

    def compute_output_shape(self, input_shape):
        """The outputs' shapes (the graph's, batch axis None)."""
        return nest.map_structure(lambda tensor: tensor.shape, self._graph._outputs_structure)

    def __repr__(self):
        return f"<Function name={self.name}, inputs={len(self.inputs)}, outputs={len(self.outputs)}>"
