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
Besides the epoch's wall time, each row has the process's CPU time per epoch
(user + system, all threads: what a loaded machine disturbs least) and the
10th percentile of the step times (a step that ran undisturbed), both
minima over rounds. ``--tree NAME=PATH`` (repeatable) times other checkouts
in the same rounds, each worker importing minikeras from its tree.

    python benchmarks/bench_mirrored.py                  # table + benchmarks/results/bench_mirrored.json
    python benchmarks/bench_mirrored.py --rounds 5 --samples 2048 --models cnn
    python benchmarks/bench_mirrored.py --models mlp --threads 1 --tree base=/tmp/base --tree this=.
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
    """One process: the best epoch wall and CPU times of ``epochs`` epochs
    (after a warm-up one) and the 10th percentile of their step times."""
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
    steps = []

    class StepTimes(mk.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            self.start = time.perf_counter()

        def on_train_batch_end(self, batch, logs=None):
            steps.append(time.perf_counter() - self.start)

    timer = StepTimes()
    trainer.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0, callbacks=[timer])
    del steps[:]
    best = best_cpu = float("inf")
    for _ in range(epochs):
        start, start_cpu = time.perf_counter(), time.process_time()
        trainer.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0, callbacks=[timer])
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
    steps.sort()
    return {"seconds": best, "cpu_seconds": best_cpu, "step_p10_ms": 1e3 * steps[(len(steps) - 1) // 10],
            "minikeras": os.path.dirname(os.path.dirname(mk.__file__))}


def _run_worker(model_name, setup, threads, args, tree=ROOT):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               PYTHONPATH=tree + os.pathsep + os.environ.get("PYTHONPATH", ""), BENCH_MIRRORED_TREE=tree)
    command = [sys.executable, os.path.abspath(__file__), "--worker", model_name, setup,
               "--samples", str(args.samples), "--epochs", str(args.epochs), "--batch", str(args.batch)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", nargs=2, metavar=("MODEL", "SETUP"), help=argparse.SUPPRESS)
    parser.add_argument("--models", nargs="+", default=["cnn", "mlp"], choices=["cnn", "mlp"])
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2], help="OPENBLAS_NUM_THREADS values")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=2, help="timed epochs per round (after one warm-up)")
    parser.add_argument("--samples", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--tree", action="append", default=None, metavar="NAME=PATH",
                        help="a checkout to time in the same rounds (repeatable; default: this one)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker[0], args.worker[1].replace("_", " "), args.samples, args.epochs,
                                args.batch)))
        return None
    trees = dict(_named_tree(text) for text in args.tree) if args.tree else {"this": ROOT}

    from benchmarks._report import report

    setups = ["one device", "mirrored x2"]
    configs = [(tree, m, s, t) for m in args.models for t in args.threads for s in setups for tree in trees]
    measures = ("seconds", "cpu_seconds", "step_p10_ms")
    best = {config: dict.fromkeys(measures, float("inf")) for config in configs}
    loads = []
    for round_index in range(args.rounds):
        for config in configs:
            loads.append(os.getloadavg()[0])
            result = _run_worker(config[1], config[2].replace(" ", "_"), config[3], args, trees[config[0]])
            if result["minikeras"] != trees[config[0]]:
                raise SystemExit(f"the worker for {config[0]} imported minikeras from {result['minikeras']}.")
            for measure in measures:
                best[config][measure] = min(best[config][measure], result[measure])
        print(f"round {round_index + 1}/{args.rounds} done, load {os.getloadavg()[0]:.2f}", file=sys.stderr)
    rows = []
    for model_name in args.models:
        for threads in args.threads:
            for tree in trees:
                single, mirrored = best[(tree, model_name, "one device", threads)], \
                    best[(tree, model_name, "mirrored x2", threads)]
                rows.append({"tree": tree, "model": model_name, "blas_threads": threads,
                             "one_device_s": single["seconds"], "mirrored_x2_s": mirrored["seconds"],
                             "mirrored/one": mirrored["seconds"] / single["seconds"],
                             "one_cpu_s": single["cpu_seconds"], "mirrored_cpu_s": mirrored["cpu_seconds"],
                             "one_step_p10_ms": single["step_p10_ms"],
                             "mirrored_step_p10_ms": mirrored["step_p10_ms"]})
    print(f"Epoch time, {args.samples} samples, batch {args.batch}, Adam; min over {args.rounds} rounds x "
          f"{args.epochs} epochs; load average during the runs {min(loads):.2f}-{max(loads):.2f} "
          f"on {os.cpu_count()} CPUs\n")
    extra = {"load_average_during_runs": {"min": min(loads), "max": max(loads)},
             "samples": args.samples, "batch": args.batch, "rounds": args.rounds, "epochs": args.epochs,
             "target": "mirrored x2 no slower than 1.2 x one device on this 2-core machine"}
    columns = ["tree", "model", "blas_threads", "one_device_s", "mirrored_x2_s", "mirrored/one", "one_cpu_s",
               "mirrored_cpu_s", "one_step_p10_ms", "mirrored_step_p10_ms"]
    extra["trees"] = trees
    return report("bench_mirrored", rows, columns, extra=extra, path=args.json)


def _named_tree(text):
    name, separator, path = text.partition("=")
    if not separator or not name or not os.path.isdir(os.path.join(path, "minikeras")):
        raise SystemExit(f"--tree expects NAME=PATH of a checkout holding minikeras/, received {text!r}.")
    return name, os.path.abspath(path)


if __name__ == "__main__":
    sys.path.insert(0, ROOT)  # (benchmarks._report)
    sys.path.insert(0, os.environ.get("BENCH_MIRRORED_TREE", ROOT))  # a worker: the tree it times, first
    main()
