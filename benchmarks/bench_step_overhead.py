"""Host time of one training step of the three benchmark models, on the default device.

A small model's GPU step is bound by host time: Python bookkeeping per op
and per layer, plus ~10 us per kernel launch. This times ``model.train_step``
on a batch already on the device (batch 128, Adam, sparse categorical
cross-entropy from logits, as benchmarks/gpu_launches.py), median of
``--steps`` steps after a warm-up, in wall time and in this process's CPU
time (steadier on a shared machine). Run it with
``MINIKERAS_SIMULATED_GPU=1`` for the simulated GPU's step (the GPU code
path, every array call wrapped and counted), without it for the CPU's.

``--minikeras PATH`` imports minikeras from PATH (a checkout of another
commit), so one process layout compares two versions:

    python benchmarks/bench_step_overhead.py --models mlp --steps 30
    python benchmarks/bench_step_overhead.py --minikeras /tmp/base --json base.json
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["mlp", "cnn", "cifar_cnn"])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--minikeras", default=os.path.dirname(HERE), help="the folder that holds minikeras/")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    sys.path.insert(0, HERE)
    sys.path.insert(0, args.minikeras)
    import numpy

    import minikeras as mk
    from _report import report
    from compare import _minikeras_model
    from minikeras.device import registry

    shapes = {"mlp": (784,), "cnn": (28, 28, 1), "cifar_cnn": (32, 32, 3)}
    device = registry.default_device()
    rows = []
    for name in args.models:
        mk.random.seed(0)
        rng = numpy.random.default_rng(0)
        model = _minikeras_model(name)
        model.compile(optimizer=mk.optimizers.Adam(1e-3),
                      loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
        x = mk.tensor(rng.random((args.batch,) + shapes[name], dtype=numpy.float32))
        y = mk.tensor(rng.integers(0, 10, size=args.batch))
        for _ in range(3):
            model.train_step((x, y))
            model.flush_logs()
        walls, cpus = [], []
        for _ in range(args.steps):
            wall, cpu = time.perf_counter(), time.process_time()
            model.train_step((x, y))
            if device.kind == "gpu":
                device.synchronize()
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            model.flush_logs()
        rows.append({"model": name, "device": device.canonical, "wall_ms": round(1e3 * statistics.median(walls), 3),
                     "cpu_ms": round(1e3 * statistics.median(cpus), 3), "minikeras": os.path.abspath(args.minikeras)})
    report("bench_step_overhead", rows, ["model", "device", "wall_ms", "cpu_ms"], path=args.json)
    return rows


if __name__ == "__main__":
    main()
