"""Epoch time of MirroredModel on two logical CPU devices against one device.

Same model, same data, same batches (shuffle off): the MNIST CNN
(Conv2D(32,3)-MaxPool-Conv2D(64,3)-MaxPool-Flatten-Dense(128)-Dense(10)) and
an MLP (784-512-512-10), batch 128, Adam, on synthetic MNIST-shaped data.
Each measurement runs in its own process (OpenBLAS reads its thread count
once, at load), with ``OPENBLAS_NUM_THREADS`` 1 and 2: one BLAS thread per
replica avoids four busy threads on two cores. The configurations are
interleaved round by round so that they all see the same load from the
other users of the machine; each time is the minimum over rounds and over
the epochs of a round. The load average is recorded with the results.

    python benchmarks/bench_mirrored.py                  # table + benchmarks/results/bench_mirrored.json
    python benchmarks/bench_mirrored.py --rounds 5 --samples 2048 --models cnn
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _build(name):
    import minikeras as mk
    from minikeras import layers

    mk.random.seed(0)
    if name == "cnn":
        return mk.Sequential([
            layers.Input((28, 28, 1)), layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(),
            layers.Conv2D(64, 3, activation="relu"), layers.MaxPooling2D(), layers.Flatten(),
            layers.Dense(128, activation="relu"), layers.Dense(10)])
    return mk.Sequential([layers.Input((784,)), layers.Dense(512, activation="relu"),
                          layers.Dense(512, activation="relu"), layers.Dense(10)])


def worker(model_name, setup, samples, epochs, batch):
    """One process: the best epoch time of ``epochs`` epochs (after a warm-up one)."""
    import numpy

    import minikeras as mk
    from minikeras import config

    cpu = config.list_physical_devices("CPU")[0]
    config.set_logical_device_configuration(cpu, [config.LogicalDeviceConfiguration()] * 2)
    rng = numpy.random.default_rng(0)
    shape = (28, 28, 1) if model_name == "cnn" else (784,)
    x = rng.random((samples,) + shape, dtype=numpy.float32)
    y = rng.integers(0, 10, samples)
    model = _build(model_name)
    trainer = mk.MirroredModel(model, devices=["cpu:0", "cpu:1"]) if setup == "mirrored x2" else model
    trainer.compile(mk.optimizers.Adam(), mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    trainer.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0)
    best = float("inf")
    for _ in range(epochs):
        start = time.perf_counter()
        trainer.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0)
        best = min(best, time.perf_counter() - start)
    return best


def _run_worker(model_name, setup, threads, args):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = [sys.executable, os.path.abspath(__file__), "--worker", model_name, setup,
               "--samples", str(args.samples), "--epochs", str(args.epochs), "--batch", str(args.batch)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])["seconds"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", nargs=2, metavar=("MODEL", "SETUP"), help=argparse.SUPPRESS)
    parser.add_argument("--models", nargs="+", default=["cnn", "mlp"], choices=["cnn", "mlp"])
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2], help="OPENBLAS_NUM_THREADS values")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=2, help="timed epochs per round (after one warm-up)")
    parser.add_argument("--samples", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    if args.worker:
        seconds = worker(args.worker[0], args.worker[1].replace("_", " "), args.samples, args.epochs, args.batch)
        print(json.dumps({"seconds": seconds}))
        return None

    from benchmarks._report import report

    setups = ["one device", "mirrored x2"]
    configs = [(m, s, t) for m in args.models for t in args.threads for s in setups]
    best = {config: float("inf") for config in configs}
    loads = []
    for round_index in range(args.rounds):
        for config in configs:
            loads.append(os.getloadavg()[0])
            seconds = _run_worker(config[0], config[1].replace(" ", "_"), config[2], args)
            best[config] = min(best[config], seconds)
        print(f"round {round_index + 1}/{args.rounds} done, load {os.getloadavg()[0]:.2f}", file=sys.stderr)
    rows = []
    for model_name in args.models:
        for threads in args.threads:
            single, mirrored = best[(model_name, "one device", threads)], best[(model_name, "mirrored x2", threads)]
            rows.append({"model": model_name, "blas_threads": threads, "one_device_s": single,
                         "mirrored_x2_s": mirrored, "mirrored/one": mirrored / single})
        fastest_single = min(best[(model_name, "one device", t)] for t in args.threads)
        fastest_mirrored = min(best[(model_name, "mirrored x2", t)] for t in args.threads)
        rows.append({"model": model_name, "blas_threads": "best of each", "one_device_s": fastest_single,
                     "mirrored_x2_s": fastest_mirrored, "mirrored/one": fastest_mirrored / fastest_single})
    print(f"Epoch time, {args.samples} samples, batch {args.batch}, Adam; min over {args.rounds} rounds x "
          f"{args.epochs} epochs; load average during the runs {min(loads):.2f}-{max(loads):.2f} "
          f"on {os.cpu_count()} CPUs\n")
    extra = {"load_average_during_runs": {"min": min(loads), "max": max(loads)},
             "samples": args.samples, "batch": args.batch, "rounds": args.rounds, "epochs": args.epochs,
             "target": "mirrored x2 no slower than 1.2 x one device on this 2-core machine"}
    return report("bench_mirrored", rows, ["model", "blas_threads", "one_device_s", "mirrored_x2_s", "mirrored/one"],
                  extra=extra, path=args.json)


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    main()
