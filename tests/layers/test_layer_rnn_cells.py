"""RNN cells and RNN(cell): same math as the sequence layers, user cells,
masks, dropout, config/save round trips and gradients."""
import numpy
import pytest

from minikeras import Sequential, layers, ops
from minikeras.layers import Input
from tests.layers.layer_check import run_layer_test

CELLS = {
    "SimpleRNNCell": (layers.SimpleRNNCell, layers.SimpleRNN),
    "LSTMCell": (layers.LSTMCell, layers.LSTM),
    "GRUCell": (layers.GRUCell, layers.GRU),
}


@pytest.fixture
def x(rng):
    return rng.normal(size=(3, 4, 2)).astype("float32")


@pytest.mark.parametrize("name", sorted(CELLS))
def test_rnn_of_cell_equals_the_layer(name, x, tmp_path):
    cell_class, layer_class = CELLS[name]
    for options in ({}, {"return_sequences": True, "go_backwards": True}):
        rnn = run_layer_test(lambda **kw: layers.RNN(cell_class(3, dtype=kw["dtype"]), **options, **kw), x,
                             tmp_path=tmp_path)
        layer = layer_class(3, **options)
        layer(x)
        layer.set_weights(rnn.get_weights())
        numpy.testing.assert_allclose(rnn(x).numpy(), layer(x).numpy(), rtol=1e-5, atol=1e-6)
    assert [w.name.split("/")[-1] for w in rnn.weights] == ["kernel", "recurrent_kernel", "bias"]


def test_cell_step_and_state_sizes(x):
    cell = layers.LSTMCell(5)
    assert cell.state_size == [5, 5] and cell.output_size == 5
    assert layers.GRUCell(5).state_size == 5
    states = cell.get_initial_state(batch_size=3)
    output, (h, c) = cell(x[:, 0], states)
    assert output.shape == h.shape == c.shape == (3, 5)
    numpy.testing.assert_array_equal(output.numpy(), h.numpy())
    with pytest.raises(ValueError, match="expects 2 state"):
        cell(x[:, 0], states[:1])
    with pytest.raises(TypeError, match="return_sequences"):
        layers.GRUCell(3, return_sequences=True)
    assert "return_sequences" not in layers.GRUCell(3).get_config()


def test_return_state_and_initial_state(x, rng):
    rnn = layers.RNN(layers.LSTMCell(3), return_state=True)
    output, h, c = rnn(x)
    numpy.testing.assert_array_equal(output.numpy(), h.numpy())
    start = [rng.normal(size=(3, 3)).astype("float32") for _ in range(2)]
    layer = layers.LSTM(3)
    layer(x)
    layer.set_weights(rnn.get_weights())
    numpy.testing.assert_allclose(rnn(x, initial_state=start)[0].numpy(), layer(x, initial_state=start).numpy(),
                                  rtol=1e-5)
    with pytest.raises(ValueError, match="states of shapes"):
        rnn(x, initial_state=start[:1])


class MinimalCell(layers.Layer):
    """A user cell as in Keras's guide: h = tanh(x W + h U)."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = units

    def build(self, input_shape):
        self.kernel = self.add_weight("kernel", (input_shape[-1], self.units))
        self.recurrent_kernel = self.add_weight("recurrent_kernel", (self.units, self.units))

    def call(self, inputs, states):
        h = ops.tanh(ops.matmul(inputs, self.kernel) + ops.matmul(states[0], self.recurrent_kernel))
        return h, [h]

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def test_user_cell_trains_and_reloads(rng, tmp_path):
    from minikeras.models import load_model

    x = rng.normal(size=(16, 5, 2)).astype("float32")
    y = x.sum(axis=(1, 2))[:, None]
    model = Sequential([Input((5, 2)), layers.RNN(MinimalCell(4)), layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(x, y, epochs=5, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    path = str(tmp_path / "cell.h5")
    model.save(path)
    loaded = load_model(path, custom_objects={"MinimalCell": MinimalCell})
    numpy.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-5)


def test_cell_dropout_draws_one_mask_per_sequence(x):
    cell = layers.GRUCell(3, dropout=0.5, recurrent_dropout=0.5)
    rnn = layers.RNN(cell, return_sequences=True)
    inference = rnn(x).numpy()
    trained = rnn(x, training=True).numpy()
    assert not numpy.allclose(trained, inference)
    first_masks = cell._dropout_masks
    assert first_masks is not None and first_masks[1].shape == (3, 2) and first_masks[2].shape == (3, 3)
    rnn(x, training=True)
    assert cell._dropout_masks is not first_masks  # reset before each sequence


def test_rnn_errors(x):
    # A list of cells is a StackedRNNCells, as in Keras (tests/layers/test_layer_blocks.py covers it).
    assert isinstance(layers.RNN([layers.LSTMCell(2), layers.LSTMCell(2)]).cell, layers.StackedRNNCells)
    with pytest.raises(ValueError, match="state_size"):
        layers.RNN(layers.Dense(3))
    with pytest.raises(ValueError, match=r"mask of shape \(batch, timesteps\)"):
        layers.RNN(layers.LSTMCell(2))(x, mask=numpy.ones((3, 5), bool))
