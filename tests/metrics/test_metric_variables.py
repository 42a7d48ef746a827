"""Metric.add_variable / add_weight and the default reset_state (metrics/base.py)."""
import numpy

import minikeras as mk


class Counter(mk.metrics.Metric):
    def __init__(self, name="counter", **kwargs):
        super().__init__(name=name, **kwargs)
        self.total = self.add_variable(shape=(2,), initializer="ones", name="total")
        self.steps = self.add_weight(name="steps", dtype="int32")

    def update_state(self, values, sample_weight=None):
        self.total.assign_add(numpy.asarray(values, dtype="float32").sum(axis=0))
        self.steps.assign_add(1)

    def result(self):
        return self.total.sum() / self.steps


def test_variables_state_and_default_reset():
    metric = Counter()
    assert [v.path for v in metric.variables] == ["counter/total", "counter/steps"]
    assert all(not v.trainable for v in metric.variables) and metric.steps.dtype == numpy.int32
    metric.update_state([[1.0, 2.0], [3.0, 4.0]])
    metric.update_state([[0.0, 0.0]])
    assert float(metric.result()) == (2 + 10) / 2
    metric.reset_state()
    assert numpy.all(metric.total.numpy() == 0) and int(metric.steps.numpy()) == 0


def test_a_variable_metric_in_compile_reports_each_epoch():
    class MeanPrediction(mk.metrics.Metric):
        def __init__(self, **kwargs):
            super().__init__(name="mean_prediction", **kwargs)
            self.sum = self.add_variable(shape=(), name="sum")
            self.count = self.add_variable(shape=(), name="count")

        def update_state(self, y_true, y_pred, sample_weight=None):
            self.sum.assign_add(float(numpy.sum(y_pred)))
            self.count.assign_add(float(numpy.size(y_pred)))

        def result(self):
            return self.sum / self.count

    model = mk.Sequential([mk.layers.Input((2,)), mk.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse", metrics=[MeanPrediction()])
    x = numpy.ones((8, 2), "float32")
    history = model.fit(x, numpy.zeros((8, 1), "float32"), epochs=2, verbose=0)
    predictions = model.predict(x, verbose=0)
    assert len(history.history["mean_prediction"]) == 2
    logs = model.evaluate(x, numpy.zeros((8, 1)), verbose=0, return_dict=True)
    assert abs(logs["mean_prediction"] - float(predictions.mean())) < 1e-5
