"""Functional models with dict inputs (by Input name) and dict outputs,
trained with a loss, loss_weights and metrics per output name and y as a dict."""
import numpy as np

import minikeras as keras
from minikeras import layers

rng = np.random.default_rng(3)
n = 256
features = {"numbers": rng.normal(size=(n, 4)).astype("float32"),
            "extra": rng.normal(size=(n, 2)).astype("float32")}
targets = {"total": features["numbers"].sum(axis=1, keepdims=True) + features["extra"][:, :1],
           "sign": (features["extra"][:, 1] > 0).astype("int32")}

numbers = keras.Input(shape=(4,), name="numbers")
extra = keras.Input(shape=(2,), name="extra")
joined = layers.Concatenate()([numbers, extra])
hidden = layers.Dense(16, activation="relu")(joined)
outputs = {"total": layers.Dense(1, name="total_head")(hidden),
           "sign": layers.Dense(2, activation="softmax", name="sign_head")(hidden)}
model = keras.Model(inputs={"numbers": numbers, "extra": extra}, outputs=outputs)
model.compile(optimizer=keras.optimizers.Adam(0.01),
              loss={"total": "mse", "sign": "sparse_categorical_crossentropy"},
              loss_weights={"total": 1.0, "sign": 0.5},
              metrics={"sign": ["accuracy"]})
history = model.fit(features, targets, batch_size=32, epochs=12, validation_split=0.25, verbose=0)
keys = list(history.history)
assert keys == sorted(k for k in keys if not k.startswith("val_")) + sorted(k for k in keys if k.startswith("val_"))
for expected in ("loss", "total_loss", "sign_loss", "sign_accuracy", "val_loss", "val_sign_accuracy"):
    assert expected in keys, keys
assert history.history["total_loss"][-1] < 0.2 * history.history["total_loss"][0], history.history["total_loss"]
assert history.history["sign_accuracy"][-1] > 0.85, history.history["sign_accuracy"]

predictions = model.predict(features, verbose=0)
assert isinstance(predictions, dict) and predictions["total"].shape == (n, 1) and predictions["sign"].shape == (n, 2)
results = model.evaluate(features, targets, verbose=0, return_dict=True)
assert abs(results["loss"] - (results["total_loss"] + 0.5 * results["sign_loss"])) < 1e-3, results

# Missing an output's target is a clear error, not a traceback from deep inside.
try:
    model.fit(features, {"sign": targets["sign"]}, epochs=1, verbose=0)
except ValueError as error:
    assert "total" in str(error), error
else:
    raise AssertionError("a missing target must fail")
print("OK")
