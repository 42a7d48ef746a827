"""im2col against Winograd F(2x2, 3x3), layer by layer, in one process.

For each 3x3 stride-1 convolution of the target CNNs (and a sweep of
channel counts), times the forward and the backward of the fused
convolution + bias + ReLU op (what Conv2D layers run) with each algorithm
forced (``tuning.CONV_ALGORITHM``), taking turns round by round so that
both see the same load, and keeps each one's best round. Times are this
thread's CPU time (``time.thread_time``) with one op thread by default,
which a loaded machine disturbs far less than wall time. Also prints what
``conv_algorithm.choose`` picks, so the cost model can be checked against
the measurement.

    python benchmarks/bench_conv_algorithms.py                  # table + JSON
    python benchmarks/bench_conv_algorithms.py --rounds 9 --threads 2 --json out.json
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _early_threads(argv):
    for index, arg in enumerate(argv):
        if arg == "--threads" and index + 1 < len(argv):
            os.environ["MINIKERAS_NUM_THREADS"] = argv[index + 1]
            return
    os.environ.setdefault("MINIKERAS_NUM_THREADS", "1")


_early_threads(sys.argv[1:])
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import numpy  # noqa: E402

BATCH = 128
# name, input shape (NHWC), filters, padding, whether the input needs a gradient
LAYERS = [
    ("cifar conv2 32x32x32->32", (BATCH, 32, 32, 32), 32, "valid", True),
    ("cifar conv3 15x15x32->64 same", (BATCH, 15, 15, 32), 64, "same", True),
    ("cifar conv4 15x15x64->64", (BATCH, 15, 15, 64), 64, "valid", True),
    ("mnist conv2 13x13x32->64", (BATCH, 13, 13, 32), 64, "valid", True),
    ("cifar conv1 32x32x3->32 same", (BATCH, 32, 32, 3), 32, "same", False),
    ("mnist conv1 28x28x1->32", (BATCH, 28, 28, 1), 32, "valid", False),
    ("sweep 16x16x8->8 same", (BATCH, 16, 16, 8), 8, "same", True),
    ("sweep 16x16x16->16 same", (BATCH, 16, 16, 16), 16, "same", True),
    ("sweep 16x16x128->128 same", (BATCH, 16, 16, 128), 128, "same", True),
    ("sweep 8x8x256->256 same", (BATCH, 8, 8, 256), 256, "same", True),
]


def _time(function, state):
    start = time.thread_time()
    function(state)
    return time.thread_time() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", default=None, help="op threads (MINIKERAS_NUM_THREADS; default 1)")
    parser.add_argument("--layers", nargs="*", default=None, help="substrings of layer names to run")
    parser.add_argument("--json", default=os.path.join(HERE, "results", "bench_conv_algorithms.json"))
    args = parser.parse_args(argv)
    import minikeras as mk
    from _report import report
    from minikeras.backend import tuning
    from minikeras.device import registry
    from minikeras.ops.nn import conv_algorithm
    from minikeras.ops.nn.conv import conv_bias_relu
    from minikeras.ops.nn.conv_args import conv_geometry

    device = registry.default_device()
    rng = numpy.random.default_rng(0)
    rows = []
    for name, shape, filters, padding, input_grad in LAYERS:
        if args.layers and not any(part in name for part in args.layers):
            continue
        x = rng.standard_normal(shape, dtype=numpy.float32)
        kernel = (rng.standard_normal((3, 3, shape[-1], filters)) / numpy.sqrt(9 * shape[-1])).astype(numpy.float32)
        bias = rng.standard_normal(filters).astype(numpy.float32)
        tensors = (mk.Tensor(x, requires_grad=input_grad), mk.Tensor(kernel, requires_grad=True),
                   mk.Tensor(bias, requires_grad=True))
        grad = rng.standard_normal((shape[0],) + (conv_geometry("conv2d", x, kernel, 2, 1, padding, 1).out_h,) * 2
                                   + (filters,)).astype(numpy.float32)
        best = {}
        for _ in range(args.rounds):
            for algorithm in ("im2col", "winograd"):
                tuning.CONV_ALGORITHM = algorithm
                state = {}

                def forward(state):
                    state["out"] = conv_bias_relu(*tensors, relu=True, padding=padding)

                def backward(state):
                    state["out"].backward(grad)

                times = (_time(forward, state), _time(backward, state))
                for tensor in tensors:
                    tensor.grad = None
                old = best.get(algorithm, (float("inf"),) * 2)
                best[algorithm] = tuple(min(a, b) for a, b in zip(old, times))
        tuning.CONV_ALGORITHM = "auto"
        geometry = conv_geometry("conv2d", x, kernel, 2, 1, padding, 1)
        chosen = conv_algorithm.choose(device, geometry, filters, x.dtype, input_grad)
        i2c, wino = best["im2col"], best["winograd"]
        rows.append({"layer": name, "im2col_fwd_ms": 1e3 * i2c[0], "im2col_bwd_ms": 1e3 * i2c[1],
                     "winograd_fwd_ms": 1e3 * wino[0], "winograd_bwd_ms": 1e3 * wino[1],
                     "speedup": sum(i2c) / sum(wino), "chosen": chosen,
                     "load": os.getloadavg()[0]})
        print(rows[-1], flush=True)
    report("bench_conv_algorithms", rows, ["layer", "im2col_fwd_ms", "im2col_bwd_ms", "winograd_fwd_ms",
                                           "winograd_bwd_ms", "speedup", "chosen", "load"], path=args.json)
    return rows


if __name__ == "__main__":
    main()
