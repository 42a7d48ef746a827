"""Layer.add_weight (minikeras/layers/base.py, weight_arguments.py): Keras 3's
signature with every argument optional, and tf.keras's name-first order."""
import numpy
import pytest

import minikeras as mk
from minikeras.variables import Variable


def _ids(weights):
    """Identities: Tensor == is element-wise, so lists of weights are compared by identity."""
    return [id(w) for w in weights]


class Probe(mk.layers.Layer):
    def call(self, inputs):
        return inputs


def test_keras3_defaults():
    layer = Probe(name="probe")
    w = layer.add_weight(shape=(40, 30))
    scalar = layer.add_weight()
    counter = layer.add_weight(shape=(2,), dtype="int64", name="count")
    assert isinstance(w, Variable) and w.path == "probe/variable" and scalar.path == "probe/variable_1"
    limit = numpy.sqrt(6.0 / 70)
    assert numpy.abs(w.numpy()).max() <= limit and w.numpy().std() > 0.4 * limit  # glorot_uniform
    assert scalar.shape == () and counter.dtype == numpy.int64 and numpy.all(counter.numpy() == 0)
    assert not counter.trainable and _ids(layer.non_trainable_weights) == [id(counter)]
    assert _ids(layer.trainable_weights) == _ids([w, scalar])


def test_tf_keras_order_and_keras3_positional_order():
    layer = Probe(name="old")
    kernel = layer.add_weight("kernel", (2, 3), initializer="ones")
    bias = layer.add_weight((3,), "zeros", "float64", False, name="bias")
    assert kernel.path == "old/kernel" and numpy.all(kernel.numpy() == 1)
    assert bias.dtype == numpy.float64 and not bias.trainable


def test_frozen_layer_makes_weights_without_gradients():
    layer = Probe(trainable=False)
    w = layer.add_weight(shape=(2,))
    assert w.trainable and not w.requires_grad and _ids(layer.trainable_weights) == []


@pytest.mark.parametrize("kwargs, error, message", [
    ({"shape": (2, -1)}, ValueError, "non-negative ints, received \\(2, -1\\)"),
    ({"shape": "big"}, ValueError, "tuple of non-negative ints"),
    ({"shape": (2,), "colour": "red"}, TypeError, "unexpected keyword argument 'colour'"),
])
def test_bad_arguments_are_reported(kwargs, error, message):
    with pytest.raises(error, match=message):
        Probe(name="bad").add_weight(**kwargs)


def test_repeated_argument_is_reported():
    with pytest.raises(TypeError, match="multiple values for argument 'shape'"):
        Probe().add_weight((2,), shape=(3,))


def test_variables_set_as_attributes_are_tracked_once():
    class Direct(mk.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.scale = Variable(numpy.ones(2, "float32"), name="scale")
            self.steps = Variable(numpy.zeros((), "int32"), trainable=False, name="steps")
            self.again = self.scale  # the same Variable twice is one weight

        def call(self, inputs):
            return inputs * self.scale

    layer = Direct()
    assert _ids(layer.trainable_weights) == [id(layer.scale)] and _ids(layer.non_trainable_weights) == [id(layer.steps)]
    layer(numpy.ones((1, 2), "float32")).sum().backward()
    assert layer.scale.grad is not None
