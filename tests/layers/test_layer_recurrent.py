"""Recurrent layers: SimpleRNN, LSTM, GRU.

(Named test_layer_recurrent.py: pytest's default import mode needs unique
test module basenames across tests/.)

Each layer runs either as one fused node per sequence (hand-written
back-propagation through time) or step by step through ops (any
activation, recurrent dropout). Both are checked against NumPy step loops
written here, against each other, by finite differences, and against
outputs recorded from tf.keras 3.15 (TensorFlow 2.21) in float64.
"""
import numpy
import pytest

from minikeras import layers, ops, regularizers
from minikeras.autograd import Tensor, gradcheck
from minikeras.layers import Input
from minikeras.layers.naming import reset_names
from minikeras.ops.nn.rnn_lstm import LSTMSequence
from tests.layers.layer_check import run_layer_test


# ------------------------------------------------------------ references
def sigmoid(z):
    return 1.0 / (1.0 + numpy.exp(-z))


def reference_run(layer, x, states, go_backwards=False):
    """The layer's recurrence as a NumPy loop: (sequence, final states)."""
    weights = layer.get_weights()
    kernel, recurrent = weights[:2]
    bias = weights[2] if len(weights) > 2 else None
    units = recurrent.shape[0]
    steps = range(x.shape[1] - 1, -1, -1) if go_backwards else range(x.shape[1])
    outputs = []
    states = [numpy.array(s, dtype=numpy.float64) for s in states]
    for t in steps:
        x_t = x[:, t]
        if isinstance(layer, layers.LSTM):
            h, c = states
            z = x_t @ kernel + h @ recurrent + (0 if bias is None else bias)
            i, f, g, o = (z[:, k * units:(k + 1) * units] for k in range(4))
            c = sigmoid(f) * c + sigmoid(i) * numpy.tanh(g)
            h = sigmoid(o) * numpy.tanh(c)
            states = [h, c]
        elif isinstance(layer, layers.GRU):
            (h,) = states
            if layer.reset_after:
                matrix_x = x_t @ kernel + (0 if bias is None else bias[0])
                matrix_h = h @ recurrent + (0 if bias is None else bias[1])
                z = sigmoid(matrix_x[:, :units] + matrix_h[:, :units])
                r = sigmoid(matrix_x[:, units:2 * units] + matrix_h[:, units:2 * units])
                candidate = numpy.tanh(matrix_x[:, 2 * units:] + r * matrix_h[:, 2 * units:])
            else:
                matrix_x = x_t @ kernel + (0 if bias is None else bias)
                matrix_h = h @ recurrent[:, :2 * units]
                z = sigmoid(matrix_x[:, :units] + matrix_h[:, :units])
                r = sigmoid(matrix_x[:, units:2 * units] + matrix_h[:, units:])
                candidate = numpy.tanh(matrix_x[:, 2 * units:] + (r * h) @ recurrent[:, 2 * units:])
            h = z * h + (1 - z) * candidate
            states = [h]
        else:
            (h,) = states
            h = numpy.tanh(x_t @ kernel + h @ recurrent + (0 if bias is None else bias))
            states = [h]
        outputs.append(states[0])
    return numpy.stack(outputs, axis=1), states


LAYERS = [
    ("SimpleRNN", lambda **kw: layers.SimpleRNN(3, **kw)),
    ("LSTM", lambda **kw: layers.LSTM(3, **kw)),
    ("GRU", lambda **kw: layers.GRU(3, **kw)),
    ("GRU_reset_before", lambda **kw: layers.GRU(3, reset_after=False, **kw)),
]


def _randomize(layer, rng):
    layer.set_weights([rng.uniform(-0.7, 0.7, size=w.shape) for w in layer.weights])


def _steps_only(layer):
    """Force the step-by-step ops path (as for a custom activation)."""
    layer._fused_kinds = lambda: (None,)
    return layer


# ----------------------------------------------------------------- forward
@pytest.mark.parametrize("name, make", LAYERS)
@pytest.mark.parametrize("return_sequences", [False, True])
@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("path", ["fused", "steps"])
def test_matches_numpy_reference(rng, name, make, return_sequences, go_backwards, path):
    layer = make(return_sequences=return_sequences, go_backwards=go_backwards, return_state=True, dtype="float64")
    if path == "steps":
        _steps_only(layer)
    x = rng.standard_normal((3, 5, 2))
    layer(x)
    _randomize(layer, rng)
    initial = [rng.standard_normal((3, 3)) for _ in range(layer.state_count)]
    outputs = layer(x, initial_state=initial)
    sequence, states = reference_run(layer, x, initial, go_backwards)
    expected_output = sequence if return_sequences else sequence[:, -1]
    assert len(outputs) == 1 + layer.state_count
    numpy.testing.assert_allclose(outputs[0].numpy(), expected_output, rtol=1e-10, atol=1e-12)
    for got, want in zip(outputs[1:], states):
        numpy.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, make", LAYERS)
def test_default_float32_and_zero_initial_state(rng, name, make):
    layer = make(return_sequences=True)
    x = rng.standard_normal((2, 4, 5)).astype("float32")
    out = layer(x)
    assert out.shape == (2, 4, 3) and out.dtype == numpy.float32
    sequence, _ = reference_run(layer, x.astype("float64"), [numpy.zeros((2, 3))] * layer.state_count)
    numpy.testing.assert_allclose(out.numpy(), sequence, rtol=1e-5, atol=1e-6)


# -------------------------------------------------- fused path vs op path
@pytest.mark.parametrize("name, make", LAYERS)
@pytest.mark.parametrize("activations", [{}, {"activation": "relu"}, {"activation": "sigmoid"}])
def test_fused_and_step_paths_agree_with_gradients(rng, name, make, activations):
    if activations and name != "SimpleRNN":
        activations = {**activations, "recurrent_activation": "hard_sigmoid"}
    x = rng.standard_normal((3, 6, 2))
    results = []
    for path in ("fused", "steps"):
        layer = make(return_sequences=True, return_state=True, dtype="float64", **activations)
        if path == "steps":
            _steps_only(layer)
        layer(x)
        _randomize(layer, numpy.random.default_rng(5))
        inputs = Tensor(x, requires_grad=True)
        states = [Tensor(numpy.full((3, 3), 0.1), requires_grad=True) for _ in range(layer.state_count)]
        outputs = layer(inputs, initial_state=states)
        loss = sum(((out * out).sum() for out in outputs[1:]), (outputs[0] * outputs[0]).sum())
        loss.backward()
        grads = [inputs.grad.numpy()] + [s.grad.numpy() for s in states] + [w.grad.numpy() for w in layer.weights]
        results.append(([o.numpy() for o in outputs], grads))
    for fused, steps in zip(results[0][0] + results[0][1], results[1][0] + results[1][1]):
        numpy.testing.assert_allclose(fused, steps, rtol=1e-9, atol=1e-12)


def test_lstm_whole_block_activation_matches_per_gate_activation(rng, monkeypatch):
    x = rng.standard_normal((4, 5, 3))
    results = []
    for whole_block in (True, False):
        monkeypatch.setattr(LSTMSequence, "whole_block", whole_block)
        layer = layers.LSTM(4, return_sequences=True, dtype="float64")
        layer(x)
        _randomize(layer, numpy.random.default_rng(2))
        inputs = Tensor(x, requires_grad=True)
        out = layer(inputs)
        (out * out).sum().backward()
        results.append([out.numpy(), inputs.grad.numpy()] + [w.grad.numpy() for w in layer.weights])
    for a, b in zip(*results):
        numpy.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


# -------------------------------------------------------------- gradcheck
def _call_with_weights(layer, x, weights, states, kwargs):
    saved = layer.kernel, layer.recurrent_kernel, layer.bias
    layer.kernel, layer.recurrent_kernel, layer.bias = weights
    try:
        outputs = layer(x, initial_state=list(states) if states else None, **kwargs)
    finally:
        layer.kernel, layer.recurrent_kernel, layer.bias = saved
    if isinstance(outputs, list):
        return ops.concatenate([ops.reshape(o, (o.shape[0], -1)) for o in outputs], axis=1)
    return outputs


@pytest.mark.parametrize("name, make", LAYERS)
@pytest.mark.parametrize("path", ["fused", "steps"])
@pytest.mark.parametrize("options", [
    {"return_sequences": True},
    {"go_backwards": True, "return_state": True, "initial_state": True},
])
def test_gradcheck_wrt_input_weights_and_states(rng, name, make, path, options):
    options = dict(options)
    with_states = options.pop("initial_state", False)
    layer = make(dtype="float64", bias_initializer="random_normal", **options)
    if path == "steps":
        _steps_only(layer)
    x = rng.standard_normal((2, 4, 2))
    layer(x)
    weights = [numpy.ascontiguousarray(w.numpy()) for w in (layer.kernel, layer.recurrent_kernel, layer.bias)]
    states = [rng.standard_normal((2, 3)) for _ in range(layer.state_count)] if with_states else []

    def run(x, *tensors):
        return _call_with_weights(layer, x, tensors[:3], tensors[3:], {})

    gradcheck(run, [x] + weights + states)


@pytest.mark.parametrize("make", [
    lambda: layers.LSTM(3, activation="relu", recurrent_activation="hard_sigmoid", use_bias=False,
                        return_sequences=True, dtype="float64"),
    lambda: layers.GRU(3, activation="softsign", return_sequences=True, dtype="float64"),  # step path
    lambda: layers.SimpleRNN(3, activation="sigmoid", use_bias=False, dtype="float64"),
])
def test_gradcheck_other_activations_and_no_bias(rng, make):
    layer = make()
    x = rng.standard_normal((2, 4, 2))
    layer(x)
    names = [n for n in ("kernel", "recurrent_kernel", "bias") if getattr(layer, n) is not None]
    weights = [numpy.ascontiguousarray(getattr(layer, n).numpy()) for n in names]

    def run(x, *tensors):
        saved = [getattr(layer, n) for n in names]
        for n, t in zip(names, tensors):
            setattr(layer, n, t)
        try:
            return layer(x)
        finally:
            for n, t in zip(names, saved):
                setattr(layer, n, t)

    gradcheck(run, [x] + weights)


# --------------------------------------------------------- tf.keras parity
def _keras_case():
    rng = numpy.random.default_rng(3)
    return rng.uniform(-1, 1, size=(2, 4, 3))


def _keras_weights(layer):
    rng = numpy.random.default_rng(7)
    layer.set_weights([rng.uniform(-0.5, 0.5, size=w.shape) for w in layer.weights])


def test_lstm_matches_recorded_tf_keras_output():
    layer = layers.LSTM(3, return_sequences=True, return_state=True, dtype="float64")
    x = _keras_case()
    layer(x)
    _keras_weights(layer)
    sequence, h, c = (t.numpy() for t in layer(x))
    numpy.testing.assert_allclose(sequence[0], [[0.124776274811, -0.196970928672, -0.10001058596],
                                                [0.049012719511, -0.178795913564, -0.074548691971],
                                                [0.044717238134, -0.249769375424, -0.1143122146],
                                                [0.187963901471, -0.268030512285, -0.156430667907]], atol=1e-11)
    numpy.testing.assert_allclose(h, [[0.187963901471, -0.268030512285, -0.156430667907],
                                      [-0.232149737668, -0.097701322457, 0.048229864456]], atol=1e-11)
    numpy.testing.assert_allclose(c, [[0.300945995498, -0.587928557388, -0.333896039989],
                                      [-0.372566996629, -0.225799874913, 0.110565103851]], atol=1e-11)


def test_gru_matches_recorded_tf_keras_output():
    layer = layers.GRU(3, return_sequences=True, dtype="float64")
    x = _keras_case()
    layer(x)
    _keras_weights(layer)
    numpy.testing.assert_allclose(layer(x).numpy()[1], [[-0.094385645401, 0.153836631178, 0.030050608722],
                                                        [-0.361503501035, 0.226793123505, 0.099807900372],
                                                        [0.061480618205, 0.145655439186, 0.116520554762],
                                                        [-0.169700137926, 0.238629551307, 0.143947917565]],
                                  atol=1e-11)


def test_gru_reset_before_matches_recorded_tf_keras_output():
    layer = layers.GRU(3, return_sequences=True, reset_after=False, dtype="float64")
    x = _keras_case()
    layer(x)
    _keras_weights(layer)
    numpy.testing.assert_allclose(layer(x).numpy()[0], [[0.111775626282, -0.206665771715, -0.117730605364],
                                                        [0.061816431645, -0.210977067413, -0.087203861741],
                                                        [-0.043674570381, -0.217886483019, -0.081669432607],
                                                        [0.226458578879, -0.238329718281, -0.103203907184]],
                                  atol=1e-11)


def test_simple_rnn_go_backwards_matches_recorded_tf_keras_output():
    layer = layers.SimpleRNN(3, return_sequences=True, go_backwards=True, dtype="float64")
    x = _keras_case()
    layer(x)
    _keras_weights(layer)
    numpy.testing.assert_allclose(layer(x).numpy()[1], [[0.489563167761, 0.678406859709, -0.27731666959],
                                                        [0.52383968015, 0.135474002541, -0.671843842157],
                                                        [0.121400835156, 0.529604557157, -0.395380987641],
                                                        [-0.32128576207, 0.294099306702, -0.251476193432]],
                                  atol=1e-11)


# ------------------------------------------------------- weights, defaults
def test_weights_follow_keras_shapes_order_and_names(rng):
    reset_names()
    x = rng.standard_normal((2, 3, 5))
    lstm, gru, gru_before, simple = layers.LSTM(4), layers.GRU(4), layers.GRU(4, reset_after=False), \
        layers.SimpleRNN(4)
    for layer in (lstm, gru, gru_before, simple):
        layer(x)
    assert [w.name for w in lstm.weights] == ["lstm/kernel", "lstm/recurrent_kernel", "lstm/bias"]
    assert [w.shape for w in lstm.weights] == [(5, 16), (4, 16), (16,)]
    assert [w.shape for w in gru.weights] == [(5, 12), (4, 12), (2, 12)]
    assert [w.shape for w in gru_before.weights] == [(5, 12), (4, 12), (12,)]
    assert [w.shape for w in simple.weights] == [(5, 4), (4, 4), (4,)]
    assert lstm.count_params() == 5 * 16 + 4 * 16 + 16
    # unit_forget_bias: ones for the forget gate, zeros elsewhere.
    numpy.testing.assert_array_equal(lstm.get_weights()[2], [0] * 4 + [1] * 4 + [0] * 8)
    # Orthogonal recurrent kernels: orthonormal rows for (u, 4u).
    recurrent = lstm.get_weights()[1]
    numpy.testing.assert_allclose(recurrent @ recurrent.T, numpy.eye(4), atol=1e-5)
    config = lstm.get_config()
    assert config["activation"] == "tanh" and config["recurrent_activation"] == "sigmoid"
    assert config["unit_forget_bias"] is True and config["return_sequences"] is False
    assert gru.get_config()["reset_after"] is True


def test_unit_forget_bias_uses_the_bias_initializer_elsewhere():
    layer = layers.LSTM(2, bias_initializer="ones", unit_forget_bias=True)
    layer(numpy.zeros((1, 2, 3), "float32"))
    numpy.testing.assert_array_equal(layer.get_weights()[2], numpy.ones(8))
    layer = layers.LSTM(2, bias_initializer="zeros", unit_forget_bias=False)
    layer(numpy.zeros((1, 2, 3), "float32"))
    numpy.testing.assert_array_equal(layer.get_weights()[2], numpy.zeros(8))


@pytest.mark.parametrize("name, make", LAYERS)
@pytest.mark.parametrize("options", [
    {"return_sequences": True, "go_backwards": True, "dropout": 0.25, "recurrent_dropout": 0.1,
     "kernel_regularizer": "l2", "recurrent_constraint": "non_neg", "seed": 3},
    {"activation": "relu", "use_bias": False},
])
def test_recurrent_layers_pass_the_layer_check(rng, tmp_path, name, make, options):
    x = rng.standard_normal((2, 4, 3)).astype("float32")
    expected = (2, 4, 3) if options.get("return_sequences") else (2, 3)
    run_layer_test(lambda **kw: make(**options, **kw), x, expected_output_shape=expected, tmp_path=tmp_path,
                   expected_num_trainable_weights=3 if options.get("use_bias", True) else 2)


def test_regularizers_and_activity_loss(rng):
    layer = layers.LSTM(2, kernel_regularizer=regularizers.L2(0.5), recurrent_regularizer="l1",
                        activity_regularizer=regularizers.L2(1.0))
    out = layer(rng.standard_normal((4, 3, 2)).astype("float32"))
    assert len(layer.losses) == 3
    numpy.testing.assert_allclose(layer.losses[0].numpy(), 0.5 * (layer.get_weights()[0] ** 2).sum(), rtol=1e-5)
    numpy.testing.assert_allclose(layer.losses[2].numpy(), (out.numpy() ** 2).sum() / 4, rtol=1e-5)


# ----------------------------------------------------------------- dropout
@pytest.mark.parametrize("name, make", LAYERS)
def test_dropout_only_in_training_with_one_mask_per_sequence(rng, name, make):
    layer = make(return_sequences=True, dropout=0.5)
    x = Tensor(rng.standard_normal((4, 5, 6)).astype("float32"), requires_grad=True)
    inference = layer(x).numpy()
    numpy.testing.assert_array_equal(layer(x, training=False).numpy(), inference)
    reference = make(return_sequences=True)
    reference(x)
    reference.set_weights(layer.get_weights())
    numpy.testing.assert_allclose(reference(x).numpy(), inference, rtol=1e-6)
    trained = layer(x, training=True)
    assert not numpy.allclose(trained.numpy(), inference)
    trained.sum().backward()
    dropped = numpy.abs(x.grad.numpy()) == 0  # (batch, time, features)
    # A dropped feature is dropped at every step of its sequence.
    numpy.testing.assert_array_equal(dropped, numpy.broadcast_to(dropped[:, :1], dropped.shape))
    assert 0 < dropped[:, 0].mean() < 1


@pytest.mark.parametrize("name, make", LAYERS)
def test_recurrent_dropout_changes_training_output_only(rng, name, make):
    layer = make(recurrent_dropout=0.5)
    x = rng.standard_normal((8, 5, 3)).astype("float32")
    inference = layer(x).numpy()
    fused = make()
    fused(x)
    fused.set_weights(layer.get_weights())
    numpy.testing.assert_allclose(fused(x).numpy(), inference, rtol=1e-6)
    assert not numpy.allclose(layer(x, training=True).numpy(), inference)


# ---------------------------------------------------------------- symbolic
def test_symbolic_shapes_with_states():
    x = Input(shape=(None, 3))
    outputs = layers.LSTM(4, return_sequences=True, return_state=True)(x)
    assert [o.shape for o in outputs] == [(None, None, 4), (None, 4), (None, 4)]
    assert layers.GRU(5)(x).shape == (None, 5)
    assert layers.SimpleRNN(2, return_state=True)(Input(shape=(7, 3)))[1].shape == (None, 2)
    assert layers.LSTM(4, return_state=True).compute_output_shape((None, 7, 3)) == [(None, 4)] * 3


def test_initial_state_from_symbolic_inputs(rng):
    x, h0 = Input(shape=(4, 3)), Input(shape=(2,))
    out = layers.GRU(2, return_sequences=True)(x, initial_state=[h0])
    assert out.shape == (None, 4, 2)


# ------------------------------------------------------------------ errors
def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="units must be a positive integer"):
        layers.GRU(0)
    with pytest.raises(ValueError, match=r"dropout must be a number in \[0, 1\)"):
        layers.SimpleRNN(2, dropout=1.0)
    with pytest.raises(ValueError, match="recurrent_dropout must be a number"):
        layers.LSTM(2, recurrent_dropout=-0.1)
    with pytest.raises(ValueError, match="Unknown activation"):
        layers.LSTM(2, recurrent_activation="nope")


def test_bad_inputs_raise():
    layer = layers.LSTM(3)
    with pytest.raises(ValueError, match=r"expects inputs of shape \(batch, timesteps, features\)"):
        layer(numpy.zeros((2, 5), "float32"))
    layer(numpy.zeros((2, 5, 4), "float32"))
    with pytest.raises(ValueError, match=r"expects the last input axis to be 4, received shape \(2, 5, 6\)"):
        layer(numpy.zeros((2, 5, 6), "float32"))
    with pytest.raises(ValueError, match=r"expects 2 initial state\(s\), received 1"):
        layer(numpy.zeros((2, 5, 4), "float32"), initial_state=[numpy.zeros((2, 3), "float32")])
    with pytest.raises(ValueError, match=r"initial state 1 must have shape \(batch, units\) = \(2, 3\), received"):
        layer(numpy.zeros((2, 5, 4), "float32"),
              initial_state=[numpy.zeros((2, 3), "float32"), numpy.zeros((2, 4), "float32")])
    with pytest.raises(ValueError, match="0 timesteps"):
        layer(numpy.zeros((2, 0, 4), "float32"))


# ----------------------------------------------------------------- learning
@pytest.mark.parametrize("make", [lambda: layers.LSTM(8), lambda: layers.GRU(8)])
def test_plain_sgd_learns_a_toy_sequence_task(make):
    """Regress the mean of a noisy sequence's second half from the whole sequence."""
    rng = numpy.random.default_rng(0)
    x = rng.standard_normal((64, 8, 2)).astype("float32")
    y = x[:, 4:, :1].mean(axis=1) - x[:, 4:, 1:].mean(axis=1)
    recurrent, head = make(), layers.Dense(1)
    weights = None
    losses = []
    for step in range(300):
        prediction = head(recurrent(x))
        loss = ((prediction - Tensor(y)) ** 2).mean()
        if weights is None:
            weights = recurrent.trainable_weights + head.trainable_weights
        for w in weights:
            w.grad = None
        loss.backward()
        for w in weights:
            with w.device.activate():
                w.data -= 0.2 * w.grad.data
        losses.append(loss.item())
    # Predicting the mean alone would leave a loss of y.var() (about 0.5).
    assert losses[-1] < 0.2 * y.var() and losses[-1] < 0.25 * losses[0]
