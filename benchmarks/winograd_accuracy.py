"""Float32 error of Winograd F(2x2, 3x3) and F(4x4, 3x3) against float64, beside im2col's.

For the 3x3 convolutions of the CIFAR-10 and Fashion-MNIST CNNs (batch 8,
He-initialised kernels, ReLU-like non-negative inputs as a hidden layer
sees), computes each convolution in float32 three ways and reports the
largest and the mean error relative to the largest output of the float64
result:

- im2col: minikeras's im2col convolution (``MINIKERAS_CONV_ALGORITHM=im2col``);
- F(2x2, 3x3): minikeras's Winograd convolution (ops/nn/winograd.py);
- F(4x4, 3x3): Lavin & Gray's transforms (points 0, +-1, +-2, inf),
  evaluated here with einsum in float32 (not in the library).

The tests' tolerance for a float32 convolution is rtol 1e-4 / atol 1e-5
(tests/ops/op_check.py).

    python benchmarks/winograd_accuracy.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import numpy  # noqa: E402

# F(4x4, 3x3): Y = A^T [(G g G^T) * (B^T d B)] A on 6x6 input tiles.
F43_BT = numpy.array([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0], [0, -2, -1, 2, 1, 0],
                      [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]], dtype=numpy.float64)
F43_G = numpy.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6], [1 / 24, 1 / 12, 1 / 6],
                     [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]], dtype=numpy.float64)
F43_AT = numpy.array([[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]],
                     dtype=numpy.float64)

LAYERS = [  # name, input shape, filters, padding
    ("cifar conv2", (8, 32, 32, 32), 32, "valid"),
    ("cifar conv3", (8, 15, 15, 32), 64, "same"),
    ("cifar conv4", (8, 15, 15, 64), 64, "valid"),
    ("mnist conv2", (8, 13, 13, 32), 64, "valid"),
    ("wide 8x8x256", (8, 8, 8, 256), 256, "same"),
]


def winograd_f43(x, kernel, padding):
    """The convolution by F(4x4, 3x3) in x's dtype (einsum, whole batch)."""
    dtype = x.dtype
    if padding == "same":
        x = numpy.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    out_h, out_w = x.shape[1] - 2, x.shape[2] - 2
    rows, cols = -(-out_h // 4), -(-out_w // 4)
    padded = numpy.zeros((x.shape[0], 4 * rows + 2, 4 * cols + 2, x.shape[3]), dtype)
    padded[:, : x.shape[1], : x.shape[2]] = x
    n, _, _, c = padded.shape
    s = padded.strides
    tiles = numpy.lib.stride_tricks.as_strided(padded, (n, rows, cols, 6, 6, c), (s[0], 4 * s[1], 4 * s[2], s[1], s[2], s[3]))
    bt, g, at = (m.astype(dtype) for m in (F43_BT, F43_G, F43_AT))
    transformed = numpy.einsum("ai,ntuijc,bj->abntuc", bt, tiles, bt)
    kernel_t = numpy.einsum("ai,ijck,bj->abck", g, kernel, g)
    products = numpy.einsum("abntuc,abck->abntuk", transformed, kernel_t)
    out = numpy.einsum("ia,abntuk,jb->ntiujk", at, products, at).reshape(n, 4 * rows, 4 * cols, -1)
    return out[:, :out_h, :out_w]


def main():
    import minikeras as mk
    from _report import report
    from minikeras import ops
    from minikeras.backend import tuning

    rng = numpy.random.default_rng(0)
    rows = []
    for name, shape, filters, padding in LAYERS:
        x = numpy.maximum(rng.standard_normal(shape), 0)
        kernel = rng.standard_normal((3, 3, shape[-1], filters)) * numpy.sqrt(2 / (9 * shape[-1]))
        exact = ops.conv2d(mk.tensor(x), mk.tensor(kernel), padding=padding).numpy()
        scale = numpy.abs(exact).max()
        row = {"layer": name}
        results = {}
        for algorithm in ("im2col", "winograd"):
            tuning.CONV_ALGORITHM = algorithm
            results[algorithm] = ops.conv2d(mk.tensor(x.astype(numpy.float32)), mk.tensor(kernel.astype(numpy.float32)),
                                            padding=padding).numpy()
        tuning.CONV_ALGORITHM = "auto"
        results["f43"] = winograd_f43(x.astype(numpy.float32), kernel.astype(numpy.float32), padding)
        for label, key in (("im2col", "im2col"), ("F(2,3)", "winograd"), ("F(4,3)", "f43")):
            error = numpy.abs(results[key].astype(numpy.float64) - exact) / scale
            row[f"{label} max"] = float(error.max())
            row[f"{label} mean"] = float(error.mean())
        rows.append(row)
    columns = ["layer"] + [f"{label} {kind}" for label in ("im2col", "F(2,3)", "F(4,3)") for kind in ("max", "mean")]
    report("winograd_accuracy", rows, columns)


if __name__ == "__main__":
    main()
