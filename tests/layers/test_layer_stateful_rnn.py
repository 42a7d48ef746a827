"""Stateful RNNs (Keras's stateful=True): states carried across batches,
reset, refused batch-size changes, probes that keep nothing, gradients that
stop at the batch boundary, config and save round trips, on every device."""
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.autograd import gradcheck
from minikeras.layers.naming import reset_names

KINDS = {
    "SimpleRNN": lambda **kw: layers.SimpleRNN(4, **kw),
    "LSTM": lambda **kw: layers.LSTM(4, **kw),
    "GRU": lambda **kw: layers.GRU(4, **kw),
    "RNN(cell)": lambda **kw: layers.RNN(layers.LSTMCell(4), **kw),
}


def _numpy(value):
    return numpy.asarray(value.numpy() if hasattr(value, "numpy") else value)


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("masked", [False, True])
def test_carried_states_equal_one_long_sequence(rng, kind, masked):
    stateful = KINDS[kind](stateful=True, return_sequences=True)
    plain = KINDS[kind](return_sequences=True)
    x = rng.standard_normal((3, 9, 2)).astype("float32")
    chunks = [x[:, :3], x[:, 3:6], x[:, 6:]]
    mask = numpy.ones((3, 3), dtype=bool)
    if masked:  # the step-by-step path: a masked step keeps the states
        mask[1, 2] = False
    first = stateful(chunks[0], mask=mask)
    plain.build((None, 9, 2))
    plain.set_weights(stateful.get_weights())
    outputs = [first] + [stateful(chunk, mask=mask) for chunk in chunks[1:]]
    whole = plain(x, mask=numpy.concatenate([mask] * 3, axis=1))
    numpy.testing.assert_allclose(numpy.concatenate([_numpy(o) for o in outputs], axis=1), _numpy(whole),
                                  rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_reset_states_starts_again_from_zeros(rng, kind):
    layer = KINDS[kind](stateful=True)
    x = rng.standard_normal((2, 5, 3)).astype("float32")
    first = _numpy(layer(x))
    second = _numpy(layer(x))
    assert not numpy.allclose(first, second)  # the state carried over
    layer.reset_states()
    assert all(not _numpy(state).any() for state in layer.states)
    numpy.testing.assert_allclose(_numpy(layer(x)), first, rtol=1e-6)
    layer.reset_state()  # Keras 3's name
    numpy.testing.assert_allclose(_numpy(layer(x)), first, rtol=1e-6)


def test_model_reset_states_resets_every_stateful_layer(rng):
    model = mk.Sequential([layers.Input(batch_shape=(2, 5, 3)), layers.GRU(4, stateful=True, return_sequences=True),
                           layers.LSTM(3, stateful=True)])
    x = rng.standard_normal((2, 5, 3)).astype("float32")
    first = _numpy(model(x))
    assert not numpy.allclose(first, _numpy(model(x)))
    model.reset_states()
    numpy.testing.assert_allclose(_numpy(model(x)), first, rtol=1e-6)


def test_a_different_batch_size_is_refused():
    layer = layers.LSTM(4, stateful=True)
    layer(numpy.zeros((2, 3, 1), "float32"))
    with pytest.raises(ValueError, match="Expected batch size: 2"):
        layer(numpy.zeros((5, 3, 1), "float32"))


def test_symbolic_build_needs_a_static_batch_and_keeps_no_state():
    with pytest.raises(ValueError, match="batch size must be static"):
        layers.SimpleRNN(4, stateful=True)(layers.Input(shape=(5, 1)))
    layer = layers.SimpleRNN(4, stateful=True)
    layer(layers.Input(batch_shape=(3, 5, 1)))
    assert layer.states is None  # the functional API's probe batch left nothing behind


def test_gradients_stop_at_the_batch_boundary(rng):
    """Truncated BPTT: the kept states are constants to the next batch, so
    the gradient of batch 2 w.r.t. its input and the weights is that of a
    call with those states passed as initial_state."""
    layer = layers.LSTM(3, stateful=True, dtype="float64", return_sequences=True)
    layer(rng.standard_normal((2, 4, 2)))
    kept = [_numpy(state).copy() for state in layer.states]
    weights = [w.numpy().copy() for w in (layer.kernel, layer.recurrent_kernel, layer.bias)]

    def second_batch(x, kernel, recurrent_kernel, bias):
        layer.states = [mk.Tensor(state) for state in kept]
        saved = layer.kernel, layer.recurrent_kernel, layer.bias
        layer.kernel, layer.recurrent_kernel, layer.bias = kernel, recurrent_kernel, bias
        try:
            return layer(x)
        finally:
            layer.kernel, layer.recurrent_kernel, layer.bias = saved

    gradcheck(second_batch, [rng.standard_normal((2, 4, 2))] + weights)
    plain = layers.LSTM(3, dtype="float64", return_sequences=True)
    x2 = rng.standard_normal((2, 4, 2))
    plain.build((None, 4, 2))
    plain.set_weights(weights)
    layer.states = [mk.Tensor(state) for state in kept]
    numpy.testing.assert_allclose(_numpy(layer(x2)), _numpy(plain(x2, initial_state=[mk.Tensor(s) for s in kept])),
                                  rtol=1e-12)


def test_config_and_save_round_trip(tmp_path, rng):
    reset_names()
    model = mk.Sequential([layers.Input(batch_shape=(2, 5, 3)), layers.LSTM(4, stateful=True)])
    x = rng.standard_normal((2, 5, 3)).astype("float32")
    model(x)
    assert layers.LSTM.from_config(model.layers[0].get_config()).stateful
    path = tmp_path / "stateful.keras"
    model.save(path)
    loaded = mk.models.load_model(path)
    assert loaded.layers[0].stateful
    assert loaded.layers[0].states is None  # states are not weights (Keras 3 does not save them)
    model.reset_states()
    numpy.testing.assert_allclose(_numpy(loaded(x)), _numpy(model(x)), rtol=1e-6)
