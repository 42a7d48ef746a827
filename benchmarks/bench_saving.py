"""Save and load time and file size of each format, for the README's MLP (784-512-256-10, Adam).

Formats: ``.keras`` (Keras 3 zip), ``.h5`` (tf.keras HDF5), ``.weights.h5``
(Keras 3 weights layout, with the optimizer state). The model has 535k
weights and twice as many Adam slots, so each file holds ~6.4 MB of arrays.
Best of 5, in a temporary folder (the page cache makes these memory-speed
numbers, not disk-speed ones).

Usage: PYTHONPATH=. python benchmarks/bench_saving.py [--json PATH]
"""
import argparse
import os
import sys
import tempfile

import numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minikeras as mk  # noqa: E402
from _report import best_of, report  # noqa: E402


def build():
    model = mk.Sequential([mk.Input((784,)), mk.layers.Dense(512, activation="relu"),
                           mk.layers.Dense(256, activation="relu"), mk.layers.Dense(10, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    rng = numpy.random.default_rng(0)
    model.train_on_batch(rng.normal(size=(32, 784)).astype("float32"), rng.integers(0, 10, 32))
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    arguments = parser.parse_args()
    model = build()
    folder = tempfile.mkdtemp()
    rows = []
    for suffix in (".keras", ".h5", ".weights.h5"):
        path = os.path.join(folder, f"model{suffix}")
        if suffix == ".weights.h5":
            save = lambda: model.save_weights(path)  # noqa: E731
            load = lambda: model.load_weights(path)  # noqa: E731
        else:
            save = lambda: model.save(path)  # noqa: E731
            load = lambda: mk.models.load_model(path)  # noqa: E731
        save_s = best_of(save)
        load_s = best_of(load)
        rows.append({"format": suffix, "save_ms": round(save_s * 1e3, 1), "load_ms": round(load_s * 1e3, 1),
                     "size_MB": round(os.path.getsize(path) / 1e6, 2)})
    report("bench_saving", rows, ["format", "save_ms", "load_ms", "size_MB"],
           extra={"weights": int(sum(w.size for w in model.weights))}, path=arguments.json)


if __name__ == "__main__":
    main()
