"""Host time per training step of two minikeras checkouts, A/B, on a shared machine.

On a machine other jobs share, one version timed after the other sees a
different load (on the 2-core development VM, the same step read 1.0 ms
and 1.9 ms minutes apart). Here two worker processes, one per checkout,
build the same model and take turns running blocks of ``--block`` steps
(``model.train_step`` then ``flush_logs``, batch already on the device),
alternating which goes first, for ``--rounds`` rounds; the medians of
per-step process CPU time and wall time are compared. Models: ``tiny``
(Input(8) -> Dense(4, relu) -> Dense(4, relu) -> Dense(3), where a step
is almost all Python) and the three of ``bench_step_overhead.py``; Adam,
sparse categorical cross-entropy from logits. Set
``MINIKERAS_SIMULATED_GPU=1`` for the simulated GPU's step.

    git worktree add --detach /tmp/base main
    python benchmarks/bench_host_ab.py --before /tmp/base --model tiny --batch 2
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

_WORKER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2])
import numpy
import minikeras as mk
from minikeras import layers
name, batch = sys.argv[3], int(sys.argv[4])
shapes = {"tiny": (8,), "mlp": (784,), "cnn": (28, 28, 1), "cifar_cnn": (32, 32, 3)}
mk.random.seed(0)
rng = numpy.random.default_rng(0)
if name == "tiny":
    model = mk.Sequential([layers.Input((8,)), layers.Dense(4, activation="relu"),
                           layers.Dense(4, activation="relu"), layers.Dense(3)])
else:
    from compare import _minikeras_model
    model = _minikeras_model(name)
model.compile(optimizer=mk.optimizers.Adam(1e-3), loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
x = mk.tensor(rng.random((batch,) + shapes[name], dtype=numpy.float32))
y = mk.tensor(rng.integers(0, 3, size=batch))
for _ in range(5):
    model.train_step((x, y))
    model.flush_logs()
print("ready", flush=True)
for line in sys.stdin:
    times = []
    for _ in range(int(line)):
        cpu, wall = time.process_time(), time.perf_counter()
        model.train_step((x, y))
        model.flush_logs()
        times.append((time.process_time() - cpu, time.perf_counter() - wall))
    print(json.dumps(times), flush=True)
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the folder that holds the baseline's minikeras/")
    parser.add_argument("--after", default=os.path.dirname(HERE), help="the folder that holds minikeras/")
    parser.add_argument("--model", default="tiny", choices=["tiny", "mlp", "cnn", "cifar_cnn"])
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--block", type=int, default=100, help="steps per turn")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    sys.path.insert(0, HERE)
    from _report import report

    folders = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
    # cwd elsewhere: the worker must import minikeras from its folder only.
    workers = {tag: subprocess.Popen([sys.executable, "-c", _WORKER, folder, HERE, args.model, str(args.batch)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=os.sep)
               for tag, folder in folders.items()}
    times = {tag: [] for tag in workers}
    try:
        for worker in workers.values():
            if worker.stdout.readline().strip() != "ready":
                raise RuntimeError("a worker failed to build the model (its error is above)")
        for turn in range(args.rounds):
            for tag in ("before", "after") if turn % 2 == 0 else ("after", "before"):
                workers[tag].stdin.write(f"{args.block}\n")
                workers[tag].stdin.flush()
                times[tag].extend(json.loads(workers[tag].stdout.readline()))
    finally:
        for worker in workers.values():
            worker.stdin.close()
            worker.wait()
    device = "simulated GPU" if os.environ.get("MINIKERAS_SIMULATED_GPU") else "CPU"
    rows = []
    for tag, folder in folders.items():
        rows.append({"version": tag, "model": args.model, "batch": args.batch, "device": device,
                     "steps": len(times[tag]), "cpu_ms": round(1e3 * statistics.median(t[0] for t in times[tag]), 3),
                     "wall_ms": round(1e3 * statistics.median(t[1] for t in times[tag]), 3), "minikeras": folder})
    report("bench_host_ab", rows, ["version", "model", "batch", "device", "steps", "cpu_ms", "wall_ms"],
           path=args.json)
    return rows


if __name__ == "__main__":
    main()
