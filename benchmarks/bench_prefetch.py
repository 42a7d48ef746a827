"""Host time per fit() step with and without the batch prefetch (models/prefetch.py).

On a GPU (or the simulated one: ``MINIKERAS_SIMULATED_GPU=1``) fit uploads
each batch's inputs through pinned buffers on a copy stream, one batch
ahead; ``prefetch.enabled = False`` takes the plain upload. One process,
the same model and data, epochs with and without taken in turn (the first
of each pair alternating) for ``--rounds`` rounds; prints the median
process CPU time and wall time per step of each. On the CPU both paths
are the same code (the prefetch is not engaged), which the numbers show.

    MINIKERAS_SIMULATED_GPU=1 python benchmarks/bench_prefetch.py --model tiny
"""
import argparse
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


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=("tiny", "mlp", "cnn"), default="tiny")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=40, help="steps per epoch")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    mk.random.seed(0)
    model, shape = _model(args.model)
    model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(args.batch * args.steps,) + shape).astype("float32")
    y = rng.integers(0, 3 if args.model == "tiny" else 10, size=len(x))
    model.fit(x[:args.batch * 2], y[:args.batch * 2], batch_size=args.batch, verbose=0)  # warm-up
    times = {True: [], False: []}
    for round_ in range(args.rounds):
        for enabled in ((True, False) if round_ % 2 == 0 else (False, True)):
            prefetch.enabled = enabled
            cpu, wall = time.process_time(), time.perf_counter()
            model.fit(x, y, batch_size=args.batch, epochs=1, verbose=0)
            registry.default_device().synchronize()
            times[enabled].append(((time.process_time() - cpu) / args.steps, (time.perf_counter() - wall) / args.steps))
    device = registry.default_device()
    print(f"{args.model}, batch {args.batch}, {args.steps} steps an epoch, {args.rounds} rounds, on {device.canonical}")
    for enabled in (False, True):
        cpu = statistics.median(t[0] for t in times[enabled]) * 1e3
        wall = statistics.median(t[1] for t in times[enabled]) * 1e3
        print(f"  prefetch {'on ' if enabled else 'off'}: {cpu:.3f} ms CPU, {wall:.3f} ms wall per step")


if __name__ == "__main__":
    main()
