"""What compile() leaves on the model, as Keras 3's Trainer leaves it
(keras.io's serialization guide prints ``model.loss`` after load_model)."""
import numpy as np

import minikeras as mk


def _model():
    inputs = mk.Input(shape=(4,))
    return mk.Model(inputs, mk.layers.Dense(1)(inputs))


def squared(y_true, y_pred):
    return mk.ops.mean(mk.ops.square(y_true - y_pred), axis=-1)


def test_loss_is_none_before_compile_and_what_compile_was_given_after():
    model = _model()
    assert model.loss is None
    model.compile(optimizer="sgd", loss="mse")
    assert model.loss == "mse"
    loss = mk.losses.Huber()
    model.compile(optimizer="sgd", loss=loss)
    assert model.loss is loss


def test_compile_without_a_loss_keeps_the_previous_one():
    model = _model()
    model.compile(optimizer="sgd", loss="mae")
    model.compile(optimizer="adam")
    assert model.loss == "mae"


def test_a_loaded_model_has_its_compiled_loss(tmp_path):
    mk.saving.register_keras_serializable(package="compile_attributes")(squared)
    model = _model()
    model.compile(optimizer="rmsprop", loss=squared)
    model.fit(np.ones((4, 4), "float32"), np.ones((4, 1), "float32"), verbose=0)
    model.save(tmp_path / "model.keras")
    loaded = mk.models.load_model(tmp_path / "model.keras")
    assert loaded.loss is squared
