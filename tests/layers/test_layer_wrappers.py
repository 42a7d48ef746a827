"""Layer wrappers: Bidirectional and TimeDistributed.

(Named test_layer_wrappers.py: pytest's default import mode needs unique
test module basenames across tests/.)
"""
import numpy
import pytest

from minikeras import layers, ops
from minikeras.autograd import Tensor, gradcheck
from minikeras.layers import Input
from minikeras.layers.naming import reset_names


def _randomize(layer, seed=0):
    rng = numpy.random.default_rng(seed)
    layer.set_weights([rng.uniform(-0.6, 0.6, size=w.shape) for w in layer.weights])


# ----------------------------------------------------------- Bidirectional
def test_bidirectional_copies_layers_with_keras_names_and_weight_order(rng):
    reset_names()
    wrapper = layers.Bidirectional(layers.LSTM(4))
    wrapper(rng.standard_normal((2, 3, 5)).astype("float32"))
    assert wrapper.forward_layer.name == "forward_lstm" and wrapper.backward_layer.name == "backward_lstm"
    assert wrapper.forward_layer.go_backwards is False and wrapper.backward_layer.go_backwards is True
    names = [w.name for w in wrapper.weights]
    assert names == ["forward_lstm/kernel", "forward_lstm/recurrent_kernel", "forward_lstm/bias",
                     "backward_lstm/kernel", "backward_lstm/recurrent_kernel", "backward_lstm/bias"]
    assert [w.shape for w in wrapper.get_weights()] == [(5, 16), (4, 16), (16,)] * 2
    assert len(wrapper.trainable_weights) == 6


@pytest.mark.parametrize("merge_mode, merge", [
    ("concat", lambda a, b: numpy.concatenate([a, b], axis=-1)),
    ("sum", lambda a, b: a + b),
    ("ave", lambda a, b: (a + b) / 2),
    ("mul", lambda a, b: a * b),
])
@pytest.mark.parametrize("return_sequences", [False, True])
def test_bidirectional_merges_forward_and_time_aligned_backward(rng, merge_mode, merge, return_sequences):
    wrapper = layers.Bidirectional(layers.GRU(3, return_sequences=return_sequences, dtype="float64"),
                                   merge_mode=merge_mode)
    x = rng.standard_normal((2, 5, 4))
    wrapper(x)
    _randomize(wrapper)
    forward = layers.GRU(3, return_sequences=return_sequences, dtype="float64")
    forward(x)
    forward.set_weights(wrapper.get_weights()[:3])
    backward = layers.GRU(3, return_sequences=return_sequences, dtype="float64")
    backward(x)
    backward.set_weights(wrapper.get_weights()[3:])
    a = forward(x).numpy()
    b = backward(x[:, ::-1]).numpy()  # the backward layer reads the reversed sequence...
    if return_sequences:
        b = b[:, ::-1]  # ...and its outputs are put back in input order
    numpy.testing.assert_allclose(wrapper(x).numpy(), merge(a, b), rtol=1e-10, atol=1e-12)


def test_bidirectional_merge_none_and_states(rng):
    x = rng.standard_normal((2, 4, 3)).astype("float32")
    wrapper = layers.Bidirectional(layers.LSTM(2, return_state=True), merge_mode=None)
    outputs = wrapper(x)
    assert len(outputs) == 6 and all(o.shape == (2, 2) for o in outputs)
    numpy.testing.assert_array_equal(outputs[0].numpy(), outputs[2].numpy())  # forward output is its h
    numpy.testing.assert_array_equal(outputs[1].numpy(), outputs[4].numpy())  # backward output is its h
    concat = layers.Bidirectional(layers.LSTM(2, return_state=True, return_sequences=True))
    outputs = concat(x)
    assert [o.shape for o in outputs] == [(2, 4, 4)] + [(2, 2)] * 4
    assert concat.compute_output_shape((None, 4, 3)) == [(None, 4, 4)] + [(None, 2)] * 4


def test_bidirectional_initial_state_is_split_in_halves(rng):
    x = rng.standard_normal((2, 4, 3))
    states = [rng.standard_normal((2, 2)) for _ in range(4)]
    wrapper = layers.Bidirectional(layers.LSTM(2, dtype="float64"), merge_mode=None)
    wrapper(x)
    forward, backward = wrapper(x, initial_state=states)
    numpy.testing.assert_array_equal(forward.numpy(),
                                     wrapper.forward_layer(x, initial_state=states[:2]).numpy())
    numpy.testing.assert_array_equal(backward.numpy(),
                                     wrapper.backward_layer(x, initial_state=states[2:]).numpy())
    with pytest.raises(ValueError, match="even number of initial states"):
        wrapper(x, initial_state=states[:3])


def test_bidirectional_custom_backward_layer(rng):
    backward = layers.SimpleRNN(3, activation="relu", go_backwards=True, return_sequences=True)
    wrapper = layers.Bidirectional(layers.SimpleRNN(3, return_sequences=True), backward_layer=backward)
    out = wrapper(rng.standard_normal((2, 4, 2)).astype("float32"))
    assert out.shape == (2, 4, 6) and wrapper.backward_layer is backward
    with pytest.raises(ValueError, match="different go_backwards"):
        layers.Bidirectional(layers.SimpleRNN(3), backward_layer=layers.SimpleRNN(3))
    with pytest.raises(ValueError, match="same return_sequences"):
        layers.Bidirectional(layers.SimpleRNN(3), backward_layer=layers.SimpleRNN(3, go_backwards=True,
                                                                                  return_sequences=True))


def test_bidirectional_gradcheck(rng):
    wrapper = layers.Bidirectional(layers.SimpleRNN(2, return_sequences=True, dtype="float64"))
    x = rng.standard_normal((2, 3, 2))
    wrapper(x)
    gradcheck(wrapper, [x])
    inputs = Tensor(x, requires_grad=True)
    wrapper(inputs).sum().backward()
    assert all(w.grad is not None for w in wrapper.trainable_weights)


def test_bidirectional_config_round_trip(rng):
    wrapper = layers.Bidirectional(layers.LSTM(3, return_sequences=True, dropout=0.1), merge_mode="ave")
    x = rng.standard_normal((2, 4, 3)).astype("float32")
    out = wrapper(x)
    config = wrapper.get_config()
    assert config["layer"]["class_name"] == "LSTM" and config["backward_layer"]["config"]["go_backwards"] is True
    clone = layers.Bidirectional.from_config(config)
    assert clone.forward_layer.name == wrapper.forward_layer.name
    assert clone.backward_layer.name == wrapper.backward_layer.name
    assert clone.get_config() == config
    clone(x)
    clone.set_weights(wrapper.get_weights())
    numpy.testing.assert_array_equal(clone(x).numpy(), out.numpy())


def test_bidirectional_initial_weights_and_symbolic_shape(rng):
    source = layers.Bidirectional(layers.GRU(2))
    x = rng.standard_normal((1, 3, 2)).astype("float32")
    source(x)
    copy = layers.Bidirectional(layers.GRU(2), weights=source.get_weights())
    numpy.testing.assert_array_equal(copy(x).numpy(), source(x).numpy())
    assert layers.Bidirectional(layers.LSTM(5, return_sequences=True))(Input(shape=(None, 3))).shape == \
        (None, None, 10)


def test_bidirectional_bad_arguments():
    with pytest.raises(ValueError, match="expects a Layer instance"):
        layers.Bidirectional("lstm")
    with pytest.raises(ValueError, match="merge_mode must be one of"):
        layers.Bidirectional(layers.LSTM(2), merge_mode="max")
    with pytest.raises(ValueError, match="needs a recurrent layer"):
        layers.Bidirectional(layers.Dense(2))


# --------------------------------------------------------- TimeDistributed
def test_time_distributed_dense_applies_one_layer_to_every_step(rng):
    inner = layers.Dense(3, activation="tanh")
    wrapper = layers.TimeDistributed(inner)
    x = rng.standard_normal((2, 4, 5)).astype("float32")
    out = wrapper(x)
    assert out.shape == (2, 4, 3) == wrapper.compute_output_shape(x.shape)
    assert wrapper.weights == inner.weights and len(wrapper.get_weights()) == 2
    for t in range(4):
        numpy.testing.assert_allclose(out.numpy()[:, t], inner(x[:, t]).numpy(), rtol=1e-6)


def test_time_distributed_conv2d(rng):
    wrapper = layers.TimeDistributed(layers.Conv2D(2, 3, padding="same"))
    x = rng.standard_normal((2, 3, 5, 5, 1)).astype("float32")
    out = wrapper(x)
    assert out.shape == (2, 3, 5, 5, 2)
    numpy.testing.assert_allclose(out.numpy()[:, 1], wrapper.layer(x[:, 1]).numpy(), rtol=1e-6)
    assert layers.TimeDistributed(layers.MaxPooling2D())(Input(shape=(3, 4, 4, 2))).shape == (None, 3, 2, 2, 2)


def test_time_distributed_gradcheck_and_config(rng):
    wrapper = layers.TimeDistributed(layers.Dense(2, dtype="float64"), dtype="float64")
    x = rng.standard_normal((2, 3, 2))
    wrapper(x)
    gradcheck(wrapper, [x])
    config = wrapper.get_config()
    clone = layers.TimeDistributed.from_config(config)
    clone(x)
    clone.set_weights(wrapper.get_weights())
    numpy.testing.assert_array_equal(clone(x).numpy(), wrapper(x).numpy())
    assert clone.get_config()["layer"]["config"]["units"] == 2


def test_time_distributed_passes_training_on(rng):
    wrapper = layers.TimeDistributed(layers.Dropout(0.5))
    x = numpy.ones((2, 3, 8), "float32")
    numpy.testing.assert_array_equal(wrapper(x).numpy(), x)
    assert (wrapper(x, training=True).numpy() == 0).any()


def test_time_distributed_bad_input():
    with pytest.raises(ValueError, match="expects a Layer instance"):
        layers.TimeDistributed(ops.relu)
    with pytest.raises(ValueError, match=r"expects inputs of rank >= 3 \(batch, timesteps, ...\)"):
        layers.TimeDistributed(layers.Dense(2))(numpy.zeros((2, 3), "float32"))
