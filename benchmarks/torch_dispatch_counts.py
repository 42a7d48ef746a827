"""PyTorch's operator dispatches per training step and per predict batch,
for the three models of benchmarks/anchors.py (issue 21's comparison).

Run with a Python that has torch (the side environment; torch is never a
minikeras dependency):

    /work/side/bin/python benchmarks/torch_dispatch_counts.py [--json out.json]

A ``TorchDispatchMode`` counts every ATen operator that reaches a kernel,
on CPU tensors, excluding views and metadata (``OpOverload.is_view``,
``detach``, ``alias``): ``*_dispatch`` columns, the numbers issue 21
quotes. The ``*_kernels`` columns also leave out what launches nothing on a
GPU: the profiler's ``_record_function_*`` markers and ``_local_scalar_dense``
(reading the CPU step counter). On a GPU each remaining op is about one
launch, but ``convolution`` through cuDNN is often two (with the bias) and
``convolution_backward`` two or three (input, weight and bias gradients),
and a ``_foreach_`` op is one launch per chunk of tensors. Steps are counted after two warm-up steps, with Adam in its
three implementations: ``fused=True`` (one ``_fused_adam_`` op), foreach
(the default on a GPU) and single-tensor (``foreach=False``, the default on
a CPU), and the loss as in anchors.py (``CrossEntropyLoss``).
"""
import argparse
import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import anchors  # noqa: E402

INPUT_SHAPES = {"mlp": (784,), "cnn": (1, 28, 28), "cifar_cnn": (3, 32, 32)}
_NOT_KERNELS = {"detach", "alias", "lift_fresh"}
_HOST_ONLY = {"_record_function_enter_new", "_record_function_exit", "_local_scalar_dense"}


class Counter(TorchDispatchMode):
    """Counts the ATen operators that run a kernel (by name, for --verbose)."""

    def __init__(self):
        super().__init__()
        self.ops = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if not func.is_view and func.overloadpacket.__name__ not in _NOT_KERNELS:
            self.ops[func.overloadpacket.__name__] += 1
        return func(*args, **(kwargs or {}))


def count(model_name, adam, verbose=False):
    """``{"train": n, "predict": n}`` dispatches for one model and Adam variant."""
    torch.manual_seed(0)
    model = anchors._torch_model(model_name)
    options = {"fused": {"fused": True}, "foreach": {"foreach": True}, "single": {"foreach": False}}[adam]
    optimizer = torch.optim.Adam(model.parameters(), lr=anchors.LR, **options)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.rand((anchors.BATCH,) + INPUT_SHAPES[model_name])
    y = torch.randint(0, 10, (anchors.BATCH,))

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        optimizer.step()

    for _ in range(2):
        step()
    with Counter() as train:
        step()
    with torch.no_grad(), Counter() as predict:
        model(x)
    if verbose:
        print(model_name, adam, dict(train.ops))
    kernels = sum(n for name, n in train.ops.items() if name not in _HOST_ONLY)
    return {"train": sum(train.ops.values()), "train_kernels": kernels,
            "predict": sum(n for name, n in predict.ops.items() if name not in _HOST_ONLY)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None)
    parser.add_argument("--verbose", action="store_true", help="print the operators counted")
    args = parser.parse_args(argv)
    rows = []
    for name in INPUT_SHAPES:
        counts = {adam: count(name, adam, args.verbose) for adam in ("fused", "foreach", "single")}
        row = {"model": name}
        for adam in ("fused", "foreach", "single"):
            row[f"train_{adam}_adam_dispatch"] = counts[adam]["train"]
            row[f"train_{adam}_adam_kernels"] = counts[adam]["train_kernels"]
        row["predict_kernels"] = counts["fused"]["predict"]
        rows.append(row)
    columns = list(rows[0])
    print("  ".join(columns))
    for row in rows:
        print("  ".join(str(row[c]).ljust(len(c)) for c in columns))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"benchmark": "torch_dispatch_counts", "torch": torch.__version__, "rows": rows}, handle,
                      indent=2)
    return rows


if __name__ == "__main__":
    main()
