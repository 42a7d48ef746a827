"""ops.simple_rnn_sequence, ops.lstm_sequence and ops.gru_sequence: NumPy
step-by-step references (Keras's formulation), float64 gradients, errors."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from minikeras.autograd import gradcheck

U = 3


def sigmoid(z):
    return 1.0 / (1.0 + numpy.exp(-z))


def _run(step, x, state, go_backwards):
    steps = range(x.shape[1])[::-1] if go_backwards else range(x.shape[1])
    outputs = []
    for t in steps:
        state = step(x[:, t], state)
        outputs.append(state[0])
    return numpy.stack(outputs, axis=1), state


def np_simple(x, kernel, recurrent, bias, h0, go_backwards):
    return _run(lambda xt, s: (numpy.tanh(xt @ kernel + s[0] @ recurrent + bias),), x, (h0,), go_backwards)


def np_lstm(x, kernel, recurrent, bias, h0, c0, go_backwards):
    def step(xt, state):
        h, c = state
        i, f, g, o = numpy.split(xt @ kernel + h @ recurrent + bias, 4, axis=-1)
        c = sigmoid(f) * c + sigmoid(i) * numpy.tanh(g)
        return sigmoid(o) * numpy.tanh(c), c

    return _run(step, x, (h0, c0), go_backwards)


def np_gru(x, kernel, recurrent, bias, h0, reset_after, go_backwards):
    def step(xt, state):
        (h,) = state
        if reset_after:
            x_z, x_r, x_h = numpy.split(xt @ kernel + bias[0], 3, axis=-1)
            r_z, r_r, r_h = numpy.split(h @ recurrent + bias[1], 3, axis=-1)
            z, r = sigmoid(x_z + r_z), sigmoid(x_r + r_r)
            candidate = numpy.tanh(x_h + r * r_h)
        else:
            x_z, x_r, x_h = numpy.split(xt @ kernel + bias, 3, axis=-1)
            z = sigmoid(x_z + h @ recurrent[:, :U])
            r = sigmoid(x_r + h @ recurrent[:, U:2 * U])
            candidate = numpy.tanh(x_h + (r * h) @ recurrent[:, 2 * U:])
        return (z * h + (1 - z) * candidate,)

    return _run(step, x, (h0,), go_backwards)


def _flat(outputs):
    outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    return ops.concatenate([ops.reshape(o, (-1,)) for o in outputs], axis=0)


def _check(op, reference, arrays, count_expected):
    out = op(*[mk.tensor(a) for a in arrays])
    expected = reference(*arrays)
    out = out if isinstance(out, (list, tuple)) else [out]
    assert len(out) == count_expected
    for got, want in zip(out, expected):
        numpy.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)
    assert gradcheck(lambda *t: _flat(op(*t)), [mk.Tensor(a, requires_grad=True) for a in arrays])


@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("return_sequences", [False, True])
def test_simple_rnn_sequence(rng, go_backwards, return_sequences):
    arrays = [rng.normal(size=(2, 4, 3)), rng.normal(size=(3, U)) * 0.5, rng.normal(size=(U, U)) * 0.5,
              rng.normal(size=U), rng.normal(size=(2, U))]

    def reference(*a):
        sequence, (h,) = np_simple(*a, go_backwards)
        return [sequence, h] if return_sequences else [h]

    _check(lambda *t: ops.simple_rnn_sequence(*t, "tanh", go_backwards, return_sequences), reference, arrays,
           2 if return_sequences else 1)


@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("return_sequences", [False, True])
def test_lstm_sequence(rng, go_backwards, return_sequences):
    arrays = [rng.normal(size=(2, 4, 3)), rng.normal(size=(3, 4 * U)) * 0.5, rng.normal(size=(U, 4 * U)) * 0.5,
              rng.normal(size=4 * U), rng.normal(size=(2, U)), rng.normal(size=(2, U))]

    def reference(*a):
        sequence, (h, c) = np_lstm(*a, go_backwards)
        return [sequence, h, c] if return_sequences else [h, c]

    _check(lambda *t: ops.lstm_sequence(*t, "tanh", "sigmoid", go_backwards, return_sequences), reference, arrays,
           3 if return_sequences else 2)


@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("go_backwards, return_sequences", [(False, True), (True, False)])
def test_gru_sequence(rng, reset_after, go_backwards, return_sequences):
    bias_shape = (2, 3 * U) if reset_after else (3 * U,)
    arrays = [rng.normal(size=(2, 4, 3)), rng.normal(size=(3, 3 * U)) * 0.5, rng.normal(size=(U, 3 * U)) * 0.5,
              rng.normal(size=bias_shape), rng.normal(size=(2, U))]

    def reference(*a):
        sequence, (h,) = np_gru(*a, reset_after, go_backwards)
        return [sequence, h] if return_sequences else [h]

    _check(lambda *t: ops.gru_sequence(*t, "tanh", "sigmoid", reset_after, go_backwards, return_sequences),
           reference, arrays, 2 if return_sequences else 1)


def test_rnn_sequence_errors(rng):
    with pytest.raises(ValueError, match=r"lstm_sequence: x must be a float Tensor \(batch, time, features\)"):
        ops.lstm_sequence(rng.normal(size=(2, 3)), rng.normal(size=(3, 4)), rng.normal(size=(1, 4)), None,
                          rng.normal(size=(2, 1)), None)
