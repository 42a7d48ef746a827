"""keras.io "Save, serialize, and export models" (Keras 3), with only the
import changed: ``model.loss`` after load_model, a layer whose build() needs
more than a shape (``get_build_config``/``build_from_config``), a model whose
compile() takes other arguments (``get_compile_config``/``compile_from_config``),
and a layer saving an extra variable (``save_own_variables``)."""
import os
import tempfile

import numpy as np

import minikeras as keras
from minikeras import ops

keras.utils.set_random_seed(0)
folder = tempfile.mkdtemp()


@keras.saving.register_keras_serializable(package="my_package", name="custom_fn")
def custom_fn(y_true, y_pred):
    return ops.mean(ops.square(y_true - y_pred), axis=-1)


inputs = keras.Input((4,))
model = keras.Model(inputs, keras.layers.Dense(1)(inputs))
model.compile(optimizer="rmsprop", loss=custom_fn)
model.save(os.path.join(folder, "custom_model.keras"))
reconstructed = keras.models.load_model(os.path.join(folder, "custom_model.keras"))
assert reconstructed.loss is custom_fn, reconstructed.loss


@keras.saving.register_keras_serializable(package="my_custom_package")
class LayerWithCustomVariable(keras.layers.Dense):
    def __init__(self, units, **kwargs):
        super().__init__(units, **kwargs)
        self.my_variable = keras.Variable(np.random.random((units,)), name="my_variable", dtype="float32")

    def save_own_variables(self, store):
        super().save_own_variables(store)
        store["variables"] = self.my_variable.numpy()

    def load_own_variables(self, store):
        self.my_variable.assign(store["variables"])
        for i, v in enumerate([self.kernel, self.bias]):
            v.assign(store[f"{i}"])

    def call(self, inputs, training=None):
        return super().call(inputs) * self.my_variable


model = keras.Sequential([LayerWithCustomVariable(1)])
x, y = np.random.random((64, 10)), np.random.random((64, 1))
model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mean_squared_error")
history = model.fit(x, y, epochs=10, verbose=0)
assert history.history["loss"][-1] < history.history["loss"][0], history.history["loss"]
model.save(os.path.join(folder, "custom_vars_model.keras"))
restored = keras.models.load_model(os.path.join(folder, "custom_vars_model.keras"))
np.testing.assert_allclose(model.layers[0].my_variable.numpy(), restored.layers[0].my_variable.numpy())
np.testing.assert_allclose(model.predict(x, verbose=0), restored.predict(x, verbose=0), rtol=1e-6)


@keras.saving.register_keras_serializable(package="my_custom_package")
class LayerWithCustomBuild(keras.layers.Layer):
    def __init__(self, units=32, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def call(self, inputs):
        return ops.matmul(inputs, self.w) + self.b

    def get_config(self):
        return dict(units=self.units, **super().get_config())

    def build(self, input_shape, layer_init):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer=layer_init, trainable=True)
        self.b = self.add_weight(shape=(self.units,), initializer=layer_init, trainable=True)
        self.layer_init = layer_init

    def get_build_config(self):
        return {"layer_init": self.layer_init, "input_shape": (None, 4)}

    def build_from_config(self, config):
        self.build(config["input_shape"], config["layer_init"])


layer = LayerWithCustomBuild(units=16)
layer.build(input_shape=(None, 4), layer_init="random_normal")
model = keras.Sequential([layer])
model.save(os.path.join(folder, "custom_build.keras"))
restored = keras.models.load_model(os.path.join(folder, "custom_build.keras"))
assert restored.layers[0].layer_init == "random_normal"
np.testing.assert_allclose(restored.layers[0].w.numpy(), layer.w.numpy())


@keras.saving.register_keras_serializable(package="my_custom_package")
class ModelWithCustomCompile(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense1 = keras.layers.Dense(8, activation="relu")
        self.dense2 = keras.layers.Dense(4, activation="softmax")

    def call(self, inputs):
        return self.dense2(self.dense1(inputs))

    def get_config(self):  # the guide relies on Keras's automatic config of a subclass: not in minikeras
        return {"name": self.name}

    def compile(self, optimizer, loss_fn):
        super().compile(optimizer, loss=loss_fn)
        self.model_optimizer = optimizer
        self.loss_fn = loss_fn

    def get_compile_config(self):
        return {"model_optimizer": keras.saving.serialize_keras_object(self.model_optimizer),
                "loss_fn": keras.saving.serialize_keras_object(self.loss_fn)}

    def compile_from_config(self, config):
        optimizer = keras.utils.deserialize_keras_object(config["model_optimizer"])
        loss_fn = keras.utils.deserialize_keras_object(config["loss_fn"])
        self.compile(optimizer=optimizer, loss_fn=loss_fn)


model = ModelWithCustomCompile()
model.compile(optimizer="SGD", loss_fn="mean_squared_error")
x, y = np.random.random((4, 8)), np.random.random((4, 4))
model.fit(x, y, verbose=0)
model.save(os.path.join(folder, "custom_compile.keras"))
restored = keras.models.load_model(os.path.join(folder, "custom_compile.keras"))
assert restored.loss_fn == "mean_squared_error", restored.loss_fn
restored.fit(x, y, verbose=0)
print("OK")
