"""Speed of the common keras.ops added by issue 24, against NumPy and (when
importable in this process) PyTorch on the CPU: einsum, top_k, sort,
segment_sum, scatter, dot_product_attention.

Each row times the forward (and, for differentiable ops, forward + backward)
in ms per call, float32, as the minimum over ``--rounds`` rounds, the
libraries interleaved round by round so they see the same machine load.
NumPy has no autograd: its column is the forward a hand-written NumPy
program would run (for attention, the unfused reference), which is the
floor minikeras's forward competes with.

    python benchmarks/bench_ops.py                       # NumPy only (the project venv has no torch)
    /work/side/bin/python benchmarks/bench_ops.py        # with PyTorch, from the side environment
    python benchmarks/bench_ops.py --rounds 10 --json out.json

Writes a table to stdout and JSON (default benchmarks/results/bench_ops.json).
"""
import argparse
import json
import os
import platform
import sys
import time

import numpy

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import minikeras as mk  # noqa: E402
from minikeras import ops  # noqa: E402

try:
    import torch
except ImportError:  # the project's venv: NumPy only
    torch = None

rng = numpy.random.default_rng(0)


def _timed(function, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def _mk_train(forward, *arrays):
    def run():
        tensors = [mk.Tensor(a, requires_grad=True) for a in arrays]
        forward(*tensors).sum().backward()
    return run


def _torch_train(forward, *arrays):
    def run():
        tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
        forward(*tensors).sum().backward()
    return run


def _attention_numpy(q, k, v):
    logits = numpy.einsum("btnh,bsnh->bnts", q, k) / numpy.sqrt(q.shape[-1])
    logits -= logits.max(-1, keepdims=True)
    weights = numpy.exp(logits)
    weights /= weights.sum(-1, keepdims=True)
    return numpy.einsum("bnts,bsnh->btnh", weights, v)


def _cases():
    a, b = rng.normal(size=(32, 64, 64)).astype("float32"), rng.normal(size=(32, 64, 64)).astype("float32")
    rows = rng.normal(size=(256, 1000)).astype("float32")
    data = rng.normal(size=(100_000, 32)).astype("float32")
    ids = rng.integers(0, 1000, size=100_000)
    points = rng.integers(0, 1000, size=(50_000, 1))
    updates = rng.normal(size=(50_000, 32)).astype("float32")
    q = rng.normal(size=(8, 128, 8, 64)).astype("float32")
    k = rng.normal(size=(8, 128, 8, 64)).astype("float32")
    v = rng.normal(size=(8, 128, 8, 64)).astype("float32")
    ids_tensor, points_tensor = mk.tensor(ids), mk.tensor(points)
    cases = [
        ("einsum bij,bjk->bik (32x64x64)",
         lambda: ops.einsum("bij,bjk->bik", a, b), lambda: numpy.einsum("bij,bjk->bik", a, b, optimize=True),
         (lambda: torch.einsum("bij,bjk->bik", torch.from_numpy(a), torch.from_numpy(b))) if torch else None,
         _mk_train(lambda x, y: ops.einsum("bij,bjk->bik", x, y), a, b),
         _torch_train(lambda x, y: torch.einsum("bij,bjk->bik", x, y), a, b) if torch else None),
        ("top_k k=10 of (256, 1000)",
         lambda: ops.top_k(rows, 10), lambda: numpy.sort(numpy.argpartition(-rows, 10, axis=-1)[:, :10], axis=-1),
         (lambda: torch.topk(torch.from_numpy(rows), 10)) if torch else None,
         _mk_train(lambda x: ops.top_k(x, 10)[0], rows),
         _torch_train(lambda x: torch.topk(x, 10).values, rows) if torch else None),
        ("sort (256, 1000) last axis",
         lambda: ops.sort(rows), lambda: numpy.sort(rows, axis=-1),
         (lambda: torch.sort(torch.from_numpy(rows), dim=-1)) if torch else None,
         _mk_train(lambda x: ops.sort(x), rows),
         _torch_train(lambda x: torch.sort(x, dim=-1).values, rows) if torch else None),
        ("segment_sum (100000, 32) -> 1000",
         lambda: ops.segment_sum(data, ids_tensor, num_segments=1000),
         lambda: numpy.add.at(numpy.zeros((1000, 32), "float32"), ids, data),
         (lambda: torch.zeros(1000, 32).index_add_(0, torch.from_numpy(ids), torch.from_numpy(data))) if torch else None,
         _mk_train(lambda x: ops.segment_sum(x, ids_tensor, num_segments=1000), data),
         _torch_train(lambda x: torch.zeros(1000, 32).index_add(0, torch.from_numpy(ids), x), data) if torch else None),
        ("scatter 50000 rows of 32 -> (1000, 32)",
         lambda: ops.scatter(points_tensor, updates, (1000, 32)),
         lambda: numpy.add.at(numpy.zeros((1000, 32), "float32"), points[:, 0], updates),
         (lambda: torch.zeros(1000, 32).index_add_(0, torch.from_numpy(points[:, 0]), torch.from_numpy(updates)))
         if torch else None,
         _mk_train(lambda u: ops.scatter(points_tensor, u, (1000, 32)), updates),
         _torch_train(lambda u: torch.zeros(1000, 32).index_add(0, torch.from_numpy(points[:, 0]), u), updates)
         if torch else None),
        ("dot_product_attention (8, 128, 8, 64)",
         lambda: ops.dot_product_attention(q, k, v), lambda: _attention_numpy(q, k, v),
         (lambda: torch.nn.functional.scaled_dot_product_attention(
             *(torch.from_numpy(t).transpose(1, 2) for t in (q, k, v)))) if torch else None,
         _mk_train(lambda x, y, z: ops.dot_product_attention(x, y, z), q, k, v),
         _torch_train(lambda x, y, z: torch.nn.functional.scaled_dot_product_attention(
             x.transpose(1, 2), y.transpose(1, 2), z.transpose(1, 2)), q, k, v) if torch else None),
    ]
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="torch intra-op threads (1: steady on a shared machine; minikeras keeps its own pool)")
    parser.add_argument("--json", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                                       "bench_ops.json"))
    args = parser.parse_args()
    if torch is not None:
        torch.set_num_threads(args.torch_threads)
    results = []
    for name, ours, numpy_forward, torch_forward, ours_train, torch_train in _cases():
        timings = {"minikeras fwd": [], "numpy fwd": [], "torch fwd": [], "minikeras fwd+bwd": [],
                   "torch fwd+bwd": []}
        for _ in range(args.rounds):  # interleaved, so every library sees the same load
            for key, function in (("minikeras fwd", ours), ("numpy fwd", numpy_forward), ("torch fwd", torch_forward),
                                  ("minikeras fwd+bwd", ours_train), ("torch fwd+bwd", torch_train)):
                if function is not None:
                    timings[key].append(_timed(function, 1))
        row = {"op": name, **{key: (min(values) if values else None) for key, values in timings.items()}}
        results.append(row)
    columns = ["minikeras fwd", "numpy fwd", "torch fwd", "minikeras fwd+bwd", "torch fwd+bwd"]
    print(f"| op | {' | '.join(c + ' (ms)' for c in columns)} |")
    print("|---" * (len(columns) + 1) + "|")
    for row in results:
        cells = ["-" if row[c] is None else f"{row[c]:.2f}" for c in columns]
        print(f"| {row['op']} | {' | '.join(cells)} |")
    meta = {"python": platform.python_version(), "numpy": numpy.__version__,
            "torch": getattr(torch, "__version__", None), "torch_threads": args.torch_threads,
            "load_average": os.getloadavg(), "rounds": args.rounds}
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as handle:
        json.dump({"meta": meta, "results": results}, handle, indent=1)
    print(f"load average {meta['load_average']}; JSON: {args.json}")


if __name__ == "__main__":
    main()
