"""A tiny end-to-end demo: fit a small MLP on a synthetic task."""
import time

import numpy

import minikeras as mk
from minikeras import layers


def main():
    mk.random.seed(0)
    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(2000, 20)).astype("float32")
    y = (x[:, :10].sum(axis=1) > x[:, 10:].sum(axis=1)).astype("int64")
    model = mk.Sequential([
        layers.Dense(64, activation="relu", input_shape=(20,)),
        layers.Dense(2, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.summary()
    start = time.perf_counter()
    model.fit(x[:1500], y[:1500], batch_size=64, epochs=5, verbose=2)
    loss, accuracy = model.evaluate(x[1500:], y[1500:], verbose=0)
    print(f"test accuracy: {accuracy:.4f}  ({time.perf_counter() - start:.1f}s)")


if __name__ == "__main__":
    main()
