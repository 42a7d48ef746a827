"""fit/evaluate/predict on real torch tensors and DataLoaders, TensorFlow
EagerTensors and tf.data Datasets, and pandas DataFrames/Series (issue 19).

None of these libraries is a dependency: each test skips, saying why, where
its library is not importable (CI). The protocol paths they exercise are
tested without them in test_fit_inputs.py.
"""
import os

import numpy
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.device import placement_device

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _data(n=40):
    rng = numpy.random.default_rng(2)
    x = rng.normal(size=(n, 3)).astype("float32")
    y = (x @ numpy.array([[1.0], [-1.0], [0.5]], "float32")).astype("float32")
    return x, y


def _model():
    mk.random.seed(5)
    model = mk.Sequential([layers.Input(shape=(3,)), layers.Dense(1)])
    model.compile(optimizer=mk.optimizers.SGD(0.05), loss="mse")
    return model


def _reference():
    x, y = _data()
    model = _model()
    losses = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0).history["loss"]
    return model, losses


def _check_same_training(x, y, **kwargs):
    reference, losses = _reference()
    model = _model()
    got = model.fit(x, y, epochs=2, verbose=0, **kwargs).history["loss"]
    numpy.testing.assert_allclose(got, losses, rtol=1e-5)
    for a, b in zip(model.get_weights(), reference.get_weights()):
        numpy.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    return model


def test_torch_tensors_and_data_loader():
    torch = pytest.importorskip("torch", reason="torch is not installed (not a minikeras dependency)")
    x, y = _data()
    model = _check_same_training(torch.tensor(x), torch.tensor(y), batch_size=8, shuffle=False)
    # A tensor in a torch graph is read through .detach(), as Keras does.
    predicted = model.predict(torch.tensor(x, requires_grad=True), verbose=0)
    numpy.testing.assert_allclose(predicted, model.predict(x, verbose=0), rtol=1e-6)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y)),
                                         batch_size=8)
    _check_same_training(loader, None)
    assert model.predict(loader, verbose=0).shape == (40, 1)
    assert numpy.isfinite(model.evaluate(loader, verbose=0))
    assert numpy.isfinite(model.train_on_batch(torch.tensor(x), torch.tensor(y)))


def test_torch_cuda_tensors_land_on_the_gpu_through_dlpack():
    torch = pytest.importorskip("torch", reason="torch is not installed (not a minikeras dependency)")
    device = placement_device()
    if not torch.cuda.is_available() or device.kind != "gpu" or device.cuda_id is None:
        pytest.skip("needs torch with CUDA and a real minikeras GPU")
    x, y = _data()
    model, _ = _reference()
    before = device.stats.uploads
    predicted = model.predict(torch.tensor(x, device=f"cuda:{device.cuda_id}"), verbose=0)
    assert device.stats.uploads == before
    numpy.testing.assert_allclose(predicted, model.predict(x, verbose=0), rtol=1e-5)


def test_tensorflow_eager_tensors_and_tf_data():
    tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed (not a minikeras dependency)")
    x, y = _data()
    model = _check_same_training(tf.constant(x), tf.constant(y), batch_size=8, shuffle=False)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)
    _check_same_training(dataset, None)
    _check_same_training(dataset.repeat(), None, steps_per_epoch=5)
    history = model.fit(dataset, validation_data=dataset, epochs=2, verbose=0)
    assert len(history.history["val_loss"]) == 2
    assert model.predict(dataset, verbose=0).shape == (40, 1)
    assert model.predict(tf.data.Dataset.from_tensor_slices(x).batch(16), verbose=0).shape == (40, 1)
    assert numpy.isfinite(model.evaluate(dataset, verbose=0))
    loss_function, metric = mk.losses.MeanSquaredError(), mk.metrics.MeanAbsoluteError()
    for batch_x, batch_y in dataset:  # a tf.keras-era custom loop fed by tf.data batches
        with mk.GradientTape() as tape:
            prediction = model(batch_x, training=True)
            loss = loss_function(batch_y, prediction)
        model.optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_weights), model.trainable_weights))
        metric.update_state(batch_y, prediction)
    assert numpy.isfinite(float(metric.result()))


def test_pandas_data_frames_and_series():
    pandas = pytest.importorskip("pandas", reason="pandas is not installed (not a minikeras dependency)")
    x, y = _data()
    model = _check_same_training(pandas.DataFrame(x, columns=["a", "b", "c"]), pandas.Series(y[:, 0]),
                                 batch_size=8, shuffle=False)
    assert model.predict(pandas.DataFrame(x), verbose=0).shape == (40, 1)
