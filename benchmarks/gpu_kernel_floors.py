"""The kernels of issue 33 §2 on a GPU: their time against the issue's targets and the card's bandwidth.

For each kernel at the sizes the issue names (float32):

- ``im2col`` / ``col2im``: the CIFAR CNN's four convolutions (batch 128; its
  step launches im2col 4 times, col2im 3 times). Targets: all im2col <= 120
  us, all col2im <= 100 us per step (H100; before: 683 and 341 us).
- ``adam_update``: the CIFAR CNN's 12 variables (658,218 parameters; target
  <= 10 us, before 204 us) and ResNet-50's 214 (25,583,592; target <= 300 us).
- ``batch_norm_*``: a (256*56*56, 64) input (the statistics are its sum:
  target <= 150 us; CuPy's ``sum(axis=0)``, the path before, beside it), and
  forward + backward over every BatchNorm of ResNet-50 (batch 256, 224x224),
  to set against gpu_bench's ResNet-50 step (target: BatchNorm <= 15% of it).

Each time is GPU time per call: the calls are queued behind a spinning
kernel, so that the host's launch cost is hidden, and timed by two events
(``gpu_us``); ``host_us`` is the host's time to queue one call. ``floor_us``
is the bytes the kernel must move over the card's copy bandwidth (a
device-to-device copy measured first). Each result is also checked against
the kernel's reference on the same card (``check``: the largest relative
difference, 0 when equal bit for bit: im2col, col2im, Adam and the
normalisation should be), and the compiled kernels' registers and local
memory are read back (``RawKernel.attributes``).
About 20 s on an H100, most of it NVRTC's first compile.

    python benchmarks/gpu_kernel_floors.py [--repeats 20] [--json out.json] [--dry-run]

``--dry-run`` (no GPU needed) prints the plan: shapes, bytes and floors at 3 TB/s.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import numpy  # noqa: E402

from _report import report  # noqa: E402

COLUMNS = ["kernel", "case", "gpu_us", "target_us", "floor_us", "gb_per_s", "host_us", "check"]
CIFAR_CONVOLUTIONS = [((128, 32, 32, 3), "same"), ((128, 32, 32, 32), "valid"), ((128, 15, 15, 32), "same"),
                      ((128, 15, 15, 64), "valid")]  # (input shape, padding) of each 3x3 convolution
CIFAR_VARIABLES = [(3, 3, 3, 32), (32,), (3, 3, 32, 32), (32,), (3, 3, 32, 64), (64,), (3, 3, 64, 64), (64,),
                   (2304, 256), (256,), (256, 10), (10,)]
BATCH_NORM_INPUT = (256 * 56 * 56, 64)
SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) { }
}
"""


def resnet50_variables():
    """The shapes of Keras's ResNet50's trainable variables (convolutions with biases,
    BatchNorm gammas and betas, the classifier): 214 tensors, 25,583,592 parameters."""
    shapes = [(7, 7, 3, 64), (64,), (64,), (64,)]
    channels = 64
    for filters, blocks in ((64, 3), (128, 4), (256, 6), (512, 3)):
        for block in range(blocks):
            convolutions = [(1, 1, channels, filters), (3, 3, filters, filters), (1, 1, filters, 4 * filters)]
            if block == 0:
                convolutions.append((1, 1, channels, 4 * filters))  # the shortcut
            for kernel in convolutions:
                shapes += [kernel, (kernel[-1],), (kernel[-1],), (kernel[-1],)]
            channels = 4 * filters
    return shapes + [(2048, 1000), (1000,)]


def resnet50_batch_norms(batch=256):
    """``[(rows, channels, count)]``: the (N*H*W, C) views of ResNet-50's BatchNorms at 224x224."""
    layers = {(batch * 112 * 112, 64): 1}
    channels, size = 64, 56
    for stage, (filters, blocks) in enumerate(((64, 3), (128, 4), (256, 6), (512, 3))):
        if stage:
            size //= 2
        for block in range(blocks):
            for width in (filters, filters, 4 * filters) + ((4 * filters,) if block == 0 else ()):
                key = (batch * size * size, width)
                layers[key] = layers.get(key, 0) + 1
    return [(rows, width, count) for (rows, width), count in layers.items()]


def _geometry(shape, padding):
    from minikeras.ops.nn.sliding_window import WindowGeometry

    return WindowGeometry("conv2d", shape, (3, 3), (1, 1), (1, 1), padding)


def _plan_rows(bandwidth):
    """The cases with their bytes and floors (``bandwidth`` in GB/s), no GPU needed."""
    rows = []
    for shape, padding in CIFAR_CONVOLUTIONS:
        geometry = _geometry(shape, padding)
        patches = shape[0] * geometry.rows_per_sample * geometry.patch_size * 4
        image = numpy.prod(shape) * 4
        rows.append({"kernel": "im2col", "case": f"{shape} {padding}", "bytes": patches + image})
        if shape[3] > 3:  # the first layer's input needs no gradient
            rows.append({"kernel": "col2im", "case": f"{shape} {padding}", "bytes": patches + image})
    for name, shapes in (("cifar", CIFAR_VARIABLES), ("resnet50", resnet50_variables())):
        parameters = sum(int(numpy.prod(s)) for s in shapes)
        rows.append({"kernel": "adam_update", "case": f"{name}: {len(shapes)} variables, {parameters:,}",
                     "bytes": 7 * 4 * parameters})  # read w, g, m, v; write w, m, v
    size = BATCH_NORM_INPUT[0] * BATCH_NORM_INPUT[1] * 4
    for name, passes in (("batch_norm_statistics", 1), ("cupy_sum_axis0", 1), ("batch_norm_normalize", 2),
                         ("batch_norm_backward_sums", 2), ("batch_norm_backward_input", 3)):
        rows.append({"kernel": name, "case": f"{BATCH_NORM_INPUT}", "bytes": passes * size})
    for row in rows:
        row["floor_us"] = round(row["bytes"] / bandwidth / 1e3, 1)
    return rows


TARGETS = {"im2col": 120.0, "col2im": 100.0, "batch_norm_statistics": 150.0}  # per step (summed) / per call


def _timer(xp, repeats):
    spin = xp.RawKernel(SPIN, "spin")
    rate = 2.1e9  # cycles per second at most (H100 and H200 boost to 1.98 GHz): a slower clock spins longer

    def measure(work):
        """``(gpu_us, host_us)`` per call of ``work``."""
        xp.cuda.Device().synchronize()
        began = time.perf_counter()
        work()
        once = time.perf_counter() - began
        xp.cuda.Device().synchronize()
        start, stop = xp.cuda.Event(), xp.cuda.Event()
        # The GPU spins while the host queues every call (twice the first call's host time each).
        spin((1,), (1,), (numpy.int64(rate * (repeats * max(2 * once, 100e-6) + 2e-3)),))
        start.record()
        began = time.perf_counter()
        for _ in range(repeats):
            work()
        host = (time.perf_counter() - began) / repeats * 1e6
        stop.record()
        stop.synchronize()
        return xp.cuda.get_elapsed_time(start, stop) * 1e3 / repeats, host
    return measure


def _check(device, got, want):
    """The largest relative difference of ``got`` from ``want`` (0.0: the same bits)."""
    got, want = (numpy.asarray(device.to_host(a), numpy.float64) for a in (got, want))
    if numpy.array_equal(got, want):
        return 0.0
    return float(numpy.max(numpy.abs(got - want) / (numpy.abs(want) + 1e-30)))


def _windows(device, measure, rng, rows):
    from minikeras import kernels

    xp = device.xp
    for row in rows:
        shape, padding = next((s, p) for s, p in CIFAR_CONVOLUTIONS if f"{s} {p}" == row["case"])
        geometry = _geometry(shape, padding)
        patches_shape = (shape[0], geometry.out_h, geometry.out_w, 3, 3, shape[3])
        if row["kernel"] == "im2col":
            x = device.asarray(rng.normal(size=shape).astype(numpy.float32))
            block = xp.empty(patches_shape, numpy.float32)
            run = kernels.get("im2col", device)
            row["gpu_us"], row["host_us"] = measure(lambda: run(x, geometry, block, False, [None]))
            want = xp.empty_like(block)
            kernels.registered()["im2col"].reference(device, x, geometry, want, False, [None])
            row["check"] = _check(device, block, want)
        else:
            patches = device.asarray(rng.normal(size=patches_shape).astype(numpy.float32))
            target = xp.empty(shape, numpy.float32)
            run = kernels.get("col2im", device)
            row["gpu_us"], row["host_us"] = measure(lambda: run(patches, geometry, target))
            want = kernels.registered()["col2im"].reference(device, patches, geometry, xp.empty_like(target))
            row["check"] = _check(device, target, want)


def _adam(device, measure, rng, row, shapes):
    from minikeras import kernels

    xp = device.xp

    def groups():
        made = []
        for shape in shapes:
            g, m, v, w = (device.asarray(rng.normal(size=shape).astype(numpy.float32)) for _ in range(4))
            made.append((g, m, xp.abs(v), None, w, xp.empty_like(w), xp.empty_like(w)))
        return made

    compiled = groups()
    run = kernels.get("adam_update", device)
    reference = [tuple(None if a is None else a.copy() for a in group) for group in compiled]
    run(compiled, 0.001, 0.9, 0.999, 1e-7)
    kernels.registered()["adam_update"].reference(device, reference, 0.001, 0.9, 0.999, 1e-7)
    row["check"] = max(_check(device, got[4], want[4]) for got, want in zip(compiled, reference))
    row["gpu_us"], row["host_us"] = measure(lambda: run(compiled, 0.001, 0.9, 0.999, 1e-7))


def _batch_norm(device, measure, rng, rows):
    from minikeras import kernels

    xp = device.xp
    view = xp.random.standard_normal(BATCH_NORM_INPUT).astype(numpy.float32) * 3 + 2
    grad = xp.random.standard_normal(BATCH_NORM_INPUT).astype(numpy.float32)
    gamma, beta = (device.asarray(rng.normal(size=(1, 64)).astype(numpy.float32)) for _ in range(2))
    statistics, normalize = kernels.get("batch_norm_statistics", device), kernels.get("batch_norm_normalize", device)
    sums, inputs = kernels.get("batch_norm_backward_sums", device), kernels.get("batch_norm_backward_input", device)
    mean, variance, inv_std, _ = statistics(view, (0,), BATCH_NORM_INPUT[0], 1e-3)
    wide = view.astype(numpy.float64)
    checks = {"batch_norm_statistics": max(_check(device, mean, wide.mean(axis=0, keepdims=True)),
                                           _check(device, variance, wide.var(axis=0, keepdims=True)))}
    sum_grad, sum_x_hat, _ = sums(grad, None, view, mean, inv_std, (0,))
    x_hat = (wide - mean) * inv_std
    checks["batch_norm_backward_sums"] = _check(device, sum_x_hat, (grad * x_hat).sum(axis=0, keepdims=True))
    out, _ = normalize(view, (0,), mean, inv_std, gamma, beta, None)
    want, _ = kernels.registered()["batch_norm_normalize"].reference(device, view, (0,), mean, inv_std, gamma, beta,
                                                                     None)
    checks["batch_norm_normalize"] = _check(device, out, want)
    del wide, x_hat
    work = {"batch_norm_statistics": lambda: statistics(view, (0,), BATCH_NORM_INPUT[0], 1e-3),
            "cupy_sum_axis0": lambda: view.sum(axis=0),
            "batch_norm_normalize": lambda: normalize(view, (0,), mean, inv_std, gamma, beta, None),
            "batch_norm_backward_sums": lambda: sums(grad, None, view, mean, inv_std, (0,)),
            "batch_norm_backward_input": lambda: inputs(grad, None, view, mean, inv_std, gamma, sum_grad, sum_x_hat,
                                                        BATCH_NORM_INPUT[0], None)}
    for row in rows:
        row["gpu_us"], row["host_us"] = measure(work[row["kernel"]])
        row["check"] = checks.get(row["kernel"])


def _resnet50_batch_norms(device, measure, rng):
    """Forward and backward of every BatchNorm of ResNet-50 (batch 256): the GPU time summed."""
    from minikeras import kernels

    xp = device.xp
    statistics, normalize = kernels.get("batch_norm_statistics", device), kernels.get("batch_norm_normalize", device)
    sums, inputs = kernels.get("batch_norm_backward_sums", device), kernels.get("batch_norm_backward_input", device)
    total, layers = 0.0, 0
    for rows, channels, count in resnet50_batch_norms():
        view = xp.random.standard_normal((rows, channels)).astype(numpy.float32)
        grad = xp.random.standard_normal((rows, channels)).astype(numpy.float32)
        gamma = beta = xp.ones((1, channels), numpy.float32)

        def step():
            mean, _, inv_std, _ = statistics(view, (0,), rows, 1e-3)
            normalize(view, (0,), mean, inv_std, gamma, beta, None)
            sum_grad, sum_x_hat, _ = sums(grad, None, view, mean, inv_std, (0,))
            inputs(grad, None, view, mean, inv_std, gamma, sum_grad, sum_x_hat, rows, None)

        total += measure(step)[0] * count
        layers += count
        del view, grad
    return {"kernel": "resnet50 batch norms", "case": f"{layers} layers, forward + backward, batch 256",
            "gpu_us": total, "check": None}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", default=None)
    parser.add_argument("--dry-run", action="store_true", help="print the plan (no GPU needed)")
    args = parser.parse_args(argv)
    from minikeras import backend

    if args.dry_run or not backend.gpu_available():
        print("gpu_kernel_floors: " + ("dry run" if args.dry_run else "no GPU (CuPy with a CUDA device) here") +
              "; the plan, floors at 3,000 GB/s:")
        report("gpu_kernel_floors_plan", _plan_rows(3000.0), ["kernel", "case", "bytes", "floor_us"], path=args.json)
        return 0
    from minikeras import kernels
    from minikeras.device import registry

    device = registry.get_device("gpu:0")
    xp = device.xp
    rng = numpy.random.default_rng(0)
    with device.activate():
        measure = _timer(xp, args.repeats)
        source, target = xp.empty(64 << 20, numpy.float32), xp.empty(64 << 20, numpy.float32)
        copy_us, _ = measure(lambda: xp.copyto(target, source))
        bandwidth = 2 * source.nbytes / copy_us / 1e3  # GB/s, read + write
        del source, target
        rows = _plan_rows(bandwidth)
        _windows(device, measure, rng, [r for r in rows if r["kernel"] in ("im2col", "col2im")])
        for row, shapes in zip([r for r in rows if r["kernel"] == "adam_update"],
                               (CIFAR_VARIABLES, resnet50_variables())):
            _adam(device, measure, rng, row, shapes)
        _batch_norm(device, measure, rng, [r for r in rows if "batch_norm" in r["kernel"] or "cupy" in r["kernel"]])
        rows.append(_resnet50_batch_norms(device, measure, rng))
        for name in ("im2col", "col2im"):  # per CIFAR step, against the targets
            same = [r for r in rows if r["kernel"] == name]
            rows.append({"kernel": f"{name} per CIFAR step", "case": f"{len(same)} launches",
                         "gpu_us": sum(r["gpu_us"] for r in same), "target_us": TARGETS[name],
                         "floor_us": round(sum(r["floor_us"] for r in same), 1), "check": None})
        for row in rows:
            if row["kernel"] == "adam_update":
                row["target_us"] = 10.0 if "cifar" in row["case"] else 300.0
            elif row["kernel"] == "batch_norm_statistics":
                row["target_us"] = TARGETS["batch_norm_statistics"]
            if row.get("bytes") and row.get("gpu_us"):
                row["gb_per_s"] = round(row["bytes"] / row["gpu_us"] / 1e3, 1)
            for key in ("gpu_us", "host_us"):
                if isinstance(row.get(key), float):
                    row[key] = round(row[key], 1)
        resources = {}
        for name in ("im2col", "col2im", "adam_update", "batch_norm_statistics", "batch_norm_normalize",
                     "batch_norm_backward_sums", "batch_norm_backward_input"):
            attributes = kernels.registered()[name].compiled(device, "float32").attributes
            resources[name] = {"registers": attributes.get("num_regs"), "local_bytes": attributes.get("local_size_bytes")}
    print(f"copy bandwidth {bandwidth:.0f} GB/s; compiled kernels' resources: {resources}")
    report("gpu_kernel_floors", rows, COLUMNS, extra={"device": str(device), "copy_gb_per_s": round(bandwidth, 1),
                                                       "resources": resources}, path=args.json)
    print(_summary(rows))  # the session's summary line
    return 0


def _summary(rows):
    """One line: each target's measured time / target in microseconds."""
    def find(kernel, case=""):
        return next(r for r in rows if r["kernel"] == kernel and case in r["case"])

    picks = [("im2col/step", find("im2col per CIFAR step")), ("col2im/step", find("col2im per CIFAR step")),
             ("adam cifar", find("adam_update", "cifar")), ("adam resnet50", find("adam_update", "resnet50")),
             ("bn sum", find("batch_norm_statistics")), ("cupy sum", find("cupy_sum_axis0"))]
    return "us (target): " + ", ".join(f"{name} {row['gpu_us']:.0f}" + (f" ({row['target_us']:.0f})" if row.get(
        "target_us") else "") for name, row in picks) + f"; resnet50 BN fwd+bwd {find('resnet50 batch norms')['gpu_us'] / 1e3:.1f} ms"


if __name__ == "__main__":
    sys.exit(main())
