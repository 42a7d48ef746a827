"""fit/evaluate with no data, and data that is not numeric (issue 12)."""
import numpy
import pytest

import minikeras as mk


@pytest.fixture
def model():
    mk.random.seed(0)
    model = mk.Sequential([mk.layers.Input((4,)), mk.layers.Dense(1)])
    model.compile("sgd", "mse")
    return model


def test_evaluate_on_zero_samples_raises(model):
    with pytest.raises(ValueError, match=r"evaluate: got no data \(0 batches\)"):
        model.evaluate(numpy.zeros((0, 4)), numpy.zeros((0, 1)), verbose=0)
    with pytest.raises(ValueError, match="evaluate: steps must be positive, received 0"):
        model.evaluate(numpy.zeros((8, 4)), numpy.zeros((8, 1)), steps=0, verbose=0)


def test_fit_with_no_batches_raises(model):
    with pytest.raises(ValueError, match="fit: steps_per_epoch must be positive, received 0"):
        model.fit(numpy.zeros((8, 4)), numpy.zeros((8, 1)), steps_per_epoch=0, verbose=0)
    with pytest.raises(ValueError, match=r"fit: epoch 1 got no data \(0 batches\)"):
        model.fit(numpy.zeros((0, 4)), numpy.zeros((0, 1)), verbose=0)
    with pytest.raises(ValueError, match=r"fit: epoch 1 got no data"):
        model.fit(iter([]), verbose=0)


def test_fit_refuses_object_data_with_none(model):
    x = numpy.array([[1.0, 2.0, None, 4.0]] * 8, dtype=object)
    with pytest.raises(TypeError, match="Model data must be numeric arrays; received an array of dtype object"):
        model.fit(x, numpy.zeros((8, 1)), verbose=0)
    with pytest.raises(TypeError, match="numeric"):
        model.predict(numpy.array([["a"] * 4]), verbose=0)


def test_fit_still_trains_on_good_data(model):
    history = model.fit(numpy.ones((8, 4)), numpy.ones((8, 1)), epochs=2, batch_size=4, verbose=0)
    assert len(history.history["loss"]) == 2 and all(numpy.isfinite(history.history["loss"]))


def _with_an_empty_batch():
    yield numpy.ones((4, 4), "float32"), numpy.ones((4, 1), "float32")
    yield numpy.ones((0, 4), "float32"), numpy.ones((0, 1), "float32")


@pytest.mark.parametrize("method", ["fit", "evaluate", "predict"])
def test_an_empty_batch_from_a_generator_is_the_librarys_error(model, method):
    with pytest.raises(ValueError, match=r"Batch 1 of the generator holds no samples \(x has shape \(0, 4\)\): every "
                                         r"batch needs at least one"):
        getattr(model, method)(_with_an_empty_batch(), verbose=0)
