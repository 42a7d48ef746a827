"""Truncate or flip bytes of a saved model and classify each load (issue 12).

Outcomes of one trial:

- ``library_error``: a ValueError from minikeras naming the file
  (FileLoadError, or one of its own checks);
- ``raw_error``: any other exception (h5py, JSON, RecursionError, ...);
- ``silent_same``: loaded, and weights, optimizer state and configs equal
  the original's (the damage hit bytes that do not matter);
- ``silent_altered``: loaded, with something different: the bad case.

``python tests/security/corruption_trials.py [--truncations N] [--flips N]
[--seed S]`` prints the counts as JSON (used by
benchmarks/security_issue12.py and tests/security/test_security_corrupt_files.py).
"""
import argparse
import collections
import json
import os
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import numpy  # noqa: E402

import minikeras as mk  # noqa: E402
from minikeras import layers  # noqa: E402


def save_trained_model(path):
    """A compiled Sequential trained one epoch (so the file has Adam's state)."""
    mk.random.seed(7)
    rng = numpy.random.default_rng(7)
    x, y = rng.standard_normal((32, 4)).astype("float32"), rng.standard_normal((32, 2)).astype("float32")
    model = mk.Sequential([layers.Dense(8, activation="relu", input_shape=(4,), name="hidden"),
                           layers.BatchNormalization(name="norm"), layers.Dense(2, name="head")])
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    model.save(path)


def snapshot(model):
    """What a load must reproduce exactly."""
    optimizer = model.optimizer
    return {
        "weights": [numpy.asarray(w) for w in model.get_weights()],
        "state": [numpy.asarray(s) for s in optimizer.get_state()] if optimizer is not None else None,
        "config": json.dumps(model.get_config(), sort_keys=True, default=str),
        "optimizer": json.dumps(optimizer.get_config(), sort_keys=True, default=str) if optimizer else None,
    }


def _same(a, b):
    if a.keys() != b.keys():
        return False
    for key in a:
        left, right = a[key], b[key]
        if isinstance(left, list) or isinstance(right, list):
            if left is None or right is None or len(left) != len(right):
                return False
            if any(x.shape != y.shape or x.dtype != y.dtype or x.tobytes() != y.tobytes()
                   for x, y in zip(left, right)):
                return False
        elif left != right:
            return False
    return True


def classify(path, reference):
    """Load ``path`` and return ``(outcome, detail)``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = mk.models.load_model(path)
    except ValueError as error:
        if str(path) in str(error) or isinstance(error, mk.saving.FileLoadError):
            return "library_error", type(error).__name__
        return "raw_error", f"ValueError without the file name: {error}"
    except Exception as error:  # noqa: BLE001  (classifying is the point)
        return "raw_error", f"{type(error).__name__}: {error}"
    return ("silent_same" if _same(snapshot(model), reference) else "silent_altered"), ""


def run(truncations=60, flips=240, seed=0, folder=None, suffix=".h5"):
    """Counts of outcomes for ``truncations`` truncated copies and ``flips``
    single-byte flips of one saved model (``suffix``: its format); also the
    raw/silent details."""
    folder = folder or tempfile.mkdtemp(prefix="minikeras-corruption-")
    original = os.path.join(folder, f"model{suffix}")
    save_trained_model(original)
    data = open(original, "rb").read()
    reference = snapshot(mk.models.load_model(original))
    rng = numpy.random.default_rng(seed)
    damaged = os.path.join(folder, f"damaged{suffix}")
    results = {"truncation": collections.Counter(), "flip": collections.Counter(), "bad": []}
    for index in range(truncations):
        cut = int(len(data) * index / truncations)
        with open(damaged, "wb") as handle:
            handle.write(data[:cut])
        outcome, detail = classify(damaged, reference)
        results["truncation"][outcome] += 1
        if outcome in ("raw_error", "silent_altered"):
            results["bad"].append(("truncation", cut, outcome, detail))
    for _ in range(flips):
        position, mask = int(rng.integers(len(data))), int(rng.integers(1, 256))
        changed = bytearray(data)
        changed[position] ^= mask
        with open(damaged, "wb") as handle:
            handle.write(changed)
        outcome, detail = classify(damaged, reference)
        results["flip"][outcome] += 1
        if outcome in ("raw_error", "silent_altered"):
            results["bad"].append(("flip", position, outcome, detail))
    return {"file_bytes": len(data), "truncations": dict(results["truncation"]), "flips": dict(results["flip"]),
            "bad": results["bad"]}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--truncations", type=int, default=60)
    parser.add_argument("--flips", type=int, default=240)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--suffix", default=".h5", choices=[".h5", ".keras"])
    arguments = parser.parse_args()
    print(json.dumps(run(arguments.truncations, arguments.flips, arguments.seed, suffix=arguments.suffix)))
