"""Multi-worker training over MPI: transport overhead, epoch time, scaling model.

1. All-reduce of the Fashion-MNIST CNN's gradients (the weights' shapes,
   float32) between 2 processes: minikeras's ``MpiAllReduce.all_reduce``
   (entry checksum, packing into one flat buffer, ``Iallreduce`` polled
   under the timeout, unpacking) against raw mpi4py ``Allreduce`` of one
   flat buffer of the same bytes. The two are interleaved call by call, a
   barrier before each; the minimum, 10th percentile and median of each
   are reported (on a shared machine the minimum is the cost without
   interference). Target: <= 1.1x.
2. Epoch time of 2 workers x 1 replica (MultiWorkerMirroredModel, global
   batch 128 split 64 + 64, one op thread each) against 1 process (batch
   128, two op threads) on the same data (synthetic MNIST-shaped), best
   epoch after a warm-up one. On a 2-core machine the two workers share
   the cores the single process uses alone: this measures the cost of the
   collectives and of splitting the batch, not a speed-up.
3. The scaling model on paper (ring all-reduce, no overlap of
   communication and computation) for the three models of anchors.py.

    python benchmarks/bench_multi_worker.py           # table + benchmarks/results/bench_multi_worker.json
    python benchmarks/bench_multi_worker.py --samples 1024 --calls 100
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# Measured single-process step times (batch 128, this 2-core machine, from
# the README's full-dataset runs: epoch time / steps): MLP 64.5 s / 20
# epochs / 469 steps, CNN 340 s / 15 / 469, CIFAR CNN 1346 s / 16 / 391.
STEP_SECONDS = {"mlp": 64.5 / 20 / 469, "cnn": 340 / 15 / 469, "cifar_cnn": 1346 / 16 / 391}
LINK_GBITS = (25, 100)
WORKERS = (8, 64)
LATENCY_S = 10e-6  # per ring step (message start-up on a good network)


def build(name):
    import minikeras as mk
    from minikeras import layers

    mk.random.seed(0)
    if name == "mlp":
        stack = [layers.Input((784,)), layers.Dense(512, activation="relu"), layers.Dense(256, activation="relu"),
                 layers.Dense(10)]
    elif name == "cnn":
        stack = [layers.Input((28, 28, 1)), layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(2),
                 layers.Conv2D(64, 3, activation="relu"), layers.MaxPooling2D(2), layers.Flatten(),
                 layers.Dense(128, activation="relu"), layers.Dense(10)]
    else:
        stack = [layers.Input((32, 32, 3)), layers.Conv2D(32, 3, padding="same", activation="relu"),
                 layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(2),
                 layers.Conv2D(64, 3, padding="same", activation="relu"), layers.Conv2D(64, 3, activation="relu"),
                 layers.MaxPooling2D(2), layers.Flatten(), layers.Dense(256, activation="relu"), layers.Dense(10)]
    return mk.Sequential(stack)


# ------------------------------------------------------------ in the workers
def worker_all_reduce(calls):
    import numpy
    from mpi4py import MPI

    from minikeras.distribute import MpiAllReduce

    comm = MPI.COMM_WORLD
    gradients = [numpy.ones(w.shape, dtype="float32") * comm.Get_rank() for w in build("cnn").weights]
    total = sum(g.size for g in gradients)
    collective = MpiAllReduce(["cpu:0"])
    send, receive = numpy.ones(total, "float32"), numpy.empty(total, "float32")
    # (the in-place call below sums into ``send``: its values grow, the cost does not change)
    ours, raw, in_place = [], [], []
    for call in range(calls + 10):  # 10 warm-up calls
        comm.Barrier()
        start = time.perf_counter()
        result = collective.all_reduce(0, gradients)
        mine = time.perf_counter() - start
        comm.Barrier()
        start = time.perf_counter()
        comm.Allreduce(send, receive)
        theirs = time.perf_counter() - start
        comm.Barrier()
        start = time.perf_counter()
        comm.Allreduce(MPI.IN_PLACE, send)
        theirs_in_place = time.perf_counter() - start
        if call >= 10:
            ours.append(mine)
            raw.append(theirs)
            in_place.append(theirs_in_place)
    assert numpy.allclose(result[0], sum(range(comm.Get_size())))
    # The minimum is the cost without interference (the machine is shared);
    # the median shows how much the other users' load added.
    return {"bytes": int(total * 4), "minikeras_s": float(numpy.min(ours)), "raw_s": float(numpy.min(raw)),
            "minikeras_median_s": float(numpy.median(ours)), "raw_median_s": float(numpy.median(raw)),
            "minikeras_p10_s": float(numpy.percentile(ours, 10)), "raw_p10_s": float(numpy.percentile(raw, 10)),
            "raw_in_place_s": float(numpy.min(in_place))}


def worker_epoch(samples, epochs, multi):
    import numpy

    import minikeras as mk
    from minikeras.distribute import MultiWorkerMirroredModel

    rng = numpy.random.default_rng(0)
    x = rng.random((samples, 28, 28, 1), dtype=numpy.float32)
    y = rng.integers(0, 10, samples)
    model = build("cnn")
    trainer = MultiWorkerMirroredModel(model) if multi else model
    trainer.compile(mk.optimizers.Adam(), mk.losses.SparseCategoricalCrossentropy(from_logits=True),
                    metrics=["accuracy"])
    trainer.fit(x, y, batch_size=128, epochs=1, shuffle=False, verbose=0)
    best = float("inf")
    for _ in range(epochs):
        start = time.perf_counter()
        trainer.fit(x, y, batch_size=128, epochs=1, shuffle=False, verbose=0)
        best = min(best, time.perf_counter() - start)
    return {"epoch_s": best}


# ------------------------------------------------------------- the driver
def _launch(processes, threads, arguments):
    env = dict(os.environ, MINIKERAS_NUM_THREADS=str(threads), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    command = [sys.executable, os.path.abspath(__file__), "--worker", *arguments]
    if processes > 1:
        command = [mpiexec, "-n", str(processes)] + command
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200)
    if done.returncode != 0:
        raise RuntimeError(done.stdout + done.stderr)
    return json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])


def scaling_model():
    """Bytes per step, ring all-reduce time and efficiency (see NOTES.md)."""
    rows = []
    for name in ("mlp", "cnn", "cifar_cnn"):
        parameters = build(name).count_params()
        size = 4 * parameters
        for workers in WORKERS:
            moved = 2 * (workers - 1) / workers * size  # sent (and received) by each worker per step
            for gbits in LINK_GBITS:
                seconds = moved / (gbits * 1e9 / 8) + 2 * (workers - 1) * LATENCY_S
                step = STEP_SECONDS[name]
                rows.append({"model": name, "params": parameters, "grad_MB": round(size / 1e6, 3),
                             "workers": workers, "link_Gbps": gbits, "sent_per_step_MB": round(moved / 1e6, 3),
                             "allreduce_ms": round(seconds * 1e3, 3), "compute_ms": round(step * 1e3, 1),
                             "efficiency": round(step / (step + seconds), 3)})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--samples", type=int, default=2048)
    parser.add_argument("--epochs", type=int, default=3, help="timed epochs (after one warm-up)")
    parser.add_argument("--calls", type=int, default=300, help="timed all-reduce calls")
    args = parser.parse_args(argv)
    if args.worker:
        kind = args.worker[0]
        result = worker_all_reduce(args.calls) if kind == "allreduce" else \
            worker_epoch(args.samples, args.epochs, kind == "multi")
        from mpi4py import MPI  # noqa: F401  (the single process too: same imports, same start-up)

        if MPI.COMM_WORLD.Get_rank() == 0:
            print(json.dumps(result), flush=True)
        return
    from _report import report

    reduce = _launch(2, 1, ["allreduce"])
    multi = _launch(2, 1, ["multi"])
    single = _launch(1, 2, ["single"])
    rows = [{"measure": f"CNN gradients all-reduce, 2 processes, {statistic}", "bytes": reduce["bytes"],
             "minikeras_ms": round(reduce[f"minikeras{suffix}"] * 1e3, 3),
             "raw_mpi4py_ms": round(reduce[f"raw{suffix}"] * 1e3, 3),
             "ratio": round(reduce[f"minikeras{suffix}"] / reduce[f"raw{suffix}"], 3)}
            for statistic, suffix in (("min", "_s"), ("p10", "_p10_s"), ("median", "_median_s"))]
    rows.append({"measure": "  same, raw Allreduce(IN_PLACE) instead, min", "bytes": reduce["bytes"],
                 "minikeras_ms": round(reduce["minikeras_s"] * 1e3, 3),
                 "raw_mpi4py_ms": round(reduce["raw_in_place_s"] * 1e3, 3),
                 "ratio": round(reduce["minikeras_s"] / reduce["raw_in_place_s"], 3)})
    rows += [
            {"measure": f"CNN epoch, {args.samples} samples, global batch 128",
             "2_workers_s": round(multi["epoch_s"], 3), "1_process_s": round(single["epoch_s"], 3),
             "ratio": round(multi["epoch_s"] / single["epoch_s"], 3)}]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print(f"(shared 2-core machine: other helpers' jobs ran at the same time; 1-min load average {load})")
    report("bench_multi_worker", rows, ["measure", "bytes", "minikeras_ms", "raw_mpi4py_ms", "2_workers_s",
                                        "1_process_s", "ratio"],
           extra={"scaling_model": scaling_model(), "samples": args.samples, "calls": args.calls})
    print()
    model_rows = scaling_model()
    widths = ["model", "params", "workers", "link_Gbps", "sent_per_step_MB", "allreduce_ms", "compute_ms",
              "efficiency"]
    print("  ".join(widths))
    for row in model_rows:
        print("  ".join(str(row[key]) for key in widths))


if __name__ == "__main__":
    main()
