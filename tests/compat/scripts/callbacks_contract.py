"""The callbacks contract: every hook gets a dict, fit's validation runs the
on_test_* hooks, and model/params are set through set_model/set_params."""
import numpy as np

import minikeras as keras
from minikeras import layers

rng = np.random.default_rng(4)
x = rng.normal(size=(96, 3)).astype("float32")
y = (x.sum(axis=1) > 0).astype("int32")


class Recorder(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []
        self.set_model_calls = 0
        self.set_params_calls = 0

    def set_model(self, model):
        self.set_model_calls += 1
        super().set_model(model)

    def set_params(self, params):
        self.set_params_calls += 1
        super().set_params(params)


def record(name):
    def hook(self, *args):
        logs = args[-1]
        assert isinstance(logs, dict), f"{name} got {logs!r}"
        assert self.model is not None and self.params, name
        self.calls.append((name, dict(logs)))
    return hook


for hook_name in [name for name in vars(keras.callbacks.Callback) if name.startswith("on_")]:
    setattr(Recorder, hook_name, record(hook_name))

model = keras.Sequential([keras.Input((3,)), layers.Dense(4, activation="relu"), layers.Dense(2)])
model.compile(optimizer=keras.optimizers.Adam(0.05),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
recorder = Recorder()
history = model.fit(x, y, batch_size=32, epochs=3, validation_data=(x[:64], y[:64]), callbacks=[recorder], verbose=0)
names = [name for name, _ in recorder.calls]
assert recorder.model is model and recorder.set_model_calls >= 1 and recorder.set_params_calls >= 1
assert recorder.params == {"verbose": 0, "epochs": 3, "steps": 3}, recorder.params
assert names[0] == "on_train_begin" and names[-1] == "on_train_end"
epoch_one = names[names.index("on_epoch_begin"):names.index("on_epoch_end") + 1]
assert epoch_one == ["on_epoch_begin"] + ["on_train_batch_begin", "on_train_batch_end"] * 3 + [
    "on_test_begin"] + ["on_test_batch_begin", "on_test_batch_end"] * 2 + ["on_test_end", "on_epoch_end"], epoch_one
begins = [logs for name, logs in recorder.calls if name.endswith("_begin")]
assert all(logs == {} for logs in begins)
batch_end = next(logs for name, logs in recorder.calls if name == "on_train_batch_end")
assert sorted(batch_end) == ["accuracy", "loss"]
test_end = next(logs for name, logs in recorder.calls if name == "on_test_end")
assert sorted(test_end) == ["accuracy", "loss"]
epoch_end = [logs for name, logs in recorder.calls if name == "on_epoch_end"]
assert list(epoch_end[0]) == ["accuracy", "loss", "val_accuracy", "val_loss"]
assert recorder.calls[-1][1] == epoch_end[-1]  # on_train_end gets the last epoch's logs
assert list(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
assert history.params == {"verbose": 0, "epochs": 3, "steps": 3} and history.epoch == [0, 1, 2]
assert history.history["loss"][-1] < history.history["loss"][0]

evaluating = Recorder()
model.evaluate(x, y, batch_size=48, callbacks=[evaluating], verbose=0)
assert [name for name, _ in evaluating.calls] == ["on_test_begin", "on_test_batch_begin", "on_test_batch_end",
                                                  "on_test_batch_begin", "on_test_batch_end", "on_test_end"]
assert evaluating.params == {"verbose": 0, "epochs": 1, "steps": 2}
predicting = Recorder()
model.predict(x, batch_size=48, callbacks=[predicting], verbose=0)
outputs = [logs for name, logs in predicting.calls if name == "on_predict_batch_end"]
assert len(outputs) == 2 and outputs[0]["outputs"].shape == (48, 2)
assert predicting.calls[0] == ("on_predict_begin", {}) and predicting.calls[-1] == ("on_predict_end", {})


class StopAtTwo(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        if epoch == 1:
            self.model.stop_training = True


history = model.fit(x, y, epochs=10, callbacks=[StopAtTwo()], verbose=0)
assert history.epoch == [0, 1]
print("OK")
