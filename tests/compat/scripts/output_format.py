"""What a user sees: summary() in Keras 3's layout, the progress line on a
non-terminal stdout (one line per epoch, no carriage returns), verbose=2,
evaluate/predict verbosity, and History key order."""
import contextlib
import io
import re

import numpy as np

import minikeras as keras
from minikeras import layers


def captured(function, *args, **kwargs):
    stream = io.StringIO()
    with contextlib.redirect_stdout(stream):
        result = function(*args, **kwargs)
    return result, stream.getvalue()


rng = np.random.default_rng(6)
x = rng.normal(size=(80, 5)).astype("float32")
y = (x[:, 0] > 0).astype("int32")

inputs = keras.Input((5,), name="features")
hidden = layers.Dense(16, activation="relu", name="a_rather_long_hidden_layer_name_kept_whole")(inputs)
outputs = layers.Dense(2, activation="softmax", name="classes")(hidden)
model = keras.Model(inputs, outputs, name="classifier")
_, text = captured(model.summary)
lines = text.splitlines()
assert lines[0] == 'Model: "classifier"' and lines[1].startswith("┏") and "┃ Layer (type)" in lines[2]
assert any(line.startswith("│ features (InputLayer)") and "(None, 5)" in line for line in lines), text
assert any("a_rather_long_hidden_layer_name_kept_whole (Dense)" in line and "96" in line for line in lines), text
assert " Total params: 130 (520.00 B)" in lines and " Trainable params: 130 (520.00 B)" in lines, text
assert " Non-trainable params: 0 (0.00 B)" in lines

model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
history, text = captured(model.fit, x, y, batch_size=16, epochs=3, validation_split=0.2)
assert "\r" not in text and "\x1b" not in text, repr(text)
lines = text.splitlines()
assert lines[0::2] == ["Epoch 1/3", "Epoch 2/3", "Epoch 3/3"], lines
pattern = (r"4/4 ━{20} \d+s \d+(us|ms|s)/step - accuracy: \d\.\d{4} - loss: \d\.\d{4} - "
           r"val_accuracy: \d\.\d{4} - val_loss: \d\.\d{4}$")
assert all(re.match(pattern, line) for line in lines[1::2]), lines
assert list(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]

_, text = captured(model.fit, x, y, batch_size=16, epochs=2, verbose=2)
lines = text.splitlines()
assert len(lines) == 4 and re.match(r"5/5 - \d+s - \d+(us|ms|s)/step - accuracy: \d\.\d{4} - loss: \d\.\d{4}$",
                                    lines[1]), lines

result, text = captured(model.evaluate, x, y, batch_size=40)  # verbose="auto" is 1 for evaluate
assert re.match(r"2/2 ━{20} \d+s \d+(us|ms|s)/step - accuracy: \d\.\d{4} - loss: \d\.\d{4}\n$", text), repr(text)
assert isinstance(result, list) and len(result) == 2  # [loss, accuracy]: loss first, as Keras
_, text = captured(model.predict, x, batch_size=40)  # and 1 for predict
assert re.match(r"2/2 ━{20} \d+s \d+(us|ms|s)/step\n$", text), repr(text)
for quiet in (lambda: model.evaluate(x, y, verbose=0), lambda: model.predict(x, verbose=0),
              lambda: model.fit(x, y, epochs=1, verbose=0)):
    assert captured(quiet)[1] == ""

_, text = captured(model.summary)  # once trained, the optimizer's state is counted too
assert " Total params: 392 (1.54 KB)" in text.splitlines() and " Optimizer params: 262 (1.03 KB)" in text, text
print("OK")
