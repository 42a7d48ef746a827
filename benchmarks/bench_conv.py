"""Convolution and pooling speed: minikeras against PyTorch, layer by layer.

Times forward + backward (ms per call, float32, batch 128) for the conv and
max-pool layers of the target CNNs (benchmarks/anchors.py: the Fashion-MNIST
CNN and the CIFAR-10 CNN). When a Python with torch is found (``--torch-python``,
default /work/anchors/bin/python), the same layers run in PyTorch (NCHW, its
native layout) in a worker subprocess, interleaved with ours round by round
so that both see the same load on a shared machine; each side's time is the
minimum over its rounds.

    python benchmarks/bench_conv.py                 # table + benchmarks/results/bench_conv.json
    python benchmarks/bench_conv.py --rounds 10 --json out.json
    python benchmarks/bench_conv.py --no-torch
    python benchmarks/bench_conv.py --threads 1     # BLAS / torch intra-op threads

``--threads`` sets OPENBLAS_NUM_THREADS (and OMP_NUM_THREADS) for this process
before NumPy loads, and torch.set_num_threads in the worker. On a shared,
loaded machine one thread gives far steadier (and often faster) numbers.
"""
import argparse
import json
import os
import subprocess
import sys
import time


def _early_threads(argv):
    """Apply --threads before NumPy is imported (OpenBLAS reads it once, at load)."""
    for index, arg in enumerate(argv):
        value = arg.split("=", 1)[1] if arg.startswith("--threads=") else None
        if arg == "--threads" and index + 1 < len(argv):
            value = argv[index + 1]
        if value:
            os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = value


_early_threads(sys.argv[1:])

import numpy  # noqa: E402  (after the thread setting)

BATCH = 128
# name, kind, input shape (NHWC), then (filters, kernel, padding) for convs or pool size for pools,
# and whether the input needs a gradient (not for the first layer of a model).
LAYERS = [
    ("mnist conv1 28x28x1->32", "conv", (BATCH, 28, 28, 1), (32, 3, "valid"), False),
    ("mnist pool1 26x26x32", "pool", (BATCH, 26, 26, 32), 2, True),
    ("mnist conv2 13x13x32->64", "conv", (BATCH, 13, 13, 32), (64, 3, "valid"), True),
    ("mnist pool2 11x11x64", "pool", (BATCH, 11, 11, 64), 2, True),
    ("cifar conv1 32x32x3->32 same", "conv", (BATCH, 32, 32, 3), (32, 3, "same"), False),
    ("cifar conv2 32x32x32->32", "conv", (BATCH, 32, 32, 32), (32, 3, "valid"), True),
    ("cifar pool1 30x30x32", "pool", (BATCH, 30, 30, 32), 2, True),
    ("cifar conv3 15x15x32->64 same", "conv", (BATCH, 15, 15, 32), (64, 3, "same"), True),
    ("cifar conv4 15x15x64->64", "conv", (BATCH, 15, 15, 64), (64, 3, "valid"), True),
    ("cifar pool2 13x13x64", "pool", (BATCH, 13, 13, 64), 2, True),
]
DEFAULT_TORCH_PYTHON = "/work/anchors/bin/python"


def _inputs(layer):
    """Deterministic float32 input, kernel (HWIO) and output gradient for one layer (NHWC)."""
    name, kind, shape, spec, needs_grad = layer
    rng = numpy.random.default_rng(0)
    x = rng.standard_normal(shape, dtype=numpy.float32)
    if kind == "conv":
        filters, size, padding = spec
        kernel = rng.standard_normal((size, size, shape[3], filters), dtype=numpy.float32) * 0.1
        out_hw = shape[1] if padding == "same" else shape[1] - size + 1
        grad = rng.standard_normal((shape[0], out_hw, out_hw, filters), dtype=numpy.float32)
    else:
        kernel = None
        grad = rng.standard_normal((shape[0], shape[1] // spec, shape[2] // spec, shape[3]), dtype=numpy.float32)
    return x, kernel, grad


def _best_of(step, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


class MinikerasRunner:
    """Runs one layer's forward + backward with minikeras."""

    def __init__(self):
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        import minikeras

        self.mk = minikeras

    def prepare(self, layer):
        mk = self.mk
        name, kind, shape, spec, needs_grad = layer
        x, kernel, grad = _inputs(layer)
        x = mk.Tensor(x, requires_grad=needs_grad)
        if kind == "conv":
            kernel = mk.Tensor(kernel, requires_grad=True)
            padding = spec[2]

            def step():
                out = mk.ops.conv2d(x, kernel, padding=padding)
                out.backward(grad)
                x.grad = kernel.grad = None
        else:

            def step():
                out = mk.ops.max_pool2d(x, spec)
                out.backward(grad)
                x.grad = None

        return step


TORCH_WORKER = r"""
import json, sys, time
import numpy, torch
layers = json.loads(sys.argv[1])
if int(sys.argv[2]) > 0:
    torch.set_num_threads(int(sys.argv[2]))
steps = {}
def inputs(layer):
    name, kind, shape, spec, needs_grad = layer
    rng = numpy.random.default_rng(0)
    x = rng.standard_normal(shape, dtype=numpy.float32)
    x = torch.tensor(x).permute(0, 3, 1, 2).contiguous().requires_grad_(needs_grad)
    if kind == "conv":
        filters, size, padding = spec
        conv = torch.nn.Conv2d(shape[3], filters, size, padding=padding, bias=False)
        def step():
            out = conv(x)
            out.backward(grad_for(out))
            x.grad = None; conv.weight.grad = None
    else:
        def step():
            out = torch.nn.functional.max_pool2d(x, spec)
            out.backward(grad_for(out))
            x.grad = None
    return step
grads = {}
def grad_for(out):
    key = tuple(out.shape)
    if key not in grads:
        grads[key] = torch.randn(key)
    return grads[key]
print(json.dumps({"version": torch.__version__, "threads": torch.get_num_threads()}), flush=True)
for line in sys.stdin:
    index, repeats = json.loads(line)
    if index not in steps:
        steps[index] = inputs(layers[index])
        steps[index]()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter(); steps[index](); best = min(best, time.perf_counter() - start)
    print(json.dumps(best * 1e3), flush=True)
"""


class TorchRunner:
    """A torch worker subprocess that times one layer when asked (so rounds interleave with ours)."""

    def __init__(self, python, threads):
        self.process = subprocess.Popen(
            [python, "-c", TORCH_WORKER, json.dumps(LAYERS), str(threads or 0)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.info = json.loads(self.process.stdout.readline())

    def time(self, index, repeats):
        self.process.stdin.write(json.dumps([index, repeats]) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def _torch_available(python):
    if not python or not os.path.exists(python):
        return False
    check = subprocess.run([python, "-c", "import torch"], capture_output=True)
    return check.returncode == 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per layer (min is kept)")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls per round")
    parser.add_argument("--torch-python", default=DEFAULT_TORCH_PYTHON)
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--only", default="", help="run only layers whose name contains this")
    parser.add_argument("--threads", type=int, default=0, help="intra-op threads for both (0: library defaults)")
    default_json = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "bench_conv.json")
    parser.add_argument("--json", default=default_json)
    args = parser.parse_args(argv)

    ours = MinikerasRunner()
    torch_runner = None
    if not args.no_torch and _torch_available(args.torch_python):
        torch_runner = TorchRunner(args.torch_python, args.threads)
    results = []
    print(f"{'layer (fwd+bwd, batch 128)':34s} {'minikeras ms':>13s} {'torch ms':>9s} {'ratio':>6s}")
    for index, layer in enumerate(LAYERS):
        if args.only not in layer[0]:
            continue
        step = ours.prepare(layer)
        step()  # warm up (allocations, first-touch)
        best_ours = best_torch = float("inf")
        for _ in range(args.rounds):
            best_ours = min(best_ours, _best_of(step, args.repeats))
            if torch_runner is not None:
                best_torch = min(best_torch, torch_runner.time(index, args.repeats))
        row = {"layer": layer[0], "input_shape": list(layer[2]), "minikeras_ms": round(best_ours, 3)}
        torch_text = ratio_text = "-"
        if torch_runner is not None:
            row["torch_ms"] = round(best_torch, 3)
            row["ratio"] = round(best_ours / best_torch, 3)
            torch_text, ratio_text = f"{best_torch:9.2f}", f"{best_ours / best_torch:6.2f}"
        results.append(row)
        print(f"{layer[0]:34s} {best_ours:13.2f} {torch_text:>9s} {ratio_text:>6s}", flush=True)
    summary = {
        "batch": BATCH,
        "numpy": numpy.__version__,
        "threads": args.threads or "default",
        "load_average": os.getloadavg(),
        "layers": results,
        "cpu_count": os.cpu_count(),
    }
    if torch_runner is not None:
        summary["torch"] = torch_runner.info
        torch_runner.close()
        total_ours = sum(r["minikeras_ms"] for r in results)
        total_torch = sum(r["torch_ms"] for r in results)
        summary["total_ms"] = {"minikeras": round(total_ours, 2), "torch": round(total_torch, 2)}
        print(f"{'total':34s} {total_ours:13.2f} {total_torch:9.2f} {total_ours / total_torch:6.2f}")
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as handle:
        json.dump(summary, handle, indent=2)
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
