"""Model inputs Keras refuses, or that a model would silently mangle (issue 36,
item 13): complex data in fit/evaluate/predict, and ``Reshape(-1)``."""
import numpy
import pytest

import minikeras as mk


def _model():
    model = mk.Sequential([mk.layers.Dense(2, input_shape=(3,))])
    model.compile(optimizer="sgd", loss="mse")
    return model


@pytest.mark.parametrize("method", ["fit", "evaluate", "predict"])
def test_complex_data_is_refused_not_cast_to_its_real_part(method):
    model = _model()
    x = (numpy.ones((4, 3)) + 1j).astype("complex64")
    y = numpy.ones((4, 2), "float32")
    call = getattr(model, method)
    with pytest.raises(TypeError, match="Model data must be real numbers; received a complex array of dtype complex64"):
        call(x, verbose=0) if method == "predict" else call(x, y, verbose=0)
    if method != "predict":
        with pytest.raises(TypeError, match="Model data must be real numbers"):
            call(x.real.copy(), y.astype("complex64"), verbose=0)
    before = model.get_weights()
    call(x.real.copy(), verbose=0) if method == "predict" else call(x.real.copy(), y, verbose=0)
    assert len(model.get_weights()) == len(before)


def test_complex_batches_from_a_generator_are_refused():
    model = _model()

    def batches():
        while True:
            yield (numpy.ones((2, 3), "complex64"), numpy.ones((2, 2), "float32"))

    with pytest.raises(TypeError, match="Model data must be real numbers"):
        model.fit(batches(), steps_per_epoch=2, verbose=0)


@pytest.mark.parametrize("target_shape", [-1, 6, (2.0, 3), "6", None])
def test_reshape_takes_a_tuple_of_ints_only(target_shape):
    # Keras: Reshape(-1) raises TypeError ('int' object is not iterable); a float size was truncated here.
    with pytest.raises(TypeError, match="Reshape: target_shape must be a tuple of ints such as"):
        mk.layers.Reshape(target_shape)


def test_reshape_with_a_tuple_still_works():
    x = numpy.arange(12, dtype="float32").reshape(2, 6)
    assert mk.layers.Reshape((-1,))(x).shape == (2, 6)
    assert mk.layers.Reshape([3, 2])(x).shape == (2, 3, 2)
    with pytest.raises(ValueError, match="at most one -1"):
        mk.layers.Reshape((-1, -1))
