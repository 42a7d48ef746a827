"""The fused kernels of issue 21 against the array calls they replace, on a real GPU.

For each fused kernel at the benchmark models' shapes (batch 128): the time
of one call, host time included (what a small model's step pays), measured
as the mean over many calls between two device synchronisations, for the
fused kernel and for the unfused CuPy calls it replaces:

- ``matmul_bias_relu`` vs ``a @ b`` then the ``bias_relu`` kernel (Dense forward);
- ``relu_bias_backward`` vs the ``relu_backward`` kernel then ``.sum(axis=0)``;
- ``sparse_softmax_cross_entropy_mean`` vs the per-row kernel, ``.mean()``,
  ``ones_like``, the mean's backward and the per-row backward kernel.

It also checks each fused result against the unfused one. Needs CuPy and a
GPU; elsewhere it says so and exits 0.

    python benchmarks/bench_fused_kernels.py [--calls 2000] [--json out.json]
"""
import argparse
import os
import sys
import time

os.environ.setdefault("CUPY_TF32", "0")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import numpy  # noqa: E402

from _report import report  # noqa: E402

COLUMNS = ["kernel", "shape", "fused_us", "unfused_us", "speedup", "max_abs_diff"]


def _time(device, work, calls):
    with device.activate():
        for _ in range(5):
            work()
        device.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            work()
        device.synchronize()
    return (time.perf_counter() - start) / calls * 1e6


def _row(name, shape, device, fused, unfused, calls):
    with device.activate():
        got, want = fused(), unfused()
        diff = max(float(abs(device.to_host(g) - device.to_host(w)).max()) for g, w in zip(got, want))
    fused_us, unfused_us = _time(device, fused, calls), _time(device, unfused, calls)
    return {"kernel": name, "shape": shape, "fused_us": round(fused_us, 2), "unfused_us": round(unfused_us, 2),
            "speedup": round(unfused_us / fused_us, 2), "max_abs_diff": diff}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    from minikeras import backend, kernels
    from minikeras.device import registry

    if not backend.gpu_available():
        print("bench_fused_kernels: no GPU (CuPy with a CUDA device) here; nothing to measure.")
        return []
    device = registry.get_device("gpu:0")
    xp = device.xp
    rng = numpy.random.default_rng(0)

    def up(array):
        with device.activate():
            return device.asarray(numpy.asarray(array, numpy.float32))

    rows = []
    for m, k, n in [(128, 784, 512), (128, 512, 256), (128, 256, 10), (128, 2304, 256), (128, 1600, 128)]:
        a, b, bias = up(rng.normal(size=(m, k))), up(rng.normal(size=(k, n))), up(rng.normal(size=n))
        fused = kernels.get("matmul_bias_relu", device)
        bias_relu = kernels.get("bias_relu", device)
        rows.append(_row("matmul_bias_relu", f"{m}x{k}x{n}", device, lambda: (fused(a, b, bias, True),),
                         lambda: (bias_relu(a @ b, bias, True),), args.calls))
    for m, n in [(128, 512), (128, 256), (115200, 32), (28800, 64), (21632, 64), (131072, 32)]:
        grad, out = up(rng.normal(size=(m, n))), up(numpy.maximum(rng.normal(size=(m, n)), 0))
        with device.activate():
            target = xp.empty_like(grad)
        fused = kernels.get("relu_bias_backward", device)
        relu_backward = kernels.get("relu_backward", device)

        def unfused():
            masked = relu_backward(grad, out, target)
            return masked, masked.sum(axis=0)

        rows.append(_row("relu_bias_backward", f"{m}x{n}", device, lambda: fused(grad, out, target), unfused,
                         args.calls))
    logits = up(rng.normal(size=(128, 10)))
    with device.activate():
        labels = device.asarray(rng.integers(0, 10, 128))
    fused = kernels.get("sparse_softmax_cross_entropy_mean", device)
    forward = kernels.get("sparse_softmax_cross_entropy", device)
    backward = kernels.get("sparse_softmax_cross_entropy_backward", device)

    def unfused():
        loss, probabilities = forward(logits, labels, True)
        mean = loss.mean()
        seed = xp.ones_like(mean)
        return mean, backward(probabilities, labels, xp.broadcast_to(seed / 128, (128,)))

    rows.append(_row("sparse_softmax_cross_entropy_mean", "128x10", device, lambda: fused(logits, labels, True),
                     unfused, args.calls))
    report("bench_fused_kernels", rows, COLUMNS, extra={"device": str(device)}, path=args.json)
    return rows


if __name__ == "__main__":
    main()
