"""Where a CNN training step's CPU time goes, op by op and inside each op.

Runs ``model.train_step`` of the Fashion-MNIST or CIFAR-10 CNN of
benchmarks/compare.py (batch 128, Adam) on random data with one op thread
(``MINIKERAS_NUM_THREADS=1``, set here before minikeras loads), so that
every piece of work runs in the calling thread and its CPU time
(``time.thread_time``) measures it whatever else loads the machine. Each
op's forward and backward is timed, and inside them the pieces that the
convolutions are made of: the GEMMs, the im2col and col2im copies, the
Winograd transforms, the bias + ReLU epilogue and its backward, pooling,
the optimizer's update. The time of a piece is exclusive (its children's
time is subtracted). Beside each convolution: its multiply-adds and its
GEMM floor, the time its FLOPs take at the SGEMM rate measured here on a
large product (one thread).

    python benchmarks/profile_conv_step.py --model cifar_cnn --steps 10
    python benchmarks/profile_conv_step.py --model cnn --json out.json

Prints one row per (layer, direction, piece): the median over the steps.
"""
import argparse
import collections
import json
import os
import statistics
import sys
import time

os.environ.setdefault("MINIKERAS_NUM_THREADS", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import numpy  # noqa: E402

_stack = []  # [label, start, children's time]
_totals = collections.defaultdict(float)


def _enter(label):
    _stack.append([label, time.thread_time(), 0.0])


def _leave():
    label, start, children = _stack.pop()
    elapsed = time.thread_time() - start
    _totals[label] += elapsed - children
    if _stack:
        _stack[-1][2] += elapsed
    return elapsed


def _piece_label(piece):
    """``(op, direction, piece)``: a piece inside the op that runs now."""
    op, direction, _ = _stack[-1][0] if _stack else ("step", "python", None)
    return (op, direction, piece)


def _timed_piece(piece, function):
    def timed(*args, **kwargs):
        _enter(_piece_label(piece))
        try:
            return function(*args, **kwargs)
        finally:
            _leave()
    return timed


def _op_key(function, shapes):
    """A readable name for one op instance: its class and its first input's shape."""
    shape = "x".join(str(size) for size in shapes[0][1:]) if shapes and len(shapes[0]) > 1 else ""
    return f"{type(function).__name__}({shape})"


def _patch(mk):
    from minikeras import kernels
    from minikeras.autograd.function import Function
    from minikeras.backend import threads
    from minikeras.device.device import Device

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    for cls in set(subclasses(Function)):
        for direction in ("forward", "backward"):
            if direction not in cls.__dict__:
                continue
            original = cls.__dict__[direction]

            def timed(self, *arrays, _original=original, _direction=direction):
                if _direction == "forward":
                    self._profile_key = _op_key(self, [getattr(a, "shape", ()) for a in arrays])
                key = getattr(self, "_profile_key", type(self).__name__)
                _enter((key, _direction, "python/other"))
                try:
                    return _original(self, *arrays)
                finally:
                    _leave()
            setattr(cls, direction, timed)
    Device.gemm = _timed_piece("gemm", Device.gemm)
    threads.matmul = _timed_piece("matmul", threads.matmul)
    for name, kernel in kernels.registered().items():
        kernel.reference = _timed_piece(name, kernel.reference)
    for module, names in _EXTRA_PIECES:
        try:
            target = __import__(module, fromlist=["_"])
        except ImportError:
            continue
        for name in names:
            if hasattr(target, name):
                setattr(target, name, _timed_piece(name, getattr(target, name)))


# Functions inside the convolution modules timed as pieces (looked up by
# name, so that the script runs on checkouts that lack some of them).
_EXTRA_PIECES = [
    ("minikeras.ops.nn.winograd", ("input_transform", "output_transform", "kernel_transform",
                                   "output_transform_adjoint", "input_transform_adjoint",
                                   "kernel_transform_adjoint", "batched_gemm")),
]


def _flush(model):
    """Finish the step's logs (the method is ``flush_logs``; older checkouts name it ``_flush_logs``)."""
    flush = getattr(model, "flush_logs", None) or getattr(model, "_flush_logs")
    flush()


def sgemm_rate(size=1024, repeats=5):
    """FLOP/s of one thread on a ``size``-cubed float32 product (best of ``repeats``)."""
    a = numpy.random.default_rng(0).random((size, size), dtype=numpy.float32)
    b = a.T.copy()
    best = float("inf")
    for _ in range(repeats):
        start = time.thread_time()
        a @ b
        best = min(best, time.thread_time() - start)
    return 2 * size ** 3 / best


def conv_macs(model, input_shape, batch):
    """Per Conv2D layer: (name, forward multiply-adds of the batch, whether its input needs a gradient)."""
    import minikeras as mk

    result = []
    value = mk.tensor(numpy.zeros((1,) + input_shape, numpy.float32))
    for position, layer in enumerate(model.layers):
        out = layer(value)
        if type(layer).__name__ == "Conv2D":
            kh, kw, cin, cout = layer.kernel.shape
            result.append((layer.name, batch * out.shape[1] * out.shape[2] * kh * kw * cin, cout, position > 0))
        value = out
    return [(name, macs * cout, grad) for name, macs, cout, grad in result]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="cifar_cnn", choices=["cnn", "cifar_cnn"])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    import minikeras as mk
    from compare import _minikeras_model

    shapes = {"cnn": (28, 28, 1), "cifar_cnn": (32, 32, 3)}
    mk.random.seed(0)
    rng = numpy.random.default_rng(0)
    model = _minikeras_model(args.model)
    model.compile(optimizer=mk.optimizers.Adam(1e-3), loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = mk.tensor(rng.random((args.batch,) + shapes[args.model], dtype=numpy.float32))
    y = mk.tensor(rng.integers(0, 10, size=args.batch))
    for _ in range(2):
        model.train_step((x, y))
        _flush(model)
    _patch(mk)
    apply_gradients = model.optimizer.apply_gradients

    def timed_apply(*a, **k):
        _enter(("optimizer", "update", "python/other"))
        try:
            return apply_gradients(*a, **k)
        finally:
            _leave()
    model.optimizer.apply_gradients = timed_apply
    per_step = []
    steps = []
    for _ in range(args.steps):
        _totals.clear()
        _enter(("step", "python", "python/other"))
        model.train_step((x, y))
        _flush(model)
        steps.append(_leave())
        per_step.append(dict(_totals))
    rate = sgemm_rate()
    keys = {key for totals in per_step for key in totals}
    merged = {key: 1e3 * statistics.median([totals.get(key, 0.0) for totals in per_step]) for key in keys}
    total = 1e3 * statistics.median(steps)
    print(f"model {args.model}, batch {args.batch}, one op thread; step CPU time median {total:.1f} ms; "
          f"SGEMM rate {rate / 1e9:.1f} GFLOP/s (one thread, 1024^3)")
    by_op = collections.defaultdict(float)
    for (op, direction, piece), ms in merged.items():
        by_op[(op, direction)] += ms
    order = sorted(by_op, key=lambda k: -by_op[k])
    for op, direction in order:
        pieces = {piece: ms for (o, d, piece), ms in merged.items() if (o, d) == (op, direction) and ms >= 0.05}
        detail = ", ".join(f"{piece} {ms:.1f}" for piece, ms in sorted(pieces.items(), key=lambda kv: -kv[1]))
        print(f"{op:32s} {direction:9s} {by_op[(op, direction)]:7.1f} ms   {detail}")
    print("GEMM floors (one thread at the measured rate):")
    for name, macs, input_grad in conv_macs(model, shapes[args.model], args.batch):
        flops = 2 * macs
        print(f"  {name:12s} fwd {flops / rate * 1e3:6.1f} ms, kernel grad {flops / rate * 1e3:6.1f} ms, "
              f"input grad {(flops / rate * 1e3) if input_grad else 0:6.1f} ms  ({macs / 1e9:.3f} G MACs fwd)")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"model": args.model, "step_ms": total, "sgemm_gflops": rate / 1e9,
                       "rows": [dict(op=o, dir=d, piece=p, ms=ms) for (o, d, p), ms in merged.items()]}, handle,
                      indent=1)


if __name__ == "__main__":
    main()
