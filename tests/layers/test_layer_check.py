"""The shared layer check itself: it passes a sound layer and catches the
faults it is there to catch."""
import pytest

from minikeras import layers
from minikeras.autograd import Function
from tests.layers.layer_check import run_layer_test


class _Scale(layers.Layer):
    """``inputs * factor``, with switches to break what the check covers."""

    def __init__(self, factor=2.0, forget_factor=False, wrong_shape=False, wrong_gradient=False, **kwargs):
        super().__init__(**kwargs)
        self.factor, self.forget_factor = factor, forget_factor
        self.wrong_shape, self.wrong_gradient = wrong_shape, wrong_gradient

    def call(self, inputs):
        if self.wrong_gradient:
            return _DoubleWithoutGradient().apply(inputs) * (self.factor / 2.0)
        return inputs * self.factor

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + ((1,) if self.wrong_shape else ())

    def get_config(self):
        config = {**super().get_config(), "wrong_shape": self.wrong_shape, "wrong_gradient": self.wrong_gradient}
        return config if self.forget_factor else {**config, "factor": self.factor}


class _DoubleWithoutGradient(Function):
    def forward(self, x):
        return x * 2

    def backward(self, grad):
        return grad  # wrong: should be 2 * grad


def test_a_sound_layer_passes(rng):
    x = rng.normal(size=(2, 3)).astype("float32")
    run_layer_test(lambda **kw: _Scale(3.0, **kw), x, expected_output=x * 3.0, expected_num_trainable_weights=0)


@pytest.mark.parametrize("fault", [{"forget_factor": True}, {"wrong_shape": True}, {"wrong_gradient": True}])
def test_each_fault_is_caught(rng, fault):
    x = rng.normal(size=(2, 3)).astype("float32")
    with pytest.raises(AssertionError):
        run_layer_test(lambda **kw: _Scale(3.0, **fault, **kw), x)


def test_weight_counts_are_checked(rng):
    with pytest.raises(AssertionError, match="1 trainable weights, expected 2"):
        run_layer_test(lambda **kw: layers.Dense(2, use_bias=False, **kw), rng.normal(size=(2, 3)),
                       expected_num_trainable_weights=2)


def test_input_shape_alone_is_enough():
    layer = run_layer_test(layers.Flatten, input_shape=(2, 3, 4), expected_output_shape=(2, 12))
    assert isinstance(layer, layers.Flatten)
