"""model.summary() in Keras 3's layout (minikeras/models/summary.py)."""
import minikeras as mk
from minikeras import layers
from minikeras.models.summary import readable_size


def _lines(model, **kwargs):
    lines = []
    model.summary(print_fn=lines.append, **kwargs)
    return lines


def test_readable_size_uses_1024_steps():
    assert readable_size(0) == "0.00 B" and readable_size(708) == "708.00 B"
    assert readable_size(2048) == "2.00 KB" and readable_size(3 * 1024 ** 2) == "3.00 MB"


def test_sequential_has_no_input_row_and_no_connections():
    model = mk.Sequential([layers.Input((4,)), layers.Dense(8), layers.Dense(2)], name="seq")
    lines = _lines(model)
    assert lines[0] == 'Model: "seq"' and "Connected to" not in lines[2]
    assert not any("InputLayer" in line for line in lines)
    assert " Total params: 58 (232.00 B)" in lines and " Non-trainable params: 0 (0.00 B)" in lines


def test_branching_functional_model_lists_inputs_and_connections():
    a, b = layers.Input((4,), name="a"), layers.Input((3,), name="b")
    shared = layers.Dense(2, name="shared")
    merged = layers.Concatenate(name="merged")([shared(a), b])
    lines = _lines(mk.Model([a, b], merged, name="branchy"), show_trainable=True)
    header = lines[2]
    assert "Connected to" in header and "Trainable" in header
    row = next(line for line in lines if line.startswith("│ merged (Concatenate)"))
    assert "shared[0][0], b[0][0]" in row and "(None, 5)" in row
    assert any(line.startswith("│ a (InputLayer)") for line in lines)
    assert lines[-1] == " Non-trainable params: 0 (0.00 B)"


def test_non_trainable_weights_and_optimizer_state_are_counted_with_bytes():
    model = mk.Sequential([layers.Input((2,)), layers.BatchNormalization(), layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    model.fit(mk.random.normal((8, 2)).numpy(), mk.random.normal((8, 1)).numpy(), verbose=0)
    lines = _lines(model)
    # BN: 2 gamma + 2 beta trainable, 2 + 2 moving; Dense 3. Adam: 2 slots per trainable value + step + lr.
    assert " Trainable params: 7 (28.00 B)" in lines and " Non-trainable params: 4 (16.00 B)" in lines
    assert " Optimizer params: 16 (68.00 B)" in lines and " Total params: 27 (112.00 B)" in lines


def test_subclassed_model_before_and_after_its_first_call():
    class Net(mk.Model):
        def __init__(self):
            super().__init__()
            self.hidden = layers.Dense(3)
            self.drop = layers.Dropout(0.1)

        def call(self, x):
            return self.drop(self.hidden(x))

    net = Net()
    rows = [line for line in _lines(net) if line.startswith("│")]
    assert "? " in rows[0] and "0 (unbuilt)" in rows[0] and rows[1].rstrip(" │").endswith("0")
    net(mk.random.normal((2, 4)))
    rows = [line for line in _lines(net) if line.startswith("│")]
    assert rows[0].rstrip(" │").endswith("15")
