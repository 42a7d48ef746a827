"""Autograd overhead per op, and a 512x512 matmul against raw NumPy.

1. Overhead: a chain of 100 tiny elementwise ops (a 4-element float32
   tensor, alternately ``y * 1.0001`` and ``y + 0.5``) run forward and
   backward, minus the same arithmetic done with raw NumPy (forward values
   and the backward products), divided by the number of ops.
2. Matmul: ``a @ b`` for 512x512 float32 forward and backward (d_a, d_b)
   against NumPy doing the same three products, in this process (where
   minikeras has made BLAS single-threaded) and, for context, in a fresh
   process with NumPy's default BLAS threads.

Targets on the 2-core development machine: <= 15 us overhead per op;
matmul within 1.1x of raw NumPy.

Usage: python benchmarks/bench_overhead.py [--json PATH]
"""
import argparse
import os
import sys

import numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minikeras as mk  # noqa: E402
from _report import best_of, report  # noqa: E402

CHAIN = 100


def chain_minikeras(x):
    y = x
    for i in range(CHAIN // 2):
        y = y * 1.0001
        y = y + 0.5
    y.sum().backward()
    x.grad = None


def chain_numpy(x):
    # The same arithmetic: forward values, then backward products.
    y = x
    values = []
    for i in range(CHAIN // 2):
        y = y * numpy.float32(1.0001)
        values.append(y)
        y = y + numpy.float32(0.5)
    total = y.sum()
    grad = numpy.ones_like(y)
    for i in range(CHAIN // 2):
        grad = grad * numpy.float32(1.0001)
    return total, grad


_DEFAULT_THREADS_SNIPPET = """
import time, numpy
rng = numpy.random.default_rng(0)
a = rng.standard_normal((512, 512), dtype=numpy.float32)
b = rng.standard_normal((512, 512), dtype=numpy.float32)
g = numpy.ones((512, 512), dtype=numpy.float32)
best = 1e9
for _ in range(15):
    start = time.perf_counter()
    for _ in range(5):
        a @ b, g @ b.T, a.T @ g
    best = min(best, (time.perf_counter() - start) / 5)
print(best)
"""


def _numpy_matmul_default_threads():
    """The three products in a fresh process that never imported minikeras,
    so NumPy's BLAS keeps its default thread count (minikeras makes BLAS
    single-threaded in its own process; see minikeras/backend/threads.py)."""
    import subprocess

    out = subprocess.run([sys.executable, "-c", _DEFAULT_THREADS_SNIPPET], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None, help="where to write the JSON results")
    args = parser.parse_args()

    host = numpy.ones(4, dtype=numpy.float32)
    x = mk.Tensor(host, requires_grad=True)
    t_mk = best_of(lambda: chain_minikeras(x), repeats=7, number=50)
    t_np = best_of(lambda: chain_numpy(host), repeats=7, number=50)
    overhead_us = (t_mk - t_np) / CHAIN * 1e6

    rng = numpy.random.default_rng(0)
    a_host = rng.standard_normal((512, 512), dtype=numpy.float32)
    b_host = rng.standard_normal((512, 512), dtype=numpy.float32)
    a = mk.Tensor(a_host, requires_grad=True)
    b = mk.Tensor(b_host, requires_grad=True)
    seed_grad = numpy.ones((512, 512), dtype=numpy.float32)

    def matmul_minikeras():
        out = a @ b
        out.backward(seed_grad)
        a.grad = b.grad = None

    def matmul_numpy():
        out = a_host @ b_host
        grad_a = seed_grad @ b_host.T
        grad_b = a_host.T @ seed_grad
        return out, grad_a, grad_b

    t_mm = best_of(matmul_minikeras, repeats=15, number=5)
    t_mm_np = best_of(matmul_numpy, repeats=15, number=5)
    t_mm_np_default = _numpy_matmul_default_threads()

    rows = [
        {"measure": "tiny-op overhead, fwd+bwd", "minikeras": t_mk / CHAIN * 1e6, "numpy": t_np / CHAIN * 1e6,
         "result": overhead_us, "unit": "us/op", "target": "<= 15 us overhead"},
        {"measure": "matmul 512x512 f32 fwd+bwd", "minikeras": t_mm * 1e3, "numpy": t_mm_np * 1e3,
         "result": t_mm / t_mm_np, "unit": "ms; result = ratio", "target": "<= 1.1x"},
        {"measure": "  same, numpy in its own process, default BLAS threads", "minikeras": t_mm * 1e3,
         "numpy": t_mm_np_default * 1e3, "result": t_mm / t_mm_np_default, "unit": "ms; result = ratio",
         "target": "(context)"},
    ]
    report("bench_overhead", rows, ["measure", "minikeras", "numpy", "result", "unit", "target"],
           extra={"overhead_us_per_op": overhead_us, "matmul_ratio": t_mm / t_mm_np}, path=args.json)


if __name__ == "__main__":
    main()
