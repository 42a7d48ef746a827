"""Peak memory of one training step of the MNIST CNN, against a lower bound.

The model: Conv2D(32,3,relu) - MaxPool - Conv2D(64,3,relu) - MaxPool -
Flatten - Dense(128,relu) - Dense(10) on 28x28x1, batch 128, Adam, float32.
The peak is ``config.get_memory_info(dev)["peak"]`` after
``config.reset_memory_stats(dev)``, over one step taken after a first step
(so Adam's state exists, as in any step of a training run). It counts what
the library allocates on the device: tensors, arrays kept for backward, the
gradients passed between ops in backward, the weights' gradients and the
optimizer state; not the temporaries inside one op. To see those too, the
step is repeated under ``tracemalloc`` (NumPy reports every buffer to it):
"all buffers" is that peak plus what was held before the step.

Lower bound (the bytes that must exist in any implementation of the same
math, each computed from the layer shapes below):

- parameters, their gradients, Adam's two slots: 4 x params x 4 bytes;
- what backward needs from forward: the input batch (conv1's kernel
  gradient), each ReLU output (its gradient mask, and the next layer's
  input), each max-pool's winner positions (1 byte per output), each
  pool output (the next layer's input), the softmax probabilities.

It is a lower bound of everything stored at once at the end of forward plus
the persistent state; the real peak is higher because backward must also
hold a gradient the size of the largest activation while that activation
is still needed. Target: peak <= 2 x lower bound. MirroredModel on two
logical CPUs: each device holds a whole copy of the state and half the
activations; its bound is computed the same way for its 64 samples.

    python benchmarks/bench_memory.py               # table + benchmarks/results/bench_memory.json
    python benchmarks/bench_memory.py --batch 256 --no-tracemalloc
"""
import argparse
import gc
import math
import os
import sys
import tracemalloc

import numpy

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import minikeras as mk  # noqa: E402
from minikeras import config, layers  # noqa: E402

from benchmarks._report import report  # noqa: E402

FLOAT = 4


def make_model():
    mk.random.seed(0)
    return mk.Sequential([
        layers.Input((28, 28, 1)),
        layers.Conv2D(32, 3, activation="relu"),
        layers.MaxPooling2D(),
        layers.Conv2D(64, 3, activation="relu"),
        layers.MaxPooling2D(),
        layers.Flatten(),
        layers.Dense(128, activation="relu"),
        layers.Dense(10),
    ])


def lower_bound(model, batch):
    """``(total, [(component, bytes)])`` for one step of ``model`` on ``batch`` samples."""
    params = model.count_params()
    parts = [
        ("parameters", params * FLOAT),
        ("gradients", params * FLOAT),
        ("Adam momentum + velocity", 2 * params * FLOAT),
        ("input batch (conv1 kernel grad)", batch * 28 * 28 * 1 * FLOAT),
    ]
    shape = (28, 28, 1)
    for layer in model.layers:
        out = shape
        name = type(layer).__name__
        if name == "Conv2D":
            out = (shape[0] - 2, shape[1] - 2, layer.filters)
            parts.append((f"{layer.name} ReLU output {out}", batch * math.prod(out) * FLOAT))
        elif name == "MaxPooling2D":
            out = (shape[0] // 2, shape[1] // 2, shape[2])
            parts.append((f"{layer.name} winners, 1 B each", batch * math.prod(out)))
            parts.append((f"{layer.name} output {out} (next input)", batch * math.prod(out) * FLOAT))
        elif name == "Flatten":
            out = (math.prod(shape),)  # a view of the pool output: nothing new
        elif name == "Dense":
            out = (layer.units,)
            what = "ReLU output" if layer is not model.layers[-1] else "softmax probabilities"
            parts.append((f"{layer.name} {what} {out}", batch * layer.units * FLOAT))
        shape = out
    return sum(size for _, size in parts), parts


def _data(batch):
    rng = numpy.random.default_rng(0)
    return rng.random((batch, 28, 28, 1), dtype=numpy.float32), rng.integers(0, 10, batch)


def _step_peak(trainer, x, y, devices):
    """Peak bytes per device over one training step (after a first step)."""
    trainer.train_on_batch(x, y)
    gc.collect()
    for device in devices:
        config.reset_memory_stats(device)
    trainer.train_on_batch(x, y)
    return [config.get_memory_info(device)["peak"] for device in devices]


def _all_buffers_peak(trainer, x, y):
    """Every NumPy buffer, op temporaries included: held before the step
    (the library's count then) plus tracemalloc's peak over the step."""
    held = config.get_memory_info("cpu:0")["current"]
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        trainer.train_on_batch(x, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return held + peak - start


def _saved_by_op(model, x, y):
    """What the graph holds at the end of forward, per op (bytes kept for backward)."""
    from minikeras.autograd import engine

    loss, _, _ = model._forward_loss(x, y, None, training=True)
    seen, rows = set(), []
    weights = {id(w.data) for w in model.weights}
    for function in reversed(engine._topological_order(loss._node)):
        size = 0
        for array in function.saved:
            if array is None or not hasattr(array, "nbytes"):
                continue
            owner = array.base if array.base is not None else array
            if id(owner) in seen or id(owner) in weights:
                continue
            seen.add(id(owner))
            size += owner.nbytes
        if size:
            rows.append({"op": function.name, "kept for backward": size,
                         "arrays": ", ".join(f"{a.dtype}{tuple(a.shape)}" for a in function.saved
                                             if a is not None and hasattr(a, "shape"))})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--no-tracemalloc", action="store_true", help="skip the all-buffers measurement")
    parser.add_argument("--json", default=None, help="output path (default benchmarks/results/bench_memory.json)")
    args = parser.parse_args(argv)

    cpu = config.list_physical_devices("CPU")[0]
    config.set_logical_device_configuration(cpu, [config.LogicalDeviceConfiguration()] * 2)
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    x, y = _data(args.batch)
    rows = []

    model = make_model()
    model.compile(mk.optimizers.Adam(), loss)
    bound, parts = lower_bound(model, args.batch)
    (peak,) = _step_peak(model, x, y, ["cpu:0"])
    row = {"setup": "one device", "device": "cpu:0", "samples": args.batch, "peak_MB": peak / 1e6,
           "lower_bound_MB": bound / 1e6, "peak/bound": peak / bound}
    if not args.no_tracemalloc:
        everything = _all_buffers_peak(model, x, y)
        row["all_buffers_MB"] = everything / 1e6
        row["all/bound"] = everything / bound
    rows.append(row)
    saved = _saved_by_op(model, x, y)
    del model
    gc.collect()

    wrapped = make_model()
    mirrored = mk.MirroredModel(wrapped, devices=["cpu:0", "cpu:1"])
    mirrored.compile(mk.optimizers.Adam(), loss)
    peaks = _step_peak(mirrored, x, y, ["cpu:0", "cpu:1"])
    for device, (start, stop), device_peak in zip(["cpu:0", "cpu:1"], mirrored._shard_bounds(args.batch), peaks):
        device_bound, _ = lower_bound(wrapped, stop - start)
        rows.append({"setup": "MirroredModel x2", "device": device, "samples": stop - start,
                     "peak_MB": device_peak / 1e6, "lower_bound_MB": device_bound / 1e6,
                     "peak/bound": device_peak / device_bound})
    mirrored.close()

    columns = ["setup", "device", "samples", "peak_MB", "lower_bound_MB", "peak/bound"]
    if not args.no_tracemalloc:
        columns += ["all_buffers_MB", "all/bound"]
    print(f"Peak memory of one training step, CNN, batch {args.batch}, Adam, float32 (MB = 1e6 bytes)\n")
    extra = {
        "lower_bound_parts": [{"component": name, "bytes": size} for name, size in parts],
        "kept_for_backward_by_op": saved,
        "target": "peak <= 2 x lower bound",
    }
    payload_path = args.json
    print("Lower bound, one device:")
    for name, size in parts:
        print(f"  {name:<45} {size / 1e6:8.3f} MB")
    print(f"  {'total':<45} {bound / 1e6:8.3f} MB\n")
    print("Kept for backward at the end of forward, per op (weights excluded):")
    for item in saved:
        print(f"  {item['op']:<28} {item['kept for backward'] / 1e6:8.3f} MB  {item['arrays']}")
    print()
    return report("bench_memory", rows, columns, extra=extra, path=payload_path)


if __name__ == "__main__":
    main()
