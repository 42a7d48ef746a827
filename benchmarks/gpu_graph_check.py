"""jit_compile=True (one CUDA graph per training step) against the eager step, on a real GPU.

For the three models of benchmarks/anchors.py (MLP, Fashion CNN, CIFAR CNN),
trains twice from the same seed on the same synthetic data, eagerly and with
``compile(jit_compile=True)``, with Adam and a decaying learning-rate
schedule over two epochs whose last batch is partial (so the schedule, the
device-side step scalars and the partial batch's own graph are all
exercised), and reports:

- the largest weight difference between the two runs (float32 rounding is
  expected at most; the strict simulated GPU gives identical bits);
- graph launches, and whether the step fell back to eager (with why);
- the median time of one synchronised training step, eager and graphed,
  batch 128 (the steps of the second epoch, a progress callback syncing).

About 30 s on an H100/H200. Prints a table and writes JSON (``--json``).

    python benchmarks/gpu_graph_check.py --json /tmp/graph_check.json
    python benchmarks/gpu_graph_check.py --models mlp --steps 10
"""
import argparse
import json
import os
import statistics
import sys
import time
import warnings

os.environ.setdefault("CUPY_TF32", "0")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

BATCH = 128
MODELS = ("mlp", "cnn", "cifar_cnn")
SAMPLE_SHAPES = {"mlp": (784,), "cnn": (28, 28, 1), "cifar_cnn": (32, 32, 3)}


class StepTimer:
    """Wall time of each training step, the device synchronised at its end."""

    def __init__(self, device):
        import minikeras as mk

        class _Timer(mk.callbacks.Callback):
            def on_train_batch_begin(inner, batch, logs=None):
                inner.start = time.perf_counter()

            def on_train_batch_end(inner, batch, logs=None):
                device.synchronize()
                self.times.append(time.perf_counter() - inner.start)

        self.times = []
        self.callback = _Timer()


def train(model_name, x, y, jit_compile, device_name):
    import minikeras as mk
    from compare import _minikeras_model

    mk.random.seed(0)
    with mk.device(device_name), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = _minikeras_model(model_name)
        schedule = mk.optimizers.schedules.ExponentialDecay(1e-3, decay_steps=5, decay_rate=0.9)
        model.compile(optimizer=mk.optimizers.Adam(schedule),
                      loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"],
                      jit_compile=jit_compile)
        device = model.weights[0].device
        device.stats.reset()
        model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)  # warm-up and capture
        timer = StepTimer(device)
        history = model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0, callbacks=[timer.callback])
        full_steps = timer.times[:len(x) // BATCH]
        captured = getattr(model, "_captured_step", None)
    return dict(
        weights=model.get_weights(), loss=history.history["loss"][-1],
        median_step_ms=1e3 * statistics.median(full_steps[1:] or full_steps),
        graph_launches=device.stats.graph_launches,
        fallback=(captured.refusal or None) if captured is not None else None,
        warnings=[str(w.message) for w in caught if "jit_compile" in str(w.message)],
    )


def check(model_name, steps, device_name):
    rng = np.random.default_rng(0)
    count = steps * BATCH + BATCH // 2  # a partial last batch
    x = rng.random((count,) + SAMPLE_SHAPES[model_name], dtype=np.float32)
    y = rng.integers(0, 10, size=count).astype(np.int64)
    eager = train(model_name, x, y, False, device_name)
    graphed = train(model_name, x, y, True, device_name)
    difference = max(float(np.abs(a - b).max()) for a, b in zip(eager["weights"], graphed["weights"]))
    scale = max(float(np.abs(a).max()) for a in eager["weights"])
    return dict(model=model_name, steps_per_epoch=steps + 1, max_weight_difference=difference,
                relative_difference=difference / scale, eager_loss=eager["loss"], jit_loss=graphed["loss"],
                eager_step_ms=eager["median_step_ms"], jit_step_ms=graphed["median_step_ms"],
                speedup=eager["median_step_ms"] / graphed["median_step_ms"],
                graph_launches=graphed["graph_launches"], fallback=graphed["fallback"],
                warnings=graphed["warnings"])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--steps", type=int, default=30, help="full batches per epoch (default 30)")
    parser.add_argument("--device", default="gpu:0")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    import minikeras as mk

    if args.device.startswith("gpu") and not mk.config.list_physical_devices("GPU"):
        from minikeras import backend

        print(f"No GPU here ({backend.gpu_unavailable_reason()}); nothing to check.")
        return 0
    rows = [check(name, args.steps, args.device) for name in args.models]
    print(f"{'model':10} {'eager ms':>9} {'jit ms':>8} {'speedup':>8} {'graphs':>7} {'max |dw|':>10} {'rel':>9}  fallback")
    for row in rows:
        print(f"{row['model']:10} {row['eager_step_ms']:9.3f} {row['jit_step_ms']:8.3f} {row['speedup']:8.2f} "
              f"{row['graph_launches']:7d} {row['max_weight_difference']:10.2e} {row['relative_difference']:9.2e}  "
              f"{row['fallback'] or '-'}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"device": args.device, "batch": BATCH, "rows": rows}, handle, indent=1)
    bad = [row["model"] for row in rows if row["fallback"] or row["relative_difference"] > 1e-4]
    if bad:
        print(f"NOT OK: {bad} fell back or disagree with eager.")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
