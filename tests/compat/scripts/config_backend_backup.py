"""Model.from_config with custom_objects, keras.backend-style helpers,
BackupAndRestore resuming an interrupted fit, and TensorBoard-style scalar logs."""
import json
import os
import sys
import tempfile

import numpy as np

import minikeras as keras
from minikeras import backend, layers


class Scale(layers.Layer):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, inputs):
        return inputs * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


assert backend.image_data_format() == "channels_last" and backend.epsilon() == 1e-7
assert backend.floatx() == "float32"
backend.clear_session()
inputs = keras.Input((3,))
model = keras.Model(inputs, layers.Dense(2)(Scale(3.0)(inputs)))
assert model.layers[-1].name == "dense"  # names start again after clear_session
config = model.get_config()
try:
    keras.Model.from_config({**config, "layers": [{**spec, "class_name": "NoSuchLayer"} if spec["name"] == "scale"
                                                  else spec for spec in config["layers"]]})
except ValueError as error:
    assert "NoSuchLayer" in str(error) and "custom_objects" in str(error), error
else:
    raise AssertionError("an unknown layer class must be refused")
clone = keras.Model.from_config(config, custom_objects={"Scale": Scale})
assert [type(layer).__name__ for layer in clone.layers] == ["InputLayer", "Scale", "Dense"]
assert clone.layers[1].factor == 3.0
clone.set_weights(model.get_weights())
sample = np.ones((2, 3), "float32")
assert np.allclose(clone.predict(sample, verbose=0), model.predict(sample, verbose=0))

rng = np.random.default_rng(5)
x = rng.normal(size=(64, 3)).astype("float32")
y = x @ np.array([[1.0], [-2.0], [0.5]], "float32")


def make_model():
    keras.random.seed(0)
    net = keras.Sequential([keras.Input((3,)), layers.Dense(1)])
    net.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    return net


class Interrupt(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        if epoch == 2:
            raise KeyboardInterrupt("simulated crash")


with tempfile.TemporaryDirectory() as folder:
    backup_dir = os.path.join(folder, "backup")
    reference = make_model()
    full = reference.fit(x, y, epochs=6, batch_size=16, shuffle=False, verbose=0)
    crashed = make_model()
    try:
        crashed.fit(x, y, epochs=6, batch_size=16, shuffle=False, verbose=0,
                    callbacks=[keras.callbacks.BackupAndRestore(backup_dir), Interrupt()])
    except KeyboardInterrupt:
        pass
    assert os.path.exists(os.path.join(backup_dir, "training_metadata.json"))
    resumed = make_model()
    history = resumed.fit(x, y, epochs=6, batch_size=16, shuffle=False, verbose=0,
                          callbacks=[keras.callbacks.BackupAndRestore(backup_dir)])
    assert history.epoch == [3, 4, 5], history.epoch  # picks up after the last completed epoch
    assert np.allclose(history.history["loss"], full.history["loss"][3:], rtol=1e-4), (history.history, full.history)
    assert np.allclose(resumed.get_weights()[0], reference.get_weights()[0], rtol=1e-4)
    assert not os.path.exists(os.path.join(backup_dir, "training_metadata.json"))  # deleted once fit completes

    log_dir = os.path.join(folder, "logs")
    make_model().fit(x, y, epochs=3, validation_split=0.25, verbose=0,
                     callbacks=[keras.callbacks.TensorBoard(log_dir=log_dir)])
    if os.path.exists(os.path.join(log_dir, "train", "scalars.jsonl")):  # no tensorboard package: JSON lines
        with open(os.path.join(log_dir, "train", "scalars.jsonl")) as handle:
            rows = [json.loads(line) for line in handle]
        with open(os.path.join(log_dir, "validation", "scalars.jsonl")) as handle:
            validation = [json.loads(line) for line in handle]
        rows = [row for row in rows if "epoch_loss" in row]
        validation = [row for row in validation if "epoch_loss" in row]
    else:  # event files, read back by TensorBoard's own reader (summary-v2 tensors, as Keras 3 writes them)
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
        from tensorboard.util.tensor_util import make_ndarray

        def read(run):
            accumulator = EventAccumulator(os.path.join(log_dir, run), size_guidance={"tensors": 0})
            accumulator.Reload()
            return [{"step": event.step, "epoch_loss": float(make_ndarray(event.tensor_proto))}
                    for event in accumulator.Tensors("epoch_loss")]

        rows, validation = read("train"), read("validation")
    assert [row["step"] for row in rows] == [0, 1, 2] and rows[-1]["epoch_loss"] < rows[0]["epoch_loss"]
    assert len(validation) == 3 and "epoch_loss" in validation[0]
print("OK", file=sys.stdout)
