"""The overridable steps (minikeras/models/steps.py) and the metrics they report."""
import warnings

import numpy
import pytest

import minikeras as mk
from minikeras import layers


def _data(n=64):
    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(n, 3)).astype("float32")
    return x, x @ numpy.array([[1.0], [-1.0], [2.0]], "float32")


def _model(metrics=("mae",), loss="mse"):
    model = mk.Sequential([layers.Input((3,)), layers.Dense(1)])
    model.compile(optimizer=mk.optimizers.SGD(0.05), loss=loss, metrics=list(metrics))
    return model


def test_train_step_receives_keras_shaped_batches():
    seen = []

    class Spy(mk.Model):
        def train_step(self, data):
            seen.append(type(data).__name__ + str(len(data)) if isinstance(data, tuple) else "array")
            return super().train_step(data)

        def test_step(self, data):
            seen.append("test" + str(len(data)))
            return super().test_step(data)

    inputs = layers.Input((3,))
    model = Spy(inputs, layers.Dense(1)(inputs))
    model.compile(optimizer="sgd", loss="mse")
    x, y = _data()
    model.fit(x, y, batch_size=32, epochs=1, verbose=0)
    model.fit(x, y, sample_weight=numpy.ones(64), batch_size=64, epochs=1, verbose=0)
    model.evaluate(x, y, batch_size=64, verbose=0)
    assert seen == ["tuple2", "tuple2", "tuple3", "test2"]


def test_metrics_property_order_and_reset():
    model = _model(metrics=["mae"])
    x, y = _data()
    model.fit(x, y, epochs=1, verbose=0)
    assert [m.name for m in model.metrics] == ["loss", "compile_metrics"]
    assert model.metrics_names == ["loss", "compile_metrics"]
    logs = model.get_metrics_result()
    assert list(logs) == ["loss", "mae"] and logs["loss"] > 0
    model.reset_metrics()
    assert model.get_metrics_result() == {"loss": 0.0, "mae": 0.0}


def test_metric_attributes_of_a_model_are_tracked():
    class Tracked(mk.Model):
        def __init__(self):
            super().__init__()
            self.dense = layers.Dense(1)
            self.extra = mk.metrics.Mean(name="extra")

        def call(self, x):
            return self.dense(x)

    model = Tracked()
    model.compile(optimizer="sgd", loss="mse")
    assert [m.name for m in model.metrics] == ["loss", "extra"]


def test_compute_loss_adds_model_losses_and_refuses_nothing():
    model = mk.Sequential([layers.Input((3,)), layers.Dense(1, kernel_regularizer=mk.regularizers.L2(0.5))])
    model.compile(optimizer="sgd", loss="mse")
    x, y = _data(8)
    y_pred = model(x)
    data_loss = float(mk.losses.MeanSquaredError()(y, y_pred).item())
    penalty = 0.5 * float((model.layers[0].kernel.numpy() ** 2).sum())
    total = float(model.compute_loss(x, y, y_pred).item())
    assert total == pytest.approx(data_loss + penalty, rel=1e-5)
    bare = mk.Sequential([layers.Input((3,)), layers.Dense(1)])
    bare.compile(optimizer="sgd")
    with pytest.raises(ValueError, match="No loss to compute"):
        bare.fit(x, y, verbose=0)


def test_compiled_loss_returns_a_tensor_and_updates_the_loss_metric():
    model = _model()
    x, y = _data(8)
    loss = model.compiled_loss(y, model(x), regularization_losses=[mk.tensor(1.0)])
    expected = float(mk.losses.MeanSquaredError()(y, model(x)).item()) + 1.0
    assert float(loss.item()) == pytest.approx(expected, rel=1e-5)
    assert model.get_metrics_result()["loss"] == pytest.approx(expected, rel=1e-5)


def test_no_trainable_weights_warns_once_and_still_reports():
    model = mk.Sequential([layers.Input((3,)), layers.Dense(1, trainable=False)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = _data()
    before = model.get_weights()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = model.fit(x, y, batch_size=16, epochs=2, verbose=0)
    messages = [str(w.message) for w in caught if "trainable weights" in str(w.message)]
    assert len(messages) == 1
    assert all(numpy.array_equal(a, b) for a, b in zip(before, model.get_weights()))
    assert history.history["loss"][0] > 0


def test_train_and_test_on_batch_return_values_in_metrics_order():
    model = _model(metrics=["mae", "mse"])
    x, y = _data(16)
    values = model.train_on_batch(x, y)
    assert len(values) == 3 and all(isinstance(v, float) for v in values)
    logs = model.test_on_batch(x, y, return_dict=True)
    assert list(logs) == ["loss", "mae", "mse"] and logs["loss"] == pytest.approx(logs["mse"], rel=1e-5)


def test_unpack_and_pack_utilities():
    from minikeras.utils import pack_x_y_sample_weight, unpack_x_y_sample_weight

    x = numpy.ones(2)
    assert unpack_x_y_sample_weight(x) == (x, None, None)
    assert unpack_x_y_sample_weight((x,))[0] is x and unpack_x_y_sample_weight([x, 1])[1] == 1
    assert unpack_x_y_sample_weight((x, 1, 2)) == (x, 1, 2)
    assert pack_x_y_sample_weight(x) is x and pack_x_y_sample_weight([x, x]) == ([x, x],)
    assert pack_x_y_sample_weight(x, 1) == (x, 1) and pack_x_y_sample_weight(x, 1, 2) == (x, 1, 2)
    with pytest.raises(ValueError, match="tuple of 4 elements"):
        unpack_x_y_sample_weight((x, 1, 2, 3))


def test_evaluate_list_order_for_dict_outputs_follows_keras():
    inputs = layers.Input((3,))
    hidden = layers.Dense(4)(inputs)
    model = mk.Model(inputs, {"reg": layers.Dense(1)(hidden), "cls": layers.Dense(2, activation="softmax")(hidden)})
    model.compile(optimizer="sgd", loss={"reg": "mse", "cls": "sparse_categorical_crossentropy"},
                  metrics={"cls": ["accuracy"]})
    x, y = _data(16)
    targets = {"reg": y, "cls": (y[:, 0] > 0).astype("int32")}
    logs = model.evaluate(x, targets, verbose=0, return_dict=True)
    values = model.evaluate(x, targets, verbose=0)
    # Keras 3: the loss, each output's loss in declared order, then the rest sorted.
    assert values == [logs["loss"], logs["reg_loss"], logs["cls_loss"], logs["cls_accuracy"]]
    assert list(logs) == ["cls_accuracy", "cls_loss", "loss", "reg_loss"]


def test_one_sample_weight_array_applies_to_every_output():
    inputs = layers.Input((3,))
    model = mk.Model(inputs, [layers.Dense(1, name="a")(inputs), layers.Dense(1, name="b")(inputs)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = _data(16)
    weights = numpy.r_[numpy.zeros(8), numpy.ones(8)].astype("float32")
    shared = model.evaluate(x, [y, y], sample_weight=weights, verbose=0, return_dict=True)
    listed = model.evaluate(x, [y, y], sample_weight=[weights, weights], verbose=0, return_dict=True)
    assert shared == pytest.approx(listed)
    unweighted = model.evaluate(x, [y, y], verbose=0, return_dict=True)
    assert shared["a_loss"] != pytest.approx(unweighted["a_loss"])
