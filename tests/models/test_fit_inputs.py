"""fit/evaluate/predict take every input Keras 3 takes (issue 19): minikeras
Tensors, nested Python lists, objects speaking ``__array__`` or DLPack,
iterables of batches (tf.data / DataLoader, here as small fakes with the same
protocol), and text. The real torch/TensorFlow/pandas objects are in
test_fit_inputs_live.py, which skips where they are not installed."""
import warnings

import numpy
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.device import placement_device


def _data(n=24):
    rng = numpy.random.default_rng(1)
    x = rng.normal(size=(n, 3)).astype("float32")
    y = (x @ numpy.array([[1.0], [-1.0], [0.5]], "float32")).astype("float32")
    return x, y


def _model():
    mk.random.seed(3)
    model = mk.Sequential([layers.Input(shape=(3,)), layers.Dense(1)])
    model.compile(optimizer=mk.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
    return model


def _trained_on(x, y, **kwargs):
    model = _model()
    history = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0, **kwargs)
    return model, history.history["loss"]


def _reference():
    x, y = _data()
    model, losses = _trained_on(x, y)
    return model.get_weights(), losses


class FakeArray:
    """What pandas/TF/JAX objects have in common: ``__array__`` only."""

    def __init__(self, array):
        self.array = array

    def __array__(self, dtype=None, copy=None):
        return self.array if dtype is None else self.array.astype(dtype)


class FakeDLPack:
    """A tensor of another library speaking DLPack only (no ``__array__``),
    on the host or, with ``device_type=2``, claiming to be a CUDA array."""

    def __init__(self, array, device_type=1):
        self.array = array
        self.device_type = device_type

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return (self.device_type, 0)


class DLPackOnly:
    """A real device array seen through DLPack alone (what torch.cuda or JAX
    hand over), exported on the stream of the library that made it, which the
    consumer's stream then waits for (DLPack's contract)."""

    def __init__(self, array, stream=None):
        self.array, self.stream = array, stream

    def __dlpack__(self, **kwargs):
        if self.stream is None:
            return self.array.__dlpack__(**kwargs)
        with self.stream:
            return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class Batches:
    """A tf.data.Dataset / DataLoader stand-in: every ``iter()`` starts a new
    pass over the batches; ``len()`` is the number of batches (DataLoader)."""

    def __init__(self, batches, repeat=False):
        self.batches = batches
        self.repeat = repeat
        self.passes = 0

    def __iter__(self):
        self.passes += 1
        while True:
            yield from self.batches
            if not self.repeat:
                return

    def __len__(self):
        if self.repeat:
            raise TypeError("The dataset is infinite.")  # what tf.data does
        return len(self.batches)


def _loader_batches(x, y, size=8):
    # DataLoader batches are lists [x, y] of framework tensors.
    return [[FakeArray(x[i:i + size]), FakeArray(y[i:i + size])] for i in range(0, len(x), size)]


# ----------------------------------------------------------------- Tensors
def test_tensors_as_x_and_y_train_like_arrays_and_predict_whole_batches():
    weights, losses = _reference()
    x, y = _data()
    model, tensor_losses = _trained_on(mk.tensor(x), mk.tensor(y))
    numpy.testing.assert_allclose(tensor_losses, losses, rtol=1e-5)
    for got, want in zip(model.get_weights(), weights):
        numpy.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    predicted = model.predict(mk.tensor(x), batch_size=5, verbose=0)  # not one row at a time
    assert predicted.shape == (24, 1)
    numpy.testing.assert_allclose(predicted, model.predict(x, verbose=0), rtol=1e-6)
    assert model.evaluate(mk.tensor(x), mk.tensor(y), verbose=0) == pytest.approx(
        model.evaluate(x, y, verbose=0), rel=1e-6)


def test_tensors_on_the_device_are_batched_there_without_uploads():
    x, y = _data()
    model, _ = _trained_on(x, y)
    device = placement_device()
    x_on_device, y_on_device = mk.tensor(x), mk.tensor(y)
    model.predict(x[:8], verbose=0)  # builds what predict needs once

    def uploads(run):
        before = device.stats.uploads
        run()
        return device.stats.uploads - before

    host_fed = uploads(lambda: model.predict(x, batch_size=4, verbose=0))
    assert uploads(lambda: model.predict(x_on_device, batch_size=4, verbose=0)) == 0
    assert uploads(lambda: model.fit(x_on_device, y_on_device, batch_size=4, shuffle=False, verbose=0)) == 0
    # Shuffled: the epoch's order goes up once, the data never.
    shuffled = uploads(lambda: model.fit(x_on_device, y_on_device, batch_size=4, shuffle=True, verbose=0))
    if device.kind == "gpu":
        assert host_fed == 6 and shuffled == 1  # host arrays: one upload per batch
    else:
        assert host_fed == shuffled == 0


# ------------------------------------------------------------ nested lists
def test_nested_python_lists_are_one_array_each():
    weights, losses = _reference()
    x, y = _data()
    model, list_losses = _trained_on(x.tolist(), y.tolist())
    numpy.testing.assert_allclose(list_losses, losses, rtol=1e-5)
    for got, want in zip(model.get_weights(), weights):
        numpy.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert model.predict(x.tolist(), verbose=0).shape == (24, 1)
    assert numpy.isfinite(model.evaluate(x.tolist(), y[:, 0].tolist(), verbose=0)).all()


def test_tensors_and_lists_with_validation_split_class_and_sample_weights_train_as_arrays():
    rng = numpy.random.default_rng(4)
    x = rng.normal(size=(40, 3)).astype("float32")
    y = rng.integers(0, 2, 40)
    weights = rng.uniform(0.5, 1.5, 40).astype("float32")

    def history(x, y, sample_weight):
        mk.random.seed(7)
        model = mk.Sequential([layers.Input(shape=(3,)), layers.Dense(2, activation="softmax")])
        model.compile(mk.optimizers.SGD(0.1), "sparse_categorical_crossentropy", metrics=["accuracy"])
        return model.fit(x, y, sample_weight=sample_weight, class_weight={0: 1.0, 1: 2.0}, validation_split=0.25,
                         batch_size=8, epochs=2, shuffle=False, verbose=0).history

    want = history(x, y, weights)
    for got in (history(mk.tensor(x), mk.tensor(y), mk.tensor(weights)),
                history(x.tolist(), y.tolist(), weights.tolist())):
        assert set(got) == set(want)
        for key in want:
            numpy.testing.assert_allclose(got[key], want[key], rtol=1e-5)


def test_a_list_of_arrays_is_still_one_array_per_input():
    x, y = _data()
    first, second = layers.Input(shape=(3,)), layers.Input(shape=(3,))
    model = mk.Model([first, second], layers.Dense(1)(layers.Concatenate()([first, second])))
    model.compile("sgd", "mse")
    model.fit([x, x * 2], y, epochs=1, verbose=0)
    assert model.predict([x, mk.tensor(x * 2)], verbose=0).shape == (24, 1)


# ------------------------------------------------------ array protocols
def test_objects_with_array_or_host_dlpack_convert_at_the_boundary():
    weights, losses = _reference()
    x, y = _data()
    for wrap in (FakeArray, FakeDLPack):
        model, got_losses = _trained_on(wrap(x), wrap(y))
        numpy.testing.assert_allclose(got_losses, losses, rtol=1e-5)
        assert model.predict(wrap(x), verbose=0).shape == (24, 1)
        assert numpy.isfinite(model.evaluate(wrap(x), wrap(y), verbose=0)).all()
        assert numpy.isfinite(model.train_on_batch(wrap(x), wrap(y))).all()
        assert model.predict_on_batch(wrap(x)).shape == (24, 1)


def test_losses_and_metrics_take_other_libraries_arrays_as_a_custom_loop_gives_them():
    x, y = _data()
    predicted = mk.tensor(y * 0.5)
    loss = mk.losses.MeanSquaredError()
    want = float(loss(y, predicted).item())
    assert float(loss(FakeArray(y), predicted).item()) == pytest.approx(want)
    assert float(loss(FakeDLPack(y), predicted).item()) == pytest.approx(want)
    metric = mk.metrics.MeanAbsoluteError()
    metric.update_state(FakeArray(y), FakeDLPack(y * 0.5), sample_weight=FakeArray(numpy.ones(len(y), "float32")))
    assert float(metric.result()) == pytest.approx(float(numpy.abs(y * 0.5).mean()), rel=1e-6)


def test_minikeras_tensor_takes_other_libraries_arrays_keeping_their_dtype():
    values = numpy.arange(6, dtype="float64").reshape(2, 3)
    for wrap in (FakeArray, FakeDLPack):
        made = mk.tensor(wrap(values))
        assert made.dtype == numpy.float64 and made.device is placement_device()
        numpy.testing.assert_array_equal(made.numpy(), values)
    with pytest.raises(TypeError, match=r"received FakeDLPack .*minikeras.tensor"):
        mk.ops.add(FakeDLPack(values), 1.0)  # ops take Tensors and arrays; the hint says how


def test_a_cuda_dlpack_array_lands_on_the_gpu_without_an_upload_or_is_refused_without_one():
    x, y = _data()
    model, _ = _trained_on(x, y)
    device = placement_device()
    cuda_x = FakeDLPack(x, device_type=2)  # kDLCUDA, device 0
    if device.kind != "gpu":
        with pytest.raises(TypeError, match="CUDA array .* no GPU with that id"):
            model.predict(cuda_x, verbose=0)
        return
    if type(device).__name__ == "GpuDevice":
        # A GPU reads the capsule, not the claim: hand it a real CUDA array,
        # made by CuPy's default pool on a stream of its own (another
        # library's, to minikeras).
        with device.xp.cuda.Device(device.cuda_id), device.xp.cuda.Stream() as other:
            cuda_x = DLPackOnly(device.xp.asarray(x), other)
    model.predict(x[:8], verbose=0)
    before = device.stats.uploads
    predicted = model.predict(cuda_x, batch_size=8, verbose=0)
    assert device.stats.uploads == before  # imported through DLPack, batched on the device
    numpy.testing.assert_allclose(predicted, model.predict(x, verbose=0), rtol=1e-6)


def test_garbage_is_refused_with_a_clear_error():
    model = _model()
    x, y = _data()
    with pytest.raises(ValueError, match="batch axis .* str 'hello'"):
        model.fit("hello", y, verbose=0)
    with pytest.raises(TypeError, match="expected an array, a Tensor, an array-like .* received object"):
        model.fit(object(), y, verbose=0)
    with pytest.raises(TypeError, match="received set"):
        model.predict({1.0, 2.0}, verbose=0)
    with pytest.raises(ValueError, match="ragged"):
        model.fit([[1.0, 2.0, 3.0], [1.0]], [1.0, 2.0], verbose=0)


# ------------------------------------------------- iterables of batches
def test_an_iterable_of_batches_is_read_from_its_start_every_epoch():
    x, y = _data()
    source = Batches(_loader_batches(x, y))
    model = _model()
    seen = []
    counter = mk.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: seen.append(batch))
    history = model.fit(source, epochs=3, verbose=0, callbacks=[counter], validation_data=source)
    assert seen == [0, 1, 2] * 3 and source.passes == 6  # 3 training + 3 validation passes
    assert len(history.history["val_loss"]) == 3
    assert model.predict(source, verbose=0).shape == (24, 1)
    assert numpy.isfinite(model.evaluate(source, verbose=0)).all()
    # The same batches as arrays give the same training.
    weights, losses = _reference()
    model, got = _model(), None
    got = model.fit(Batches(_loader_batches(x, y)), epochs=2, verbose=0).history["loss"]
    numpy.testing.assert_allclose(got, losses, rtol=1e-5)
    for a, b in zip(model.get_weights(), weights):
        numpy.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_a_repeated_iterable_with_steps_per_epoch_reads_on_across_epochs():
    x, y = _data()
    source = Batches(_loader_batches(x, y), repeat=True)
    model = _model()
    seen = []
    counter = mk.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: seen.append(batch))
    model.fit(source, steps_per_epoch=5, epochs=2, verbose=0, callbacks=[counter])
    assert seen == list(range(5)) * 2 and source.passes == 1


def test_a_finite_iterable_shorter_than_steps_per_epoch_warns_and_starts_again():
    x, y = _data()
    source = Batches(_loader_batches(x, y))  # 3 batches
    model = _model()
    seen = []
    counter = mk.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append(epoch))
    with pytest.warns(UserWarning, match="ran out of data after 1 of the 2 batches"):
        model.fit(source, steps_per_epoch=2, epochs=3, verbose=0, callbacks=[counter])
    assert seen == [0, 1, 2] and source.passes == 2  # epochs read 2, 1 (the end), then 2 again


def test_an_empty_iterable_is_refused():
    model = _model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="got no data"):
            model.fit(Batches([]), verbose=0)


# ------------------------------------------------------------------- text
def _text_data():
    texts = numpy.array([["the cat sat"], ["a dog ran"], ["the dog sat"], ["a cat ran"]] * 4)
    labels = numpy.array([0, 1, 1, 0] * 4, "float32")
    return texts, labels


def _text_model(functional):
    texts, _ = _text_data()
    vectorize = layers.TextVectorization(max_tokens=20, output_mode="multi_hot")
    vectorize.adapt(texts)
    mk.random.seed(0)
    if functional:
        text = layers.Input(shape=(1,), dtype="string")
        model = mk.Model(text, layers.Dense(1, activation="sigmoid")(vectorize(text)))
    else:
        model = mk.Sequential([layers.Input(shape=(1,), dtype="string"), vectorize,
                               layers.Dense(1, activation="sigmoid")])
    model.compile(mk.optimizers.Adam(0.1), "binary_crossentropy", metrics=["accuracy"])
    return model


@pytest.mark.parametrize("functional", [False, True])
def test_a_model_starting_with_text_vectorization_takes_string_arrays_end_to_end(functional, tmp_path):
    texts, labels = _text_data()
    model = _text_model(functional)
    assert model.inputs[0].dtype == "string"
    history = model.fit(texts, labels, batch_size=4, epochs=15, verbose=0)
    assert history.history["accuracy"][-1] == 1.0  # "dog" decides the label
    predicted = model.predict(texts, verbose=0)
    assert predicted.shape == (16, 1)
    numpy.testing.assert_allclose(model.predict(texts.astype(bytes), verbose=0), predicted)
    numpy.testing.assert_allclose(model.predict([["a dog"], ["the cat"]], verbose=0)[:, 0] > 0.5, [True, False])
    path = str(tmp_path / "text.keras")
    model.save(path)
    restored = mk.models.load_model(path)
    assert restored.inputs[0].dtype == "string"
    numpy.testing.assert_allclose(restored.predict(texts, verbose=0), predicted, rtol=1e-6)


def test_text_reaching_a_numeric_layer_is_refused_at_its_entry():
    with pytest.raises(TypeError, match="'numbers'.*string"):  # when the graph is built, as in Keras
        mk.Sequential([layers.Input(shape=(1,), dtype="string"), layers.Dense(1, name="numbers")])
    model = mk.Sequential([layers.Dense(1, name="numbers")])
    with pytest.raises(TypeError, match="'numbers'.*string"):
        model.predict(numpy.array([["a"], ["b"]]), verbose=0)
