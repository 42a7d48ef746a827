"""Losses and metrics at their entry: clean errors naming them (issue 12)."""
import numpy
import pytest

import minikeras as mk


def test_sparse_categorical_crossentropy_on_an_all_zero_row_is_finite_as_in_keras():
    y_pred = numpy.array([[0.0, 0.0, 0.0], [0.2, 0.3, 0.5]], dtype="float32")
    losses = mk.losses.sparse_categorical_crossentropy(numpy.array([1, 0]), y_pred).numpy()
    # tf.keras 3.15: [1.0986123, 1.609438] (clipped probabilities, renormalised)
    numpy.testing.assert_allclose(losses, [numpy.log(3.0), -numpy.log(0.2)], rtol=1e-6)
    value = mk.losses.SparseCategoricalCrossentropy()(numpy.array([1, 0]), y_pred).item()
    assert numpy.isfinite(value)


@pytest.mark.parametrize("loss", [mk.losses.MeanSquaredError(), mk.losses.Huber(), mk.losses.BinaryCrossentropy()])
def test_losses_refuse_non_numeric_inputs_naming_themselves(loss):
    name = type(loss).__name__
    for bad in (None, numpy.array([[1.0, None]], dtype=object), numpy.array([["a", "b"]])):
        with pytest.raises(TypeError, match=f"^{name}"):
            loss(bad, numpy.ones((1, 2), "float32"))
        with pytest.raises(TypeError, match=f"^{name}"):
            loss(numpy.ones((1, 2), "float32"), bad)


def test_inner_op_errors_name_the_loss():
    with pytest.raises(ValueError, match=r"^MeanSquaredError 'mean_squared_error': mean: cannot average"):
        mk.losses.MeanSquaredError()(numpy.zeros((2, 0), "float32"), numpy.zeros((2, 0), "float32"))


def test_metrics_check_their_inputs_and_k():
    with pytest.raises(ValueError, match="TopKCategoricalAccuracy: k must be positive, received 0"):
        mk.metrics.TopKCategoricalAccuracy(k=0)
    with pytest.raises(TypeError, match="SparseTopKCategoricalAccuracy: k must be an int"):
        mk.metrics.SparseTopKCategoricalAccuracy(k=2.0)
    with pytest.raises(ValueError, match="top_k_categorical_accuracy: k must be positive"):
        mk.metrics.top_k_categorical_accuracy(numpy.eye(3), numpy.eye(3), k=0)
    metric = mk.metrics.Mean()
    with pytest.raises(TypeError, match="^Mean: expected a Tensor, an array or a number, received None"):
        metric.update_state(None)
    with pytest.raises(TypeError, match="^Accuracy"):
        mk.metrics.Accuracy().update_state(numpy.array(["a"]), numpy.array(["a"]))


def test_optimizers_refuse_bad_gradients():
    variable = mk.Tensor(numpy.ones(2, "float32"), requires_grad=True)
    for bad, pattern in ((numpy.array([None, 1.0], dtype=object), "SGD: expected numeric data"),
                         (numpy.array([True, False]), "SGD does not accept bool")):
        with pytest.raises(TypeError, match=pattern):
            mk.optimizers.SGD(0.1).apply_gradients([(bad, variable)])
    numpy.testing.assert_array_equal(variable.numpy(), [1.0, 1.0])
