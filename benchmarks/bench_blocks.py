"""Issue 25's building blocks on the CPU against PyTorch's equivalents:
RMSNormalization, EinsumDense, GroupQueryAttention and the focal losses,
forward + backward, best of several runs.

PyTorch columns come from ``torch`` imported in this same process when it
is installed (run with an environment that has it, e.g.
``/work/side/bin/python benchmarks/bench_blocks.py``); otherwise they are
skipped with a message. Both libraries get the same float32 data and the
number of threads (the CPU count; ``--torch-threads 1`` is steadier for torch on a
loaded machine, where its OpenMP threads wait on each other).

Usage: python benchmarks/bench_blocks.py [--json PATH] [--repeats N]
"""
import argparse
import os
import sys

import numpy

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minikeras as mk  # noqa: E402
from _report import best_of, report  # noqa: E402
from minikeras import layers, losses  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # the comparison is optional
    torch = None

RNG = numpy.random.default_rng(0)


def _normal(*shape):
    return RNG.standard_normal(shape).astype(numpy.float32)


def _mk_step(layer_call, x, weights):
    def step():
        inputs = mk.Tensor(x, requires_grad=True)
        out = layer_call(inputs)
        out.sum().backward()
        for weight in weights:
            weight.grad = None
    return step


# ------------------------------------------------------------------ cases
def case_rms_norm():
    x = _normal(32, 128, 512)
    layer = layers.RMSNormalization()
    layer(x)
    ours = _mk_step(layer, x, layer.weights)
    theirs = None
    if torch is not None:
        module = torch.nn.RMSNorm(512, eps=1e-6)
        data = torch.from_numpy(x)

        def theirs():
            inputs = data.clone().requires_grad_()
            module(inputs).sum().backward()
            module.weight.grad = None
    return "RMSNormalization (32,128,512)", ours, theirs


def case_einsum_dense():
    x = _normal(32, 128, 512)
    layer = layers.EinsumDense("abc,cde->abde", output_shape=(None, 8, 64), bias_axes="de")
    layer(x)
    ours = _mk_step(layer, x, layer.weights)
    theirs = None
    if torch is not None:
        kernel = torch.from_numpy(layer.kernel.numpy()).requires_grad_()
        bias = torch.from_numpy(layer.bias.numpy()).requires_grad_()
        data = torch.from_numpy(x)

        def theirs():
            inputs = data.clone().requires_grad_()
            (torch.einsum("abc,cde->abde", inputs, kernel) + bias).sum().backward()
            kernel.grad = bias.grad = None
    return "EinsumDense abc,cde->abde (32,128,512)->(8,64)", ours, theirs


def case_gqa():
    x = _normal(16, 128, 256)
    layer = layers.GroupQueryAttention(head_dim=32, num_query_heads=8, num_key_value_heads=2)
    layer(x, x)
    ours = _mk_step(lambda inputs: layer(inputs, inputs), x, layer.weights)
    theirs = None
    if torch is not None:
        weights = [torch.from_numpy(w.numpy()).requires_grad_() for w in layer.weights]
        data = torch.from_numpy(x)

        def theirs():
            inputs = data.clone().requires_grad_()
            qk, qb, kk, kb, vk, vb, ok, ob = weights
            query = torch.einsum("btm,muh->buth", inputs, qk) + qb[:, None]
            key = torch.einsum("btm,muh->buth", inputs, kk) + kb[:, None]
            value = torch.einsum("btm,muh->buth", inputs, vk) + vb[:, None]
            context = F.scaled_dot_product_attention(query, key, value, enable_gqa=True)
            (torch.einsum("buth,uhm->btm", context, ok) + ob).sum().backward()
            for weight in weights:
                weight.grad = None
    return "GroupQueryAttention (16,128,256) 8q/2kv x32", ours, theirs


def _focal_case(name, make_loss, torch_loss, y_true, y_pred):
    loss = make_loss()

    def ours():
        prediction = mk.Tensor(y_pred, requires_grad=True)
        loss(y_true, prediction).backward()

    theirs = None
    if torch is not None:
        target, data = torch.from_numpy(y_true), torch.from_numpy(y_pred)

        def theirs():
            prediction = data.clone().requires_grad_()
            torch_loss(target, prediction).backward()
    return name, ours, theirs


def case_binary_focal():
    y_true = (RNG.random((4096, 64)) > 0.7).astype(numpy.float32)
    logits = _normal(4096, 64)

    def torch_loss(target, logits):  # torchvision's sigmoid_focal_loss, alpha off, mean
        probabilities = torch.sigmoid(logits)
        cross_entropy = F.binary_cross_entropy_with_logits(logits, target, reduction="none")
        p_t = probabilities * target + (1 - probabilities) * (1 - target)
        return (cross_entropy * (1 - p_t) ** 2).mean()

    return _focal_case("BinaryFocalCrossentropy logits (4096,64)",
                       lambda: losses.BinaryFocalCrossentropy(from_logits=True), torch_loss, y_true, logits)


def case_categorical_focal():
    y_true = numpy.eye(100, dtype=numpy.float32)[RNG.integers(0, 100, 4096)]
    logits = _normal(4096, 100)

    def torch_loss(target, logits):  # Keras's formula, in torch
        probabilities = torch.softmax(logits, dim=-1).clamp(1e-7, 1 - 1e-7)
        return (0.25 * (1 - probabilities) ** 2 * -target * torch.log(probabilities)).sum(-1).mean()

    return _focal_case("CategoricalFocalCrossentropy logits (4096,100)",
                       lambda: losses.CategoricalFocalCrossentropy(from_logits=True), torch_loss, y_true, logits)


CASES = (case_rms_norm, case_einsum_dense, case_gqa, case_binary_focal, case_categorical_focal)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--torch-threads", type=int, default=None,
                        help="torch's intra-op threads (default: the CPU count); 1 is steadier on a loaded machine")
    args = parser.parse_args()
    if torch is None:
        print("torch is not importable in this process: PyTorch columns skipped "
              "(run with an environment that has torch, e.g. /work/side/bin/python).")
    else:
        torch.set_num_threads(args.torch_threads or max(1, os.cpu_count() or 1))
    rows = []
    for make_case in CASES:
        name, ours, theirs = make_case()
        for function in (ours, theirs):
            if function is not None:
                function()  # warm-up
        ours_ms = best_of(ours, args.repeats) * 1e3
        row = {"case (fwd+bwd)": name, "minikeras ms": round(ours_ms, 2)}
        if theirs is not None:
            torch_ms = best_of(theirs, args.repeats) * 1e3
            row.update({"torch ms": round(torch_ms, 2), "minikeras / torch": round(ours_ms / torch_ms, 2)})
        rows.append(row)
    columns = ["case (fwd+bwd)", "minikeras ms", "torch ms", "minikeras / torch"]
    report("bench_blocks", rows, columns, extra={"torch": None if torch is None else torch.__version__,
                                                "torch_threads": None if torch is None else torch.get_num_threads(),
                                                "numpy": numpy.__version__}, path=args.json)


if __name__ == "__main__":
    main()
