"""Writes minikeras's own (pre-Keras-3-formats) HDF5 files, kept so that they keep loading.

Run once, with the code of commit 86df7c7 (before the .keras/.weights.h5 work):
    git archive 86df7c7 minikeras | tar -x -C /tmp/base
    PYTHONPATH=/tmp/base python tests/saving/make_minikeras_v1_fixtures.py
It writes, in tests/saving/fixtures/:
    minikeras_v1_model.h5        model.save() of a trained, compiled Sequential model
    minikeras_v1_functional.h5   model.save() of a two-input functional model
    minikeras_v1.weights.h5      model.save_weights() of the Sequential model
    minikeras_v1_outputs.npz     the input and both models' outputs on it
"""
import os

import numpy

import minikeras as mk
from minikeras import layers

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def main():
    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(6, 4)).astype("float32")
    y = rng.normal(size=(6, 1)).astype("float32")
    model = mk.Sequential([
        layers.Dense(8, activation="relu", input_shape=(4,), name="hidden"),
        layers.BatchNormalization(name="norm"),
        layers.Dense(1, name="head"),
    ])
    model.compile(optimizer=mk.optimizers.Adam(learning_rate=0.01), loss="mse", metrics=["mae"])
    model.fit(x, y, epochs=2, batch_size=3, verbose=0)
    model.save(os.path.join(HERE, "minikeras_v1_model.h5"))
    model.save_weights(os.path.join(HERE, "minikeras_v1.weights.h5"))

    a = mk.Input((4,), name="a")
    b = mk.Input((3,), name="b")
    merged = layers.Concatenate(name="merge")([layers.Dense(5, activation="tanh", name="left")(a),
                                               layers.Dense(2, name="right")(b)])
    functional = mk.Model([a, b], layers.Dense(1, name="out")(merged), name="two_inputs")
    xb = rng.normal(size=(6, 3)).astype("float32")
    functional.save(os.path.join(HERE, "minikeras_v1_functional.h5"))
    numpy.savez(os.path.join(HERE, "minikeras_v1_outputs.npz"), x=x, xb=xb,
                sequential=model.predict(x, verbose=0), functional=functional.predict([x, xb], verbose=0),
                iterations=numpy.asarray(model.optimizer.iterations))


if __name__ == "__main__":
    main()
