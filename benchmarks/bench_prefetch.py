"""Host time per fit() step with and without the batch prefetch (models/prefetch.py).

On a GPU (or the simulated one: ``MINIKERAS_SIMULATED_GPU=1``) fit uploads
each batch's inputs through pinned buffers on a copy stream, one batch
ahead; ``prefetch.enabled = False`` takes the plain upload. One process,
the same model and data, epochs with and without taken in turn (the first
of each pair alternating) for ``--rounds`` rounds; prints the median
process CPU time and wall time per step of each. On the CPU both paths
are the same code (the prefetch is not engaged), which the numbers show.

    MINIKERAS_SIMULATED_GPU=1 python benchmarks/bench_prefetch.py --model tiny
    python benchmarks/bench_prefetch.py --model tiny cnn --device gpu:0 --json out.json  # the GPU session's step

The last line sums up every model (``prefetch: tiny off ... / on ... ms wall
per step; ...``): benchmarks/gpu_session.py shows it in its summary.
"""
import argparse
import contextlib
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy  # noqa: E402

import minikeras as mk  # noqa: E402
from minikeras import layers  # noqa: E402
from minikeras.device import registry  # noqa: E402
from minikeras.models import prefetch  # noqa: E402


def _model(name):
    if name == "tiny":  # a step that is almost all Python
        return mk.Sequential([layers.Input((8,)), layers.Dense(4, activation="relu"),
                              layers.Dense(4, activation="relu"), layers.Dense(3)]), (8,)
    if name == "mlp":
        return mk.Sequential([layers.Input((784,)), layers.Dense(256, activation="relu"),
                              layers.Dense(256, activation="relu"), layers.Dense(10)]), (784,)
    return mk.Sequential([layers.Input((32, 32, 3)), layers.Conv2D(16, 3, activation="relu"), layers.MaxPooling2D(),
                          layers.Conv2D(32, 3, activation="relu"), layers.GlobalAveragePooling2D(),
                          layers.Dense(10)]), (32, 32, 3)


def measure(name, batch, steps, rounds):
    """Median CPU and wall time per step (ms), ``{enabled: (cpu, wall)}``, of
    ``name`` trained on the current default device, prefetch on and off in turn."""
    mk.random.seed(0)
    model, shape = _model(name)
    model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(batch * steps,) + shape).astype("float32")
    y = rng.integers(0, 3 if name == "tiny" else 10, size=len(x))
    model.fit(x[:batch * 2], y[:batch * 2], batch_size=batch, verbose=0)  # warm-up
    times = {True: [], False: []}
    try:
        for round_ in range(rounds):
            for enabled in ((True, False) if round_ % 2 == 0 else (False, True)):
                prefetch.enabled = enabled
                cpu, wall = time.process_time(), time.perf_counter()
                model.fit(x, y, batch_size=batch, epochs=1, verbose=0)
                registry.default_device().synchronize()
                times[enabled].append(((time.process_time() - cpu) / steps, (time.perf_counter() - wall) / steps))
    finally:
        prefetch.enabled = True
    return {enabled: (statistics.median(t[0] for t in times[enabled]) * 1e3,
                      statistics.median(t[1] for t in times[enabled]) * 1e3) for enabled in times}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", nargs="+", choices=("tiny", "mlp", "cnn"), default=["tiny"])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=40, help="steps per epoch")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--device", default=None, help="e.g. gpu:0 (default: the default device)")
    parser.add_argument("--json", default=None, help="also write the medians here")
    args = parser.parse_args(argv)
    if args.device and args.device.startswith("gpu") and \
            os.environ.get("MINIKERAS_SIMULATED_GPU", "").strip() in ("", "0"):
        from minikeras import backend

        if not backend.gpu_available():
            print(f"bench_prefetch: no GPU here ({backend.gpu_unavailable_reason()}); nothing to time.")
            return
    rows = []
    with mk.device(args.device) if args.device else contextlib.nullcontext():
        device = registry.default_device()
        for name in args.model:
            medians = measure(name, args.batch, args.steps, args.rounds)
            print(f"{name}, batch {args.batch}, {args.steps} steps an epoch, {args.rounds} rounds, "
                  f"on {device.canonical}", flush=True)
            for enabled in (False, True):
                cpu, wall = medians[enabled]
                print(f"  prefetch {'on ' if enabled else 'off'}: {cpu:.3f} ms CPU, {wall:.3f} ms wall per step")
                rows.append(dict(model=name, batch=args.batch, steps=args.steps, rounds=args.rounds,
                                 device=device.canonical, prefetch=enabled, cpu_ms=cpu, wall_ms=wall))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"benchmark": "bench_prefetch", "rows": rows}, handle, indent=1)
    walls = {(row["model"], row["prefetch"]): row["wall_ms"] for row in rows}
    print("prefetch: " + "; ".join(f"{name} off {walls[name, False]:.3f} / on {walls[name, True]:.3f} ms wall per step"
                                   for name in args.model))


if __name__ == "__main__":
    main()
