"""Kernel launches and host synchronisations per training step and per
predict batch, on the strict simulated GPU (issue 21).

On small models a GPU step is bound by kernel launches and host overhead,
not arithmetic (each CuPy call costs ~8-11 us of host time, while an H100
does the MLP's step's arithmetic in under 5 us), so the number of launches
per step is the GPU speed that can be built and measured without a GPU.
This runs the three models of benchmarks/anchors.py (MLP 784-512-256-10,
Fashion CNN, CIFAR CNN; batch 128, Adam, sparse categorical cross-entropy
from logits) on the simulated GPU, where ``device.stats.kernel_launches``
counts every array call that would launch a kernel on a real one, and
prints per model:

- ``train_launches`` / ``train_syncs``: one ``train_step`` (forward, loss,
  backward, optimizer update) on a batch already on the device;
- ``logs_launches`` / ``logs_syncs``: the loss tracker's and metrics'
  update for that batch, which the trainer defers until the logs are read
  (so it is paid once per batch, outside the step);
- ``predict_launches`` / ``predict_syncs``: one ``predict_step``.

``--breakdown`` also prints where the training step's launches go: each
launch is charged to the op whose ``forward`` or ``backward`` issued it
(``Conv2DFunction.backward``), or to the optimizer, the backward engine's
gradient accumulation, or the trainer (see :class:`_LaunchLog`).

It runs on the CPU in seconds:

    python benchmarks/gpu_launches.py [--models mlp cnn] [--json out.json]
"""
import argparse
import collections
import os
import sys

os.environ.setdefault("MINIKERAS_SIMULATED_GPU", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import numpy  # noqa: E402

import anchors  # noqa: E402
from _report import report  # noqa: E402
from compare import _minikeras_model  # noqa: E402

INPUT_SHAPES = {"mlp": (784,), "cnn": (28, 28, 1), "cifar_cnn": (32, 32, 3)}
COLUMNS = ["model", "train_launches", "train_syncs", "logs_launches", "logs_syncs", "predict_launches",
           "predict_syncs"]


def _counted(device, work):
    """``(kernel launches, host syncs)`` of ``work()`` on ``device``."""
    before = device.stats.snapshot()
    work()
    after = device.stats.snapshot()
    return after["kernel_launches"] - before["kernel_launches"], after["host_syncs"] - before["host_syncs"]


class _LaunchLog:
    """Counts launches like ``DeviceStats`` and charges each to its caller.

    Installed as ``device.stats.kernel_launches``'s owner for one step: each
    increment walks the Python stack to the innermost frame that names an
    owner (a Function's forward/backward, an optimizer method, the backward
    engine), so the table says which op costs how many launches.
    """

    def __init__(self):
        self.by_owner = collections.Counter()

    def charge(self, count):
        frame = sys._getframe(2)
        while frame is not None:
            owner = _owner_of(frame)
            if owner is not None:
                self.by_owner[owner] += count
                return
            frame = frame.f_back
        self.by_owner["(other)"] += count


def _owner_of(frame):
    from minikeras.autograd.function import Function

    code = frame.f_code
    path = code.co_filename.replace(os.sep, "/")
    this = frame.f_locals.get("self")
    if code.co_name in ("forward", "backward") and isinstance(this, Function):
        return f"{type(this).__name__}.{code.co_name}"
    if "/minikeras/optimizers/" in path:
        return "optimizer"
    if path.endswith("/minikeras/autograd/engine.py"):
        return f"engine.{code.co_name}"
    if "/minikeras/losses/" in path:
        return f"loss.{code.co_name}"
    if "/minikeras/models/" in path:
        return f"model.{code.co_name}"
    return None


class _ChargedStats:
    """A stand-in for ``device.stats`` whose ``kernel_launches`` charges a _LaunchLog."""

    def __init__(self, stats, log):
        object.__setattr__(self, "_stats", stats)
        object.__setattr__(self, "_log", log)

    def __getattr__(self, name):
        return getattr(self._stats, name)

    def __setattr__(self, name, value):
        if name == "kernel_launches":
            self._log.charge(value - self._stats.kernel_launches)
        setattr(self._stats, name, value)


def breakdown(device, work):
    """``{owner: launches}`` of ``work()`` on ``device`` (see _LaunchLog)."""
    log = _LaunchLog()
    stats = device.stats
    device.stats = _ChargedStats(stats, log)
    try:
        work()
    finally:
        device.stats = stats
    return dict(log.by_owner.most_common())


def measure(model_name, batch=anchors.BATCH, warmup=2, show_breakdown=False):
    """One row of the table for ``model_name`` (a key of INPUT_SHAPES)."""
    import minikeras as mk

    from minikeras.device import registry

    device = registry.default_device()
    if device.kind != "gpu":
        raise RuntimeError(f"gpu_launches needs the simulated GPU; the default device is {device.canonical}.")
    mk.random.seed(0)
    rng = numpy.random.default_rng(0)
    model = _minikeras_model(model_name)
    model.compile(optimizer=mk.optimizers.Adam(anchors.LR),
                  loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = mk.tensor(rng.random((batch,) + INPUT_SHAPES[model_name], dtype=numpy.float32))
    y = mk.tensor(rng.integers(0, 10, size=batch))
    for _ in range(warmup):  # builds the optimizer's slots and the first step's buffers
        model.train_step((x, y))
        model.flush_logs()
    train = _counted(device, lambda: model.train_step((x, y)))
    logs = _counted(device, model.flush_logs)
    if show_breakdown:
        by_owner = breakdown(device, lambda: model.train_step((x, y)))
        model.flush_logs()
        print(f"{model_name}: launches per training step by owner ({sum(by_owner.values())})")
        for owner, count in by_owner.items():
            print(f"  {count:4d}  {owner}")
    model.predict_step((x,))
    predict = _counted(device, lambda: model.predict_step((x,)))
    return {"model": model_name, "train_launches": train[0], "train_syncs": train[1], "logs_launches": logs[0],
            "logs_syncs": logs[1], "predict_launches": predict[0], "predict_syncs": predict[1]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(INPUT_SHAPES), choices=list(INPUT_SHAPES))
    parser.add_argument("--json", default=None, help="where to write the JSON (default benchmarks/results/)")
    parser.add_argument("--breakdown", action="store_true", help="print each training step's launches by op")
    args = parser.parse_args(argv)
    rows = [measure(name, show_breakdown=args.breakdown) for name in args.models]
    report("gpu_launches", rows, COLUMNS, extra={"batch": anchors.BATCH, "optimizer": "Adam",
                                                 "device": "strict simulated GPU"}, path=args.json)
    return rows


if __name__ == "__main__":
    main()
