"""im2col against Winograd F(2x2, 3x3), layer by layer and direction by direction, in one process.

For each 3x3 stride-1 convolution of the target CNNs (and a sweep of
channel counts), times the forward pass of the fused convolution + bias +
ReLU op (what Conv2D layers run) with each algorithm, and its backward
with each of the four combinations of algorithms for the input's and the
kernel's gradients (``tuning.CONV_ALGORITHM`` set to
``forward,input,kernel``), taking turns round by round so that all see the
same load, and keeps each one's best round. Times are this thread's CPU
time (``time.thread_time``) with one op thread by default, which a loaded
machine disturbs far less than wall time. With ``--cold`` (the default) a
32 MB buffer is written before each timed call, so the activations come
from main memory as they do inside a training step (in isolation they
would stay in the last-level cache between repeats, which favoured
Winograd's strided NHWC passes). Also prints what ``conv_algorithm.choose``
picks and the cost model's estimates, so the model can be checked against
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


_FLUSH = None


def _time(function, state, cold):
    global _FLUSH
    if cold:
        if _FLUSH is None:
            _FLUSH = numpy.zeros(8 << 20, numpy.float32)  # 32 MB: the machine's L3
        _FLUSH += 1.0
    start = time.thread_time()
    function(state)
    return time.thread_time() - start


# Per round, backward (input's algorithm, kernel's) with the forward algorithm
# given first: each forward algorithm runs twice per round.
COMBINATIONS = [("im2col", "im2col", "im2col"), ("winograd", "winograd", "winograd"),
                ("im2col", "winograd", "im2col"), ("winograd", "im2col", "winograd")]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", default=None, help="op threads (MINIKERAS_NUM_THREADS; default 1)")
    parser.add_argument("--layers", nargs="*", default=None, help="substrings of layer names to run")
    parser.add_argument("--warm", action="store_true", help="do not flush the cache before each timed call")
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
        geometry = conv_geometry("conv2d", x, kernel, 2, 1, padding, 1)
        grad = rng.standard_normal((shape[0], geometry.out_h, geometry.out_w, filters)).astype(numpy.float32)
        forward_best, backward_best = {}, {}
        combinations = COMBINATIONS if input_grad else COMBINATIONS[:2]
        for _ in range(args.rounds):
            for combination in combinations:
                tuning.CONV_ALGORITHM = ",".join(combination)
                state = {}

                def forward(state):
                    state["out"] = conv_bias_relu(*tensors, relu=True, padding=padding)

                def backward(state):
                    state["out"].backward(grad)

                times = (_time(forward, state, not args.warm), _time(backward, state, not args.warm))
                for tensor in tensors:
                    tensor.grad = None
                forward_best[combination[0]] = min(forward_best.get(combination[0], float("inf")), times[0])
                backward_best[combination[1:]] = min(backward_best.get(combination[1:], float("inf")), times[1])
        tuning.CONV_ALGORITHM = "auto"
        chosen = conv_algorithm.choose(device, geometry, filters, x.dtype, True, input_grad)
        pixels = shape[0] * geometry.out_h * geometry.out_w * 1e-6  # ns per pixel -> ms
        row = {"layer": name, "load": os.getloadavg()[0], "chosen": "/".join(chosen)}
        for algorithm, seconds in forward_best.items():
            row[f"fwd_{algorithm}_ms"] = 1e3 * seconds
            row[f"model_fwd_{algorithm}_ms"] = pixels * conv_algorithm.forward_cost(algorithm, geometry, filters)
        for (input_algorithm, kernel_algorithm), seconds in backward_best.items():
            key = f"{input_algorithm[0]}{kernel_algorithm[0]}"  # dx, dk: "iw" = col2im + Winograd kernel gradient
            row[f"bwd_{key}_ms"] = 1e3 * seconds
            row[f"model_bwd_{key}_ms"] = pixels * conv_algorithm.backward_cost(input_algorithm, kernel_algorithm,
                                                                              geometry, filters, input_grad)
        measured_best = (min(forward_best, key=forward_best.get),) + min(backward_best, key=backward_best.get)
        row["measured_best"] = "/".join(measured_best)
        rows.append(row)
        print({key: (round(value, 2) if isinstance(value, float) else value) for key, value in row.items()},
              flush=True)
    columns = ["layer", "fwd_im2col_ms", "fwd_winograd_ms", "bwd_ii_ms", "bwd_iw_ms", "bwd_wi_ms", "bwd_ww_ms",
               "measured_best", "chosen", "load"]
    report("bench_conv_algorithms", rows, columns, path=args.json)
    return rows


if __name__ == "__main__":
    main()
