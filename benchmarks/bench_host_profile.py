"""Where an eager step's host time goes: Python calls per step, split by part of the library.

For each benchmark model (MLP, Fashion CNN, CIFAR CNN of compare.py) on the
default device (``MINIKERAS_SIMULATED_GPU=1`` for the simulated GPU's path),
this prints and writes, per ``train_on_batch`` and per ``predict_on_batch``
(batch 16 by default, the batch already converted once):

- ``calls``: Python-level function calls (``sys.setprofile``'s "call" events:
  every Python function, comprehension and generator entered), the number
  issue 35 sets targets on (MLP <= 1,000, Fashion CNN <= 2,000, CIFAR CNN
  <= 3,000 per train_on_batch);
- ``host_us``: the median process CPU time of the call over ``--steps``
  calls (steadier than wall time on a shared machine);
- the calls and the share of profiled time (cProfile's own time) charged to
  each part: ``layer_call`` (layers/, the Layer call protocol), ``op_dispatch``
  (ops/ and the Function wrappers), ``autograd_record`` (Function.apply,
  Tensor), ``backward`` (the engine and every ``backward``), ``optimizer``,
  ``device`` (activation, placement, registry), ``allocation`` (memory
  accounting), ``logs`` (steps, metrics, losses' bookkeeping), ``kernels``
  (kernels/, the fused kernels' references and launches), ``simulator`` (the
  simulated CuPy, with ``MINIKERAS_SIMULATED_GPU=1``), ``other``.

    python benchmarks/bench_host_profile.py
    MINIKERAS_SIMULATED_GPU=1 python benchmarks/bench_host_profile.py --models mlp --json sim.json
    python benchmarks/bench_host_profile.py --minikeras /tmp/base     # another checkout
"""
import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# (part, path fragments of the files charged to it); the first match wins.
PARTS = [
    ("simulator", ("minikeras/testing/",)),  # the simulated CuPy: not minikeras's cost on a card
    ("backward", ("minikeras/autograd/engine.py", "minikeras/autograd/tape.py")),
    ("autograd_record", ("minikeras/autograd/",)),
    ("optimizer", ("minikeras/optimizers/",)),
    ("allocation", ("minikeras/device/memory.py",)),
    ("device", ("minikeras/device/", "minikeras/backend/")),
    ("kernels", ("minikeras/kernels/",)),
    ("op_dispatch", ("minikeras/ops/", "minikeras/_support/argument_validation.py")),
    ("layer_call", ("minikeras/layers/", "minikeras/activations", "minikeras/dtype_policies/")),
    ("logs", ("minikeras/models/", "minikeras/metrics/", "minikeras/losses/", "minikeras/callbacks/")),
]


def part_of(filename, function):
    """The part a profiled function belongs to (``backward`` methods anywhere count as backward)."""
    path = filename.replace(os.sep, "/")
    if function == "backward" and "minikeras/" in path:
        return "backward"
    for part, fragments in PARTS:
        if any(fragment in path for fragment in fragments):
            return part
    return "other"


class _CallCounter:
    """Counts Python "call" events (what ``sys.setprofile`` sees) per part."""

    def __init__(self):
        self.total = 0
        self.by_part = {}

    def __call__(self, frame, event, arg):
        if event == "call":
            self.total += 1
            code = frame.f_code
            part = part_of(code.co_filename, code.co_name)
            self.by_part[part] = self.by_part.get(part, 0) + 1


def _count_calls(action):
    counter = _CallCounter()
    sys.setprofile(counter)
    try:
        action()
    finally:
        sys.setprofile(None)
    return counter


def _time_shares(action, repeats):
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(repeats):
        action()
    profile.disable()
    shares = {}
    for (filename, _, function), row in pstats.Stats(profile).stats.items():
        own_time = row[2]
        part = part_of(filename, function)
        shares[part] = shares.get(part, 0.0) + own_time
    total = sum(shares.values()) or 1.0
    return {part: round(value / total, 3) for part, value in shares.items()}


def _median_us(action, steps, synchronize):
    times = []
    for _ in range(steps):
        start = time.process_time()
        action()
        synchronize()
        times.append(time.process_time() - start)
    return round(1e6 * statistics.median(times), 1)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["mlp", "cnn", "cifar_cnn"])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=16)
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
    synchronize = device.synchronize if device.kind == "gpu" else (lambda: None)
    rows = []
    for name in args.models:
        mk.random.seed(0)
        rng = numpy.random.default_rng(0)
        model = _minikeras_model(name)
        model.compile(optimizer=mk.optimizers.Adam(1e-3),
                      loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
        x = mk.tensor(rng.random((args.batch,) + shapes[name], dtype=numpy.float32))
        y = mk.tensor(rng.integers(0, 10, size=args.batch))
        actions = {"train_on_batch": lambda: model.train_on_batch(x, y),
                   "predict_on_batch": lambda: model.predict_on_batch(x)}
        for _ in range(3):  # warm-up: builds, slots, caches
            for action in actions.values():
                action()
        for kind, action in actions.items():
            counter = _count_calls(action)
            row = {"model": name, "call": kind, "device": device.canonical, "calls": counter.total,
                   "host_us": _median_us(action, args.steps, synchronize)}
            shares = _time_shares(action, max(3, args.steps // 3))
            for part, _ in PARTS + [("other", ())]:
                row[f"calls_{part}"] = counter.by_part.get(part, 0)
                row[f"time_{part}"] = shares.get(part, 0.0)
            rows.append(row)
    columns = ["model", "call", "device", "calls", "host_us"] + [f"calls_{part}" for part, _ in PARTS] + \
        ["calls_other"]
    report("bench_host_profile", rows, columns, path=args.json)
    return rows


if __name__ == "__main__":
    main()
