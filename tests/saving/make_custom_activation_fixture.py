"""Write Keras 3 files of a model whose activations are user functions (one
registered with register_keras_serializable, one not), for
test_custom_activation_files.py. Run with a Python that has Keras 3:

    KERAS_BACKEND=tensorflow /work/side/bin/python tests/saving/make_custom_activation_fixture.py
"""
import pathlib

import numpy as np

import keras

OUT = pathlib.Path(__file__).parent / "fixtures" / "keras"


@keras.saving.register_keras_serializable(package="my_package", name="custom_fn")
def custom_fn(x):
    return x**2


def plain_fn(x):
    return x * 3.0


def main():
    keras.utils.set_random_seed(0)
    inputs = keras.Input(shape=(3,))
    x = keras.layers.Dense(4, activation=custom_fn)(inputs)
    outputs = keras.layers.Dense(2, activation=plain_fn)(x)
    model = keras.Model(inputs, outputs)
    data = np.random.default_rng(0).normal(size=(5, 3)).astype("float32")
    model.save(OUT / "custom_activation.keras")
    model.save(OUT / "custom_activation.h5")
    np.savez(OUT / "custom_activation.npz", x=data, y=np.asarray(model.predict(data, verbose=0)))


if __name__ == "__main__":
    main()
