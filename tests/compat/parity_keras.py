"""Parity of minikeras with Keras 3 on the same user code (not run in CI).

Each program below is ordinary Keras user code, written once with
``keras`` as the module name. This script runs it twice, in subprocesses:
under Keras 3 (``--keras-python``, a Python with tensorflow/keras, by
default /work/side/bin/python) with ``import keras``, and under minikeras
(this interpreter, this checkout) with ``import minikeras as keras``. The
initial weights come from a seeded NumPy generator and ``shuffle=False``,
so both train from the same point on the same batches. It then compares:

- History keys (names and order),
- parameter counts from ``summary()`` (total, trainable, non-trainable,
  optimizer),
- the per-epoch losses (relative tolerance ``--rtol``, float32 noise).

Usage:
    python tests/compat/parity_keras.py [--keras-python PATH] [--rtol 1e-3] [--json OUT]

Exit status 0 when everything matches, 1 otherwise, 2 when Keras is absent.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]

PRELUDE = '''
import json, re, sys
import numpy as np
{import_line}

def summary_counts(model):
    chunks = []
    model.summary(print_fn=lambda *args, **kwargs: chunks.append(" ".join(str(a) for a in args)))
    text = "\\n".join(chunks)
    counts = {{}}
    for label in ("Total", "Trainable", "Non-trainable", "Optimizer"):
        found = re.search(label + r" params: ([\\d,]+)", text)
        counts[label] = int(found.group(1).replace(",", "")) if found else None
    return counts

def seeded_weights(model, seed=0):
    rng = np.random.default_rng(seed)
    model.set_weights([rng.uniform(-0.3, 0.3, size=w.shape).astype(w.dtype) if w.dtype.kind == "f" else w
                       for w in model.get_weights()])

def report(history, model, **extra):
    out = {{"history_keys": list(history.history), "params": summary_counts(model),
           "losses": [float(v) for v in history.history["loss"]]}}
    out.update(extra)
    print("RESULT " + json.dumps(out))
'''

PROGRAMS = {
    "sequential_mlp": '''
rng = np.random.default_rng(1)
x = rng.normal(size=(128, 6)).astype("float32")
y = (x[:, 0] + x[:, 1] > 0).astype("int32")
model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(16, activation="relu"),
                          keras.layers.Dense(2, activation="softmax")])
seeded_weights(model)
model.compile(optimizer=keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
history = model.fit(x, y, batch_size=32, epochs=5, validation_split=0.25, shuffle=False, verbose=0)
report(history, model, evaluate=model.evaluate(x, y, verbose=0))
''',
    "functional_dict_outputs": '''
rng = np.random.default_rng(2)
x = {"a": rng.normal(size=(96, 3)).astype("float32"), "b": rng.normal(size=(96, 2)).astype("float32")}
y = {"reg": x["a"].sum(axis=1, keepdims=True), "cls": (x["b"][:, 0] > 0).astype("int32")}
a = keras.Input((3,), name="a"); b = keras.Input((2,), name="b")
h = keras.layers.Dense(8, activation="tanh")(keras.layers.Concatenate()([a, b]))
model = keras.Model({"a": a, "b": b}, {"reg": keras.layers.Dense(1, name="reg")(h),
                                       "cls": keras.layers.Dense(2, activation="softmax", name="cls")(h)})
seeded_weights(model)
model.compile(optimizer=keras.optimizers.SGD(0.05), loss={"reg": "mse", "cls": "sparse_categorical_crossentropy"},
              loss_weights={"reg": 1.0, "cls": 0.5}, metrics={"cls": ["accuracy"]})
history = model.fit(x, y, batch_size=32, epochs=4, validation_data=(x, y), shuffle=False, verbose=0)
report(history, model, evaluate=model.evaluate(x, y, verbose=0))
''',
    "list_outputs_weights": '''
rng = np.random.default_rng(6)
x = rng.normal(size=(80, 3)).astype("float32")
y1 = x[:, :1] * 2.0
y2 = (x[:, 1] > 0).astype("int32")
inputs = keras.Input((3,))
h = keras.layers.Dense(5, activation="relu")(inputs)
model = keras.Model(inputs, [keras.layers.Dense(1, name="first")(h),
                             keras.layers.Dense(2, activation="softmax", name="second")(h)])
seeded_weights(model)
model.compile(optimizer=keras.optimizers.SGD(0.05), loss=["mse", "sparse_categorical_crossentropy"],
              loss_weights=[0.5, 1.0], metrics=[["mae"], ["accuracy"]])
weights = np.linspace(0.5, 1.5, 80).astype("float32")
history = model.fit(x, [y1, y2], sample_weight=weights, batch_size=16, epochs=3, shuffle=False, verbose=0)
# Equal batches: under TensorFlow, Keras averages the per-output losses over batches unweighted
# (the batch size is unknown in its graph), minikeras weights every batch by its size.
report(history, model, evaluate=model.evaluate(x, [y1, y2], batch_size=16, verbose=0))
''',
    "custom_train_step": '''
try:
    GradientTape = keras.GradientTape
except AttributeError:
    import tensorflow as tf
    GradientTape = tf.GradientTape

class Custom(keras.Model):
    def train_step(self, data):
        x, y = data
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}

rng = np.random.default_rng(3)
x = rng.normal(size=(64, 4)).astype("float32")
y = x @ np.array([[1.0], [-1.0], [0.5], [2.0]], "float32")
inputs = keras.Input((4,))
model = Custom(inputs, keras.layers.Dense(1)(keras.layers.Dense(8, activation="relu")(inputs)))
seeded_weights(model)
model.compile(optimizer=keras.optimizers.SGD(0.02), loss="mse", metrics=["mae"])
history = model.fit(x, y, batch_size=16, epochs=4, shuffle=False, verbose=0)
report(history, model)
''',
    "custom_layer_and_metric": '''
class Scaled(keras.layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="glorot_uniform")
        self.b = self.add_weight(shape=(self.units,), initializer="zeros")
        self.calls = self.add_weight(shape=(), initializer="zeros", trainable=False)
    def call(self, inputs):
        self.add_loss(0.01 * keras.ops.mean(keras.ops.square(self.w)))
        return keras.ops.matmul(inputs, self.w) + self.b

class MaxError(keras.metrics.Metric):
    def __init__(self, name="max_error", **kwargs):
        super().__init__(name=name, **kwargs)
        self.worst = self.add_variable(shape=(), initializer="zeros", name="worst")
    def update_state(self, y_true, y_pred, sample_weight=None):
        self.worst.assign(keras.ops.maximum(self.worst, keras.ops.max(keras.ops.abs(y_true - y_pred))))
    def result(self):
        return self.worst

rng = np.random.default_rng(4)
x = rng.normal(size=(64, 5)).astype("float32")
y = x[:, :2] * 2.0
model = keras.Sequential([keras.Input((5,)), Scaled(2)])
seeded_weights(model)
model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=[MaxError()])
history = model.fit(x, y, batch_size=16, epochs=4, shuffle=False, verbose=0)
report(history, model)
''',
    "adam_callbacks": '''
class Recorder(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []
    def _note(self, name, logs):
        self.calls.append([name, sorted(logs) if isinstance(logs, dict) else repr(logs)])
    def on_train_begin(self, logs=None): self._note("train_begin", logs); self.params_seen = dict(self.params)
    def on_epoch_begin(self, epoch, logs=None): self._note("epoch_begin", logs)
    def on_train_batch_end(self, batch, logs=None): self._note("train_batch_end", logs)
    def on_test_begin(self, logs=None): self._note("test_begin", logs)
    def on_test_batch_end(self, batch, logs=None): self._note("test_batch_end", logs)
    def on_test_end(self, logs=None): self._note("test_end", logs)
    def on_epoch_end(self, epoch, logs=None): self._note("epoch_end", logs)
    def on_train_end(self, logs=None): self._note("train_end", logs)

rng = np.random.default_rng(5)
x = rng.normal(size=(48, 4)).astype("float32")
y = (x[:, :1] > 0).astype("float32")
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(6, activation="relu"),
                          keras.layers.BatchNormalization(), keras.layers.Dense(1, activation="sigmoid")])
seeded_weights(model)
recorder = Recorder()
model.compile(optimizer=keras.optimizers.Adam(0.01), loss="binary_crossentropy", metrics=["accuracy", "auc"])
history = model.fit(x, y, batch_size=16, epochs=2, validation_data=(x[:32], y[:32]), shuffle=False, verbose=0,
                    callbacks=[recorder])
report(history, model, calls=recorder.calls, params_seen=recorder.params_seen,
       evaluate=[round(v, 4) for v in model.evaluate(x, y, verbose=0)])
''',
}


def run(python, import_line, name, body, env_extra):
    code = PRELUDE.format(import_line=import_line) + body
    with tempfile.NamedTemporaryFile("w", suffix=f"_{name}.py", delete=False) as handle:
        handle.write(code)
        path = handle.name
    env = dict(os.environ, **env_extra)
    try:
        result = subprocess.run([python, path], capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    finally:
        os.unlink(path)
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    if result.returncode != 0 or not lines:
        return {"error": (result.stderr or result.stdout)[-2000:]}
    return json.loads(lines[-1][len("RESULT "):])


def compare(name, ours, theirs, rtol):
    problems = []
    for side, result in (("minikeras", ours), ("keras", theirs)):
        if "error" in result:
            problems.append(f"{side} failed: {result['error']}")
    if problems:
        return problems
    if ours["history_keys"] != theirs["history_keys"]:
        problems.append(f"History keys differ: minikeras {ours['history_keys']} vs keras {theirs['history_keys']}")
    if ours["params"] != theirs["params"]:
        problems.append(f"summary param counts differ: minikeras {ours['params']} vs keras {theirs['params']}")
    for key in sorted(set(ours) - {"history_keys", "params", "losses"}):
        if key == "evaluate":
            continue  # numbers: compared with the losses' tolerance below
        if ours.get(key) != theirs.get(key):
            problems.append(f"{key} differs: minikeras {ours.get(key)} vs keras {theirs.get(key)}")
    pairs = list(zip(ours["losses"], theirs["losses"]))
    if "evaluate" in ours:
        mine, reference = ours["evaluate"], theirs.get("evaluate")
        pairs += list(zip(mine if isinstance(mine, list) else [mine],
                          reference if isinstance(reference, list) else [reference]))
    for epoch, (mine, reference) in enumerate(pairs):
        if abs(mine - reference) > rtol * max(abs(reference), 1e-8):
            problems.append(f"value {epoch} (losses, then evaluate) differs: minikeras {mine:.6g} vs "
                            f"keras {reference:.6g}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keras-python", default="/work/side/bin/python")
    parser.add_argument("--rtol", type=float, default=1e-3)
    parser.add_argument("--json", help="write the full results here")
    args = parser.parse_args()
    probe = subprocess.run([args.keras_python, "-c", "import keras"], capture_output=True) \
        if os.path.exists(args.keras_python) else None
    if probe is None or probe.returncode != 0:
        print(f"Keras is not importable with {args.keras_python}; nothing compared.")
        return 2
    keras_env = {"TF_CPP_MIN_LOG_LEVEL": "3", "KERAS_BACKEND": "tensorflow", "CUDA_VISIBLE_DEVICES": ""}
    ours_env = {"PYTHONPATH": str(ROOT)}
    results, failures = {}, 0
    for name, body in PROGRAMS.items():
        ours = run(sys.executable, "import minikeras as keras", name, body, ours_env)
        theirs = run(args.keras_python, "import keras", name, body, keras_env)
        problems = compare(name, ours, theirs, args.rtol)
        results[name] = {"minikeras": ours, "keras": theirs, "problems": problems}
        failures += bool(problems)
        status = "MATCH" if not problems else "DIFFER"
        print(f"{name:26s} {status}")
        for problem in problems:
            print(f"    {problem}")
        if not problems:
            print(f"    keys {ours['history_keys']}; params {ours['params']}; "
                  f"final loss {ours['losses'][-1]:.6g} vs {theirs['losses'][-1]:.6g}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=2))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
