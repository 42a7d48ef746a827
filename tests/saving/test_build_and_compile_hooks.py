"""A user's ``get_build_config``/``build_from_config`` and
``get_compile_config``/``compile_from_config`` are what ``.keras`` saves and
loads, as in Keras 3 (keras.io's "Save, serialize, and export models" guide:
a layer whose ``build`` needs an initializer name, a model whose
``compile()`` takes other arguments)."""
import json
import zipfile

import numpy as np

import minikeras as mk
from minikeras import ops


@mk.saving.register_keras_serializable(package="hooks_test")
class BuiltWithInitializer(mk.layers.Layer):
    def __init__(self, units=4, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape, layer_init):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer=layer_init)
        self.layer_init = layer_init

    def call(self, inputs):
        return ops.matmul(inputs, self.w)

    def get_config(self):
        return dict(units=self.units, **super().get_config())

    def get_build_config(self):
        return {"layer_init": self.layer_init, "input_shape": (None, 3)}

    def build_from_config(self, config):
        self.build(config["input_shape"], config["layer_init"])


@mk.saving.register_keras_serializable(package="hooks_test")
class CompiledWithLossFn(mk.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = mk.layers.Dense(2)

    def call(self, inputs):
        return self.dense(inputs)

    def get_config(self):
        return {"name": self.name}

    def compile(self, optimizer, loss_fn):
        super().compile(optimizer, loss=loss_fn)
        self.loss_fn = loss_fn

    def get_compile_config(self):
        return {"model_optimizer": mk.saving.serialize_keras_object(self.optimizer), "loss_fn": self.loss_fn}

    def compile_from_config(self, config):
        self.compile(mk.saving.deserialize_keras_object(config["model_optimizer"]), config["loss_fn"])


def test_a_layer_built_from_its_own_build_config(tmp_path):
    layer = BuiltWithInitializer(units=4)
    layer.build((None, 3), "ones")
    model = mk.Sequential([layer])
    model.save(tmp_path / "model.keras")
    with zipfile.ZipFile(tmp_path / "model.keras") as archive:
        saved = json.loads(archive.read("config.json"))["config"]["layers"][0]
    assert saved["build_config"] == {"layer_init": "ones", "input_shape": [None, 3]}
    loaded = mk.models.load_model(tmp_path / "model.keras")
    assert loaded.layers[0].layer_init == "ones"
    np.testing.assert_array_equal(loaded.layers[0].w.numpy(), np.ones((3, 4)))


def test_a_model_compiled_from_its_own_compile_config(tmp_path):
    model = CompiledWithLossFn()
    model.compile(optimizer=mk.optimizers.SGD(0.05), loss_fn="mean_squared_error")
    model.fit(np.ones((4, 3), "float32"), np.ones((4, 2), "float32"), verbose=0)
    model.save(tmp_path / "model.keras")
    with zipfile.ZipFile(tmp_path / "model.keras") as archive:
        saved = json.loads(archive.read("config.json"))["compile_config"]
    assert set(saved) == {"model_optimizer", "loss_fn"}
    loaded = mk.models.load_model(tmp_path / "model.keras")
    assert loaded.loss_fn == "mean_squared_error"
    assert isinstance(loaded.optimizer, mk.optimizers.SGD)
    assert abs(float(np.asarray(loaded.optimizer.learning_rate)) - 0.05) < 1e-7


def test_a_plain_layer_build_config_is_its_build_shape():
    layer = mk.layers.Dense(2)
    assert layer.get_build_config() is None
    layer(np.ones((1, 3), "float32"))
    assert layer.get_build_config() == {"input_shape": (None, 3)}
    fresh = mk.layers.Dense(2)
    fresh.build_from_config(layer.get_build_config())
    assert fresh.built and fresh.kernel.shape == (3, 2)
