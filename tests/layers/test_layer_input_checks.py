"""Layers at their entry: non-numeric and degenerate inputs give errors
naming the layer (issue 12)."""
import numpy
import pytest

import minikeras as mk
from minikeras import layers


@pytest.mark.parametrize("bad, error, pattern", [
    (None, TypeError, "Dense 'dense_in': expected input tensors, received None"),
    (numpy.array([[1.0, None]], dtype=object), TypeError, "Dense 'dense_in': expected numeric data .* object"),
    (numpy.array([["a", "b"]]), TypeError, "Dense 'dense_in': expected numeric data .* string"),
])
def test_non_numeric_inputs_are_refused(bad, error, pattern):
    with pytest.raises(error, match=pattern):
        layers.Dense(2, name="dense_in")(bad)


def test_empty_feature_axes_are_refused_not_crashing():
    with pytest.raises(ValueError, match="Layer 'd0': the last axis of the input must be known and non-empty"):
        layers.Dense(2, name="d0")(numpy.zeros((2, 3, 0), "float32"))
    with pytest.raises(ValueError, match="Layer 'ln0': the normalised axes .* non-zero sizes"):
        layers.LayerNormalization(name="ln0")(numpy.zeros((2, 0), "float32"))
    with pytest.raises(ValueError, match="Layer 'bn0': the normalised axis -1 must be a known, non-empty"):
        layers.BatchNormalization(name="bn0")(numpy.zeros((2, 0), "float32"))
    with pytest.raises(ValueError, match=r"Layer 'r0' \(Reshape\) expects inputs with a batch axis"):
        layers.Reshape((-1,), name="r0")(numpy.float32(1.0))


def test_noise_layers_refuse_integer_inputs_in_training():
    for layer in (layers.GaussianNoise(0.1, name="gn"), layers.GaussianDropout(0.1, name="gd")):
        with pytest.raises(TypeError, match=f"Layer '{layer.name}' .* expects floating-point inputs"):
            layer(numpy.ones(3, "int32"), training=True)


def test_errors_of_the_ops_inside_name_the_layer():
    class Averages(layers.Layer):
        def call(self, inputs):
            return mk.ops.mean(inputs, axis=3)

    with pytest.raises(ValueError, match="^Averages 'avg': mean: axis 3 is out of range"):
        Averages(name="avg")(numpy.ones((2, 2), "float32"))


def test_a_string_dtype_for_numbers_is_a_clear_type_error():
    # "string" is Keras's dtype for text: fine for an Input feeding StringLookup, meaningless for weights.
    with pytest.raises(TypeError, match=r"Dense '\w+': dtype 'string' \(text\) has no array dtype: tensors, weights "
                                        r"and ops hold numbers"):
        mk.layers.Dense(2, dtype="string")(numpy.zeros((2, 3), "float32"))
    with pytest.raises(TypeError, match=r"tensor: expected a numeric dtype \(bool, int, float or complex\), "
                                        r"received 'string'"):
        mk.tensor([1.0], dtype="string")
    assert mk.layers.Input((1,), dtype="string").dtype == "string"
