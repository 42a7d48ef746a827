"""keras.io "Save, serialize, and export models" (custom functions), with
only the import changed: a function registered with
register_keras_serializable used as a layer's activation= survives
model.save/load_model with and without custom_objects, in .keras and .h5
(files Keras 3 wrote: tests/saving/test_custom_activation_files.py)."""
import os
import tempfile

import numpy as np

import minikeras as keras


@keras.saving.register_keras_serializable(package="my_package", name="custom_fn")
def custom_fn(x):
    return x**2


def plain_fn(x):  # not registered: loadable through custom_objects only
    return x * 3.0


inputs = keras.Input(shape=(3,))
x = keras.layers.Dense(4, activation=custom_fn)(inputs)
outputs = keras.layers.Dense(2, activation=plain_fn)(x)
model = keras.Model(inputs, outputs)
data = np.random.default_rng(0).normal(size=(5, 3)).astype("float32")
expected = np.asarray(model.predict(data, verbose=0))
print("config:", model.layers[1].get_config()["activation"])

folder = tempfile.mkdtemp()
for suffix in ("keras", "h5"):
    path = os.path.join(folder, f"custom_activation.{suffix}")
    model.save(path)
    loaded = keras.models.load_model(path, custom_objects={"plain_fn": plain_fn})
    np.testing.assert_allclose(np.asarray(loaded.predict(data, verbose=0)), expected, rtol=1e-6)
    loaded = keras.models.load_model(path, custom_objects={"custom_fn": custom_fn, "plain_fn": plain_fn})
    np.testing.assert_allclose(np.asarray(loaded.predict(data, verbose=0)), expected, rtol=1e-6)
    try:
        keras.models.load_model(path)
    except Exception as error:  # plain_fn is unknown without custom_objects
        assert "plain_fn" in str(error), error
    else:
        raise AssertionError("an unregistered function loaded without custom_objects")
print("OK")
