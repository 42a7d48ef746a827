"""A layer's sublayers (``Layer._sublayers``, behind ``trainable_weights``,
``losses`` and ``weights``) as its attributes change after they were first
listed: the scan of the attributes is kept between calls (a training step
lists them several times per layer), so each way of changing them must show
at once."""
import numpy

import minikeras as mk
from minikeras import layers


class Block(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.first = layers.Dense(3)
        self.stack = []

    def call(self, inputs):
        outputs = self.first(inputs)
        for layer in self.stack:
            outputs = layer(outputs)
        return outputs


def test_a_sublayer_set_after_build_is_tracked():
    block = Block()
    block(numpy.ones((2, 4), dtype="float32"))
    assert block.trainable_weights == [block.first.kernel, block.first.bias]
    block.second = layers.Dense(2)
    block.second.build((None, 3))
    assert len(block.trainable_weights) == 4 and block._sublayers() == [block.first, block.second]


def test_a_sublayer_replaced_or_removed_is_seen():
    block = Block()
    block(numpy.ones((2, 4), dtype="float32"))
    assert block._sublayers() == [block.first]
    replacement = layers.Dense(5)
    block.first = replacement
    assert block._sublayers() == [replacement]
    block.first = None
    assert block._sublayers() == []
    block.first = replacement  # back under the same name: the attribute keeps its place
    assert block._sublayers() == [replacement]
    del block.first
    block.first = replacement  # deleted and set again: now after ``stack``, as the attributes are
    block.stack.append(layers.Dense(1))
    assert block._sublayers() == [block.stack[0], replacement]


def test_a_list_appended_to_in_place_is_seen():
    block = Block()
    block(numpy.ones((2, 4), dtype="float32"))
    assert len(block.trainable_weights) == 2
    block.stack.append(layers.Dense(2))
    out = block(numpy.ones((2, 4), dtype="float32"))
    assert out.shape == (2, 2) and len(block.trainable_weights) == 4
    block.stack[0] = layers.Dense(6)  # replaced in place, same length
    assert block._sublayers()[1] is block.stack[0]
    block.stack.clear()
    assert block._sublayers() == [block.first]


def test_a_list_attribute_that_held_no_layers_then_gets_one():
    block = Block()
    block.notes = ["a", "b"]
    assert block._sublayers() == [block.first]
    block.notes[1] = layers.Dense(2)
    assert block._sublayers() == [block.first, block.notes[1]]
    block.pair = (layers.Dense(1), "x")  # a new tuple attribute
    assert block._sublayers()[-1] is block.pair[0]


def test_an_attribute_added_past_setattr_is_seen():
    block = Block()
    assert block._sublayers() == [block.first]
    extra = layers.Dense(2)
    object.__setattr__(block, "extra", extra)
    assert block._sublayers() == [block.first, extra]


def test_toggling_trainable_after_the_weights_were_listed():
    block = Block()
    block.stack.append(layers.Dense(2))
    block(numpy.ones((2, 4), dtype="float32"))
    assert len(block.trainable_weights) == 4
    block.stack[0].trainable = False
    assert len(block.trainable_weights) == 2 and len(block.non_trainable_weights) == 2
    block.trainable = False
    assert block.trainable_weights == [] and len(block.non_trainable_weights) == 4
    block.trainable = True
    assert len(block.trainable_weights) == 4


def test_nested_models_see_a_layer_added_inside():
    inner = Block()
    model = mk.Sequential([layers.Input((4,)), inner, layers.Dense(1)])
    x = numpy.ones((2, 4), dtype="float32")
    model(x)
    assert len(model.trainable_weights) == 4
    inner.stack.append(layers.Dense(3))
    model(x)  # builds the new layer
    assert len(model.trainable_weights) == 6 and len(model.weights) == 6


def test_losses_of_a_sublayer_added_later_are_collected():
    block = Block()
    block(numpy.ones((2, 4), dtype="float32"))
    assert block.losses == []
    block.stack.append(layers.Dense(2, kernel_regularizer="l2"))
    block(numpy.ones((2, 4), dtype="float32"))
    assert len(block.losses) == 1


def test_a_layer_held_twice_lists_its_weights_once_in_order():
    shared = layers.Dense(3)  # called twice in a row: 3 in, 3 out
    block = Block()
    block.stack.extend([layers.Dense(3), shared, shared])
    block.again = shared
    block(numpy.ones((2, 4), dtype="float32"))
    expected = [block.first.kernel, block.first.bias, block.stack[0].kernel, block.stack[0].bias,
                shared.kernel, shared.bias]
    assert [id(w) for w in block.trainable_weights] == [id(w) for w in expected]
    assert [id(w) for w in block.weights] == [id(w) for w in expected]
    block.trainable = False
    assert [id(w) for w in block.non_trainable_weights] == [id(w) for w in expected]
