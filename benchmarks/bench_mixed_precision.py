"""Time and peak memory of the three anchor models under float32,
mixed_float16 and mixed_bfloat16, on the CPU.

The models are anchors.py's (MLP and CNN on 28x28 Fashion-MNIST shapes, the
CIFAR-10 CNN), built with minikeras through the same function anchors.py
uses for Keras, trained with Adam on random data of the datasets' shapes
(the time and memory of a step do not depend on the values) at batch 128.
Each run: 2 warm-up steps, then ``--steps`` timed train_on_batch steps
(median reported) and the device's peak bytes over one step
(``config.get_memory_info``: tensors, arrays kept for backward, gradients,
optimizer state; not the temporaries inside one op).

What to expect on a CPU: no speed-up. NumPy has no 16-bit BLAS, so
minikeras runs 16-bit matmuls and convolutions as float32 BLAS calls with
casts around them (see autograd/function.py, in_float32), and every cast and 16-bit
elementwise op (bfloat16 ones through ml_dtypes' loops) costs extra time.
What shrinks is the memory of the activations kept for backward.

    python benchmarks/bench_mixed_precision.py                 # table + results/bench_mixed_precision.json
    python benchmarks/bench_mixed_precision.py --steps 3 --models mlp
"""
import argparse
import os
import sys
import time

import numpy

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import minikeras as mk  # noqa: E402
from _report import report  # noqa: E402
from anchors import _tf_model  # noqa: E402  (the anchor architectures, written against the Keras API)

POLICIES = ("float32", "mixed_float16", "mixed_bfloat16")
SHAPES = {"mlp": (784,), "cnn": (28, 28, 1), "cifar_cnn": (32, 32, 3)}


def run(model_name, policy, steps, batch):
    """Median step time (s) and peak bytes of one model under one policy."""
    mk.mixed_precision.set_global_policy(policy)
    try:
        mk.random.seed(0)
        model = _tf_model(model_name, mk)
        model.compile(optimizer=mk.optimizers.Adam(1e-3),
                      loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
        rng = numpy.random.default_rng(0)
        x = rng.random((batch,) + SHAPES[model_name], dtype=numpy.float32)
        y = rng.integers(0, 10, size=batch)
        for _ in range(2):
            model.train_on_batch(x, y)
        device = "cpu:0"
        mk.config.reset_memory_stats(device)
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            loss = model.train_on_batch(x, y)
            times.append(time.perf_counter() - start)
        peak = mk.config.get_memory_info(device)["peak"]
        return {"model": model_name, "policy": policy, "step_ms": 1e3 * float(numpy.median(times)),
                "peak_mb": peak / 2 ** 20, "loss": float(loss), "optimizer": type(model.optimizer).__name__}
    finally:
        mk.mixed_precision.set_global_policy("float32")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--models", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    args = parser.parse_args()
    rows = [run(model, policy, args.steps, args.batch) for model in args.models for policy in POLICIES]
    for row in rows:
        base = next(r for r in rows if r["model"] == row["model"] and r["policy"] == "float32")
        row["time_vs_float32"] = row["step_ms"] / base["step_ms"]
        row["memory_vs_float32"] = row["peak_mb"] / base["peak_mb"]
    report("bench_mixed_precision", rows, ["model", "policy", "optimizer", "step_ms", "time_vs_float32", "peak_mb",
                                           "memory_vs_float32", "loss"],
           extra={"steps": args.steps, "batch": args.batch})


if __name__ == "__main__":
    main()
