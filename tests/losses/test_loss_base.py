"""Loss base behaviour: get/serialize, configs, reductions and sample-weight
shapes, custom losses, and bad input."""
import numpy
import pytest

import minikeras as mk
from minikeras import losses, ops

ALL_CLASSES = [
    losses.CategoricalCrossentropy, losses.SparseCategoricalCrossentropy, losses.BinaryCrossentropy,
    losses.MeanSquaredError, losses.MeanAbsoluteError, losses.MeanAbsolutePercentageError,
    losses.MeanSquaredLogarithmicError, losses.Huber, losses.LogCosh, losses.CosineSimilarity,
    losses.KLDivergence, losses.Poisson, losses.Hinge, losses.SquaredHinge, losses.CategoricalHinge,
]


def test_get_by_function_name_alias_class_name_and_objects():
    assert losses.get("categorical_crossentropy") is losses.categorical_crossentropy
    assert losses.get("mse") is losses.mean_squared_error
    assert losses.get("MAE") is losses.mean_absolute_error
    assert losses.get("bce") is losses.binary_crossentropy
    assert losses.get("kld") is losses.kl_divergence
    loss = losses.get("SparseCategoricalCrossentropy")
    assert isinstance(loss, losses.SparseCategoricalCrossentropy) and loss.from_logits is False
    instance = losses.Huber(delta=2.0)
    assert losses.get(instance) is instance
    assert isinstance(losses.get(losses.Poisson), losses.Poisson)
    assert losses.get(numpy.sum) is numpy.sum
    assert losses.get(None) is None
    config = {"class_name": "CategoricalCrossentropy", "config": {"from_logits": True}}
    assert losses.get(config).from_logits is True


def test_get_unknown_name_lists_known_losses():
    with pytest.raises(ValueError, match=r"Unknown loss 'categorical_crossentropie'.*categorical_crossentropy"):
        losses.get("categorical_crossentropie")
    with pytest.raises(ValueError, match="Could not interpret"):
        losses.get(42)


@pytest.mark.parametrize("cls", ALL_CLASSES)
def test_config_round_trip(cls):
    loss = cls(reduction="sum", name="custom_name")
    config = loss.get_config()
    assert config["name"] == "custom_name" and config["reduction"] == "sum"
    clone = cls.from_config(config)
    assert clone.get_config() == config
    assert losses.deserialize(losses.serialize(loss)).get_config() == config


def test_keras_default_names_and_options():
    assert losses.Huber().name == "huber_loss"
    assert losses.MeanSquaredError().name == "mean_squared_error"
    config = losses.CategoricalCrossentropy(label_smoothing=0.1).get_config()
    assert config == {"name": "categorical_crossentropy", "reduction": "sum_over_batch_size",
                      "from_logits": False, "label_smoothing": 0.1, "axis": -1}
    assert losses.SparseCategoricalCrossentropy(ignore_class=255).get_config()["ignore_class"] == 255
    assert losses.serialize(losses.mse) == "mean_squared_error"
    assert losses.deserialize("mse") is losses.mean_squared_error


def test_bad_reduction_raises():
    with pytest.raises(ValueError, match="reduction"):
        losses.MeanSquaredError(reduction="average")


def test_sequence_losses_with_per_sample_and_per_timestep_weights(rng):
    y, p = rng.normal(size=(4, 3, 2)), rng.normal(size=(4, 3, 2))
    per_value = ((y - p) ** 2).mean(-1)  # (4, 3)
    per_sample_weights = rng.uniform(0, 1, 4)
    value = losses.MeanSquaredError()(y, mk.tensor(p), sample_weight=per_sample_weights)
    numpy.testing.assert_allclose(value.item(), (per_value * per_sample_weights[:, None]).mean())
    per_step_weights = rng.uniform(0, 1, (4, 3))
    value = losses.MeanSquaredError()(y, mk.tensor(p), sample_weight=per_step_weights)
    numpy.testing.assert_allclose(value.item(), (per_value * per_step_weights).mean())
    value = losses.MeanSquaredError(reduction="none")(y, mk.tensor(p), sample_weight=per_step_weights)
    numpy.testing.assert_allclose(value.numpy(), per_value * per_step_weights)


def test_sample_weight_column_and_scalar(rng):
    y, p = rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    per_sample = ((y - p) ** 2).mean(-1)
    weights = rng.uniform(0, 1, 5)
    loss = losses.MeanSquaredError()
    numpy.testing.assert_allclose(loss(y, mk.tensor(p), sample_weight=weights[:, None]).item(),
                                  (per_sample * weights).mean())
    numpy.testing.assert_allclose(loss(y, mk.tensor(p), sample_weight=2.0).item(), 2 * per_sample.mean())
    numpy.testing.assert_allclose(loss(y, mk.tensor(p), sample_weight=mk.tensor(weights)).item(),
                                  (per_sample * weights).mean())


def test_sample_weight_of_wrong_shape_raises(rng):
    y, p = rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    with pytest.raises(ValueError, match=r"sample_weight of shape \(3,\).*\(5,\)"):
        losses.MeanSquaredError()(y, mk.tensor(p), sample_weight=numpy.ones(3))


def test_function_wrapper_matches_ranks_for_user_functions(rng):
    seen = {}

    def my_loss(y_true, y_pred):
        seen["shapes"] = (y_true.shape, y_pred.shape, y_true.dtype)
        return ops.mean(ops.abs(y_pred - y_true), axis=-1)

    wrapper = losses.LossFunctionWrapper(my_loss, reduction="sum")
    assert wrapper.name == "my_loss"
    p = rng.normal(size=(4, 1)).astype(numpy.float32)
    y = rng.normal(size=4)  # float64 labels, flat
    value = wrapper(y, mk.tensor(p))
    assert seen["shapes"] == ((4, 1), (4, 1), numpy.float32)
    numpy.testing.assert_allclose(value.item(), numpy.abs(p[:, 0] - y).sum(), rtol=1e-5)


def test_custom_loss_subclass():
    class Squared(losses.Loss):
        def call(self, y_true, y_pred):
            return ops.sum(ops.square(y_pred - y_true), axis=-1)

    loss = Squared()
    assert loss.name == "squared"
    value = loss(mk.tensor([[1.0, 2.0], [0.0, 0.0]]), mk.tensor([[1.0, 0.0], [1.0, 1.0]]))
    numpy.testing.assert_allclose(value.item(), (4.0 + 2.0) / 2)


def test_integer_predictions_and_list_inputs_are_accepted():
    value = losses.MeanAbsoluteError()([[1, 2]], [[2, 2]])
    assert value.dtype == numpy.float32
    numpy.testing.assert_allclose(value.item(), 0.5)


def test_a_gradient_step_reduces_the_loss(rng):
    """The losses drive training: one step of gradient descent on a linear
    softmax classifier lowers the cross-entropy."""
    x = rng.normal(size=(32, 5)).astype(numpy.float32)
    labels = (x[:, 0] > 0).astype(numpy.int64)
    w = mk.tensor(rng.normal(0, 0.1, (5, 2)).astype(numpy.float32), requires_grad=True)
    loss = losses.SparseCategoricalCrossentropy(from_logits=True)
    before = loss(labels, mk.tensor(x) @ w)
    before.backward()
    w.assign(w.numpy() - 0.5 * w.grad.numpy())
    after = loss(labels, mk.tensor(x) @ w)
    assert after.item() < before.item() - 1e-3
