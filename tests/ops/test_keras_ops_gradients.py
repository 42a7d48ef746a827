"""op_check (forward against an independent NumPy reference, float64
gradcheck) for every differentiable function added for keras.ops (issue 24).

One table row per function: the op, its NumPy reference and inputs. Runs on
every device (the conftest parametrises the default device).
"""
import math

import numpy
import pytest

import minikeras as mk
from minikeras import ops
from tests.ops.op_check import check_op

rng = numpy.random.default_rng(2024)
A = rng.normal(size=(3, 4))
B = rng.normal(size=(4, 5))
C = rng.normal(size=(2, 3, 4))
UNIT = rng.uniform(-0.9, 0.9, size=(3, 4))
POS = rng.uniform(0.3, 2.0, size=(3, 4))
SQ = rng.normal(size=(2, 3, 3)) + 3 * numpy.eye(3)
SPD = (lambda m: m @ m.T + 4 * numpy.eye(4))(rng.normal(size=(4, 4)))
SYM = (lambda m: m + m.T)(rng.normal(size=(3, 3)))
IDS = numpy.array([0, 2, 0, 1, 2])
ROWS = rng.normal(size=(5, 3))


def _erfinv_reference(y):
    def one(value):
        low, high = -6.0, 6.0
        for _ in range(200):
            middle = (low + high) / 2
            low, high = (middle, high) if math.erf(middle) < value else (low, middle)
        return (low + high) / 2
    return numpy.vectorize(one)(y)


def _softmax(x, axis=-1):
    e = numpy.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _attention_reference(q, k, v, bias=None, mask=None, causal=False, scale=None, cap=None):
    groups = q.shape[2] // k.shape[2]
    k, v = numpy.repeat(k, groups, axis=2), numpy.repeat(v, groups, axis=2)
    logits = numpy.einsum("btnh,bsnh->bnts", q, k) * (scale or 1 / math.sqrt(q.shape[-1]))
    if bias is not None:
        logits = logits + bias
    if cap is not None:
        logits = numpy.tanh(logits / cap) * cap
    keep = numpy.ones(logits.shape, bool)
    if mask is not None:
        keep &= mask
    if causal:
        keep &= numpy.tril(numpy.ones(logits.shape[-2:], bool))
    logits = numpy.where(keep, logits, -1e30)
    return numpy.einsum("bnts,bsnh->btnh", _softmax(logits), v)


def _sparsemax_reference(x):
    out = numpy.zeros_like(x)
    for index in numpy.ndindex(x.shape[:-1]):
        z = numpy.sort(x[index])[::-1]
        cumulative = numpy.cumsum(z)
        k = numpy.arange(1, len(z) + 1)
        support = k[1 + k * z > cumulative].max()
        tau = (cumulative[support - 1] - 1) / support
        out[index] = numpy.maximum(x[index] - tau, 0)
    return out


def _segment_reference(kind):
    def reference(data):
        out = []
        for segment in range(3):
            rows = data[IDS == segment]
            out.append({"sum": rows.sum(0), "max": rows.max(0), "min": rows.min(0), "prod": rows.prod(0)}[kind])
        return numpy.stack(out)
    return reference


def _quantile_reference(x):
    return numpy.quantile(x, [0.2, 0.5, 0.85], axis=1)


CASES = {
    # elementwise
    "tan": (ops.tan, numpy.tan, [UNIT]), "sinh": (ops.sinh, numpy.sinh, [A]), "cosh": (ops.cosh, numpy.cosh, [A]),
    "arcsin": (ops.arcsin, numpy.arcsin, [UNIT]), "arccos": (ops.arccos, numpy.arccos, [UNIT]),
    "arctan": (ops.arctan, numpy.arctan, [A]), "arcsinh": (ops.arcsinh, numpy.arcsinh, [A]),
    "arccosh": (ops.arccosh, numpy.arccosh, [POS + 1]), "arctanh": (ops.arctanh, numpy.arctanh, [UNIT]),
    "arctan2": (ops.arctan2, numpy.arctan2, [A, POS]), "hypot": (ops.hypot, numpy.hypot, [A, UNIT]),
    "sinc": (ops.sinc, numpy.sinc, [A]), "deg2rad": (ops.deg2rad, numpy.deg2rad, [A]),
    "rad2deg": (ops.rad2deg, numpy.rad2deg, [A]), "exp2": (ops.exp2, numpy.exp2, [A]),
    "log2": (ops.log2, numpy.log2, [POS]), "log10": (ops.log10, numpy.log10, [POS]),
    "cbrt": (ops.cbrt, numpy.cbrt, [A]), "logaddexp": (ops.logaddexp, numpy.logaddexp, [A, UNIT]),
    "logaddexp2": (ops.logaddexp2, numpy.logaddexp2, [A, UNIT]),
    "erfc": (ops.erfc, numpy.vectorize(math.erfc), [A * 2]), "erfinv": (ops.erfinv, _erfinv_reference, [UNIT]),
    "i0": (ops.i0, numpy.i0, [A * 2]), "fabs": (ops.fabs, numpy.fabs, [A]),
    "mod": (ops.mod, numpy.mod, [A * 3, POS]), "fmod": (ops.fmod, numpy.fmod, [A * 3, POS]),
    "fmax": (ops.fmax, numpy.fmax, [A, UNIT]), "fmin": (ops.fmin, numpy.fmin, [A, UNIT]),
    "divide_no_nan": (ops.divide_no_nan, lambda a, b: a / b, [A, POS]),
    "nan_to_num": (ops.nan_to_num, numpy.nan_to_num, [A]), "real": (ops.real, numpy.real, [A]),
    "conj": (ops.conj, numpy.conj, [A]), "copy": (ops.copy, numpy.copy, [A]),
    # reductions, statistics, cumulative
    "cumsum": (lambda x: ops.cumsum(x, axis=1), lambda x: numpy.cumsum(x, 1), [C]),
    "cumprod": (lambda x: ops.cumprod(x, axis=2), lambda x: numpy.cumprod(x, 2), [C]),
    "cumprod_zero": (lambda x: ops.cumprod(x, axis=1), lambda x: numpy.cumprod(x, 1),
                     [numpy.where(numpy.arange(12).reshape(3, 4) % 5 == 1, 0.0, A)]),
    "diff": (lambda x: ops.diff(x, 2), lambda x: numpy.diff(x, 2), [C]),
    "average": (lambda x, w: ops.average(x, 1, w), lambda x, w: numpy.average(x, 1, w), [A, POS[0]]),
    "ptp": (lambda x: ops.ptp(x, 1), lambda x: numpy.ptp(x, 1), [A]),
    "median": (lambda x: ops.median(x, axis=2), lambda x: numpy.median(x, axis=2), [C]),
    "quantile": (lambda x: ops.quantile(x, [0.2, 0.5, 0.85], axis=1), _quantile_reference, [C]),
    "percentile_midpoint": (lambda x: ops.percentile(x, 40, axis=0, method="midpoint"),
                            lambda x: numpy.percentile(x, 40, axis=0, method="midpoint"), [A]),
    "nanmean": (lambda x: ops.nanmean(x, 1), lambda x: numpy.nanmean(x, 1), [A]),
    "nanvar": (lambda x: ops.nanvar(x, 0), lambda x: numpy.nanvar(x, 0), [A]),
    "nanstd": (lambda x: ops.nanstd(x), numpy.nanstd, [A]),
    "moments_variance": (lambda x: ops.moments(x, [0, 2])[1], lambda x: x.var(axis=(0, 2)), [C]),
    "corrcoef": (ops.corrcoef, numpy.corrcoef, [A]),
    "trapezoid": (lambda y: ops.trapezoid(y, dx=0.5), lambda y: numpy.trapezoid(y, dx=0.5), [A]),
    "correlate": (lambda a, v: ops.correlate(a, v, "full"), lambda a, v: numpy.correlate(a, v, "full"),
                  [B[0], A[0, :3]]),
    "max_initial": (lambda x: ops.max(x, axis=1, initial=0.2), lambda x: numpy.max(x, axis=1, initial=0.2), [A]),
    # products
    "einsum": (lambda a, b: ops.einsum("ij,jk->ik", a, b), lambda a, b: a @ b, [A, B]),
    "einsum_batch": (lambda c, b: ops.einsum("bij,jk->bk", c, b), lambda c, b: numpy.einsum("bij,jk->bk", c, b),
                     [C, B]),
    "einsum_three": (lambda a, b, c: ops.einsum("ij,jk,kl", a, b, c),
                     lambda a, b, c: numpy.einsum("ij,jk,kl", a, b, c), [A, B, B.T]),
    "einsum_broadcast_sum": (lambda x: ops.einsum("bij->j", x), lambda x: numpy.einsum("bij->j", x), [C]),
    "tensordot": (lambda a, b: ops.tensordot(a, b, ([1, 2], [0, 1])),
                  lambda a, b: numpy.tensordot(a, b, ([1, 2], [0, 1])), [C, A]),
    "dot": (ops.dot, numpy.dot, [C, B]), "inner": (ops.inner, numpy.inner, [A, C]),
    "outer": (ops.outer, numpy.outer, [A[0], B[0]]), "vdot": (ops.vdot, numpy.vdot, [A, UNIT]),
    "kron": (ops.kron, numpy.kron, [A[:2, :3], B[:2, :2]]), "cross": (ops.cross, numpy.cross, [C[..., :3], A[:, :3]]),
    "cdist": (ops.cdist, lambda x, y: numpy.sqrt(((x[:, None] - y[None]) ** 2).sum(-1)), [A, UNIT]),
    # arranging, indexing, sorting, scatter
    "flip": (lambda x: ops.flip(x, (0, 2)), lambda x: numpy.flip(x, (0, 2)), [C]),
    "rot90": (lambda x: ops.rot90(x, 1, (1, 2)), lambda x: numpy.rot90(x, 1, (1, 2)), [C]),
    "roll": (lambda x: ops.roll(x, 3, 2), lambda x: numpy.roll(x, 3, 2), [C]),
    "broadcast_to": (lambda x: ops.broadcast_to(x, (2, 3, 4)), lambda x: numpy.broadcast_to(x, (2, 3, 4)), [A[0]]),
    "append": (lambda a, b: ops.append(a, b), numpy.append, [A, B]),
    "tril": (lambda x: ops.tril(x, -1), lambda x: numpy.tril(x, -1), [C]),
    "triu": (lambda x: ops.triu(x, 1), lambda x: numpy.triu(x, 1), [A]),
    "diag": (lambda x: ops.diag(x, 1), lambda x: numpy.diag(x, 1), [B[0]]),
    "diagonal": (lambda x: ops.diagonal(x, 1, 1, 2), lambda x: numpy.diagonal(x, 1, 1, 2), [C]),
    "trace": (lambda x: ops.trace(x, 0, 1, 2), lambda x: numpy.trace(x, 0, 1, 2), [C]),
    "vander": (lambda x: ops.vander(x, 4), lambda x: numpy.vander(x, 4), [B[0]]),
    "dstack": (lambda a, b: ops.dstack([a, b]), lambda a, b: numpy.dstack([a, b]), [A, UNIT]),
    "select": (lambda x: ops.select([x < -0.3, x > 0.4], [x * 2, x * x], -1.0),
               lambda x: numpy.select([x < -0.3, x > 0.4], [x * 2, x * x], -1.0), [A]),
    "sort": (lambda x: ops.sort(x, 1), lambda x: numpy.sort(x, 1), [C]),
    "top_k": (lambda x: ops.top_k(x, 3)[0], lambda x: -numpy.sort(-x, -1)[..., :3], [C]),
    "take_along_axis": (lambda x: ops.take_along_axis(x, mk.tensor(numpy.array([[0, 2, 2, 1]])), 0),
                        lambda x: numpy.take_along_axis(x, numpy.array([[0, 2, 2, 1]]), 0), [A]),
    "scatter": (lambda v: ops.scatter(mk.tensor(numpy.array([[0, 1], [2, 0], [0, 1]])), v, (3, 2, 4)),
                None, [A]),
    "scatter_update": (lambda x, u: ops.scatter_update(x, mk.tensor(numpy.array([[0], [2], [0]])), u),
                       None, [A, UNIT]),
    "slice_update": (lambda x, u: ops.slice_update(x, (1, 1), u), None, [A, UNIT[:2, :2]]),
    "segment_sum": (lambda d: ops.segment_sum(d, mk.tensor(IDS)), _segment_reference("sum"), [ROWS]),
    "segment_max": (lambda d: ops.segment_max(d, mk.tensor(IDS)), _segment_reference("max"), [ROWS]),
    "segment_min": (lambda d: ops.segment_min(d, mk.tensor(IDS)), _segment_reference("min"), [ROWS]),
    "segment_prod": (lambda d: ops.segment_prod(d, mk.tensor(IDS)), _segment_reference("prod"), [ROWS]),
    "rearrange": (lambda x: ops.rearrange(x, "b h w -> h (b w)"), lambda x: x.transpose(1, 0, 2).reshape(3, 8), [C]),
    "linspace": (lambda a, b: ops.linspace(a, b, 5, axis=1), lambda a, b: numpy.linspace(a, b, 5, axis=1),
                 [A[0], B[0, :4]]),
    # nn
    "celu": (lambda x: ops.celu(x, 0.7), lambda x: numpy.maximum(x, 0) + numpy.minimum(0.7 * numpy.expm1(x / 0.7), 0),
             [A]),
    "glu": (ops.glu, lambda x: x[:, :2] / (1 + numpy.exp(-x[:, 2:])), [A]),
    "hard_shrink": (ops.hard_shrink, lambda x: numpy.where(numpy.abs(x) > 0.5, x, 0), [A]),
    "soft_shrink": (ops.soft_shrink, lambda x: numpy.sign(x) * numpy.maximum(numpy.abs(x) - 0.5, 0), [A]),
    "squareplus": (ops.squareplus, lambda x: (x + numpy.sqrt(x * x + 4)) / 2, [A]),
    "tanh_shrink": (ops.tanh_shrink, lambda x: x - numpy.tanh(x), [A]),
    "sparse_plus": (ops.sparse_plus, lambda x: numpy.where(x <= -1, 0, numpy.where(x >= 1, x, (x + 1) ** 2 / 4)),
                    [A * 0.8]),
    "sparsemax": (ops.sparsemax, _sparsemax_reference, [A * 2]),
    "layer_normalization": (lambda x, g: ops.layer_normalization(x, g, epsilon=1e-3),
                            lambda x, g: (x - x.mean(-1, keepdims=True)) / numpy.sqrt(x.var(-1, keepdims=True) + 1e-3)
                            * g, [C, A[0]]),
    "rms_normalization": (lambda x: ops.rms_normalization(x, epsilon=1e-3),
                          lambda x: x / numpy.sqrt((x * x).mean(-1, keepdims=True) + 1e-3), [C]),
    "normalize": (ops.normalize, lambda x: x / numpy.linalg.norm(x, axis=-1, keepdims=True), [A]),
    "categorical_crossentropy": (lambda t, o: ops.categorical_crossentropy(t, o, from_logits=True),
                                 lambda t, o: -(t * numpy.log(_softmax(o))).sum(-1), [_softmax(UNIT), A]),
    "binary_crossentropy": (ops.binary_crossentropy,
                            lambda t, o: -(t * numpy.log(o) + (1 - t) * numpy.log(1 - o)),
                            [rng.uniform(size=(3, 4)), rng.uniform(0.1, 0.9, size=(3, 4))]),
    "adaptive_average_pool": (lambda x: ops.adaptive_average_pool(x, (2, 3)),
                              lambda x: numpy.stack([numpy.stack([x[:, r0:r1, c0:c1].mean((1, 2)) for c0, c1 in
                                                                  ((0, 2), (1, 3), (2, 4))], 1)
                                                     for r0, r1 in ((0, 2), (1, 3))], 1), [rng.normal(size=(1, 3, 4, 2))]),
    "depth_to_space": (lambda x: ops.depth_to_space(x, 2),
                       lambda x: x.reshape(1, 2, 3, 2, 2, 1).transpose(0, 1, 3, 2, 4, 5).reshape(1, 4, 6, 1),
                       [rng.normal(size=(1, 2, 3, 4))]),
    "unfold_fold": (lambda x: ops.fold(ops.unfold(x, 2, padding=1), (3, 4), 2, padding=1), None,
                    [rng.normal(size=(1, 2, 3, 4))]),
    "attention": (lambda q, k, v: ops.dot_product_attention(q, k, v), _attention_reference,
                  [rng.normal(size=(2, 3, 4, 5)), rng.normal(size=(2, 4, 2, 5)), rng.normal(size=(2, 4, 2, 5))]),
    "attention_bias_causal_cap": (
        lambda q, k, v, b: ops.dot_product_attention(q, k, v, bias=b, is_causal=True, attn_logits_soft_cap=2.0),
        lambda q, k, v, b: _attention_reference(q, k, v, bias=b, causal=True, cap=2.0),
        [rng.normal(size=(1, 3, 2, 4)), rng.normal(size=(1, 3, 1, 4)), rng.normal(size=(1, 3, 1, 4)),
         rng.normal(size=(2, 3, 3))]),
    "attention_mask": (
        lambda q, k, v: ops.dot_product_attention(q, k, v, mask=mk.tensor(numpy.array([[1, 0, 1, 1], [0, 0, 1, 0],
                                                                                        [1, 1, 1, 1]], bool)),
                                                  scale=0.4),
        lambda q, k, v: _attention_reference(q, k, v, mask=numpy.array([[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 1]],
                                                                       bool), scale=0.4),
        [rng.normal(size=(1, 3, 2, 4)), rng.normal(size=(1, 4, 2, 4)), rng.normal(size=(1, 4, 2, 4))]),
    # linalg, fft
    "inv": (ops.inv, numpy.linalg.inv, [SQ]), "det": (ops.det, numpy.linalg.det, [SQ]),
    "logdet": (ops.logdet, lambda x: numpy.linalg.slogdet(x)[1], [SPD]),
    "solve": (ops.solve, numpy.linalg.solve, [SQ, C[:, :, :3]]),
    "solve_vector": (ops.solve, lambda a, b: numpy.linalg.solve(a, b[..., None])[..., 0], [SQ, A[:2, :3]]),
    "solve_triangular": (lambda a, b: ops.solve_triangular(a, b, lower=True),
                         lambda a, b: numpy.linalg.solve(numpy.tril(a), b), [SQ, C[:, :, :3]]),
    "cholesky": (lambda x: ops.cholesky((x + ops.swapaxes(x, -1, -2)) * 0.5),
                 lambda x: numpy.linalg.cholesky((x + numpy.swapaxes(x, -1, -2)) * 0.5), [SPD]),
    "cholesky_inverse": (ops.cholesky_inverse, lambda l: numpy.linalg.inv(l @ l.T), [numpy.linalg.cholesky(SPD)]),
    "eigh_values": (lambda x: ops.eigh((x + x.T) * 0.5)[0], lambda x: numpy.linalg.eigvalsh((x + x.T) * 0.5), [SYM]),
    "eigh_vectors_abs": (lambda x: ops.abs(ops.eigh((x + x.T) * 0.5)[1]),
                         lambda x: numpy.abs(numpy.linalg.eigh((x + x.T) * 0.5)[1]), [SYM]),
    "svd_values": (lambda x: ops.svd(x, compute_uv=False), lambda x: numpy.linalg.svd(x, compute_uv=False), [A]),
    "norm_matrix": (lambda x: ops.norm(x, ord="nuc"), lambda x: numpy.linalg.norm(x, "nuc"), [A]),
    "norm_vector": (lambda x: ops.norm(x, ord=3, axis=1), lambda x: numpy.linalg.norm(x, 3, axis=1), [A]),
    "fft_real": (lambda r, i: ops.fft((r, i))[0], lambda r, i: numpy.fft.fft(r + 1j * i).real, [A, UNIT]),
    "fft2_imag": (lambda r, i: ops.fft2((r, i))[1], lambda r, i: numpy.fft.fft2(r + 1j * i).imag, [A, UNIT]),
    "ifft2_real": (lambda r, i: ops.ifft2((r, i))[0], lambda r, i: numpy.fft.ifft2(r + 1j * i).real, [A, UNIT]),
    "rfft_imag": (lambda x: ops.rfft(x, 6)[1], lambda x: numpy.fft.rfft(x, 6).imag, [C]),
    "rfft_real": (lambda x: ops.rfft(x)[0], lambda x: numpy.fft.rfft(x).real, [C]),
    "irfft": (lambda r, i: ops.irfft((r, i), 6), lambda r, i: numpy.fft.irfft(r + 1j * i, 6), [A, UNIT]),
    "irfft_odd": (lambda r, i: ops.irfft((r, i), 7), lambda r, i: numpy.fft.irfft(r + 1j * i, 7), [A, UNIT]),
    # image (forward values are checked against Keras in test_keras_ops_parity.py)
    **{f"resize_{method}": ((lambda x, method=method: ops.image.resize(x, (3, 5), interpolation=method)), None,
                            [rng.uniform(size=(1, 4, 3, 2))])
       for method in ("bilinear", "nearest", "bicubic", "area", "lanczos3")},
    "resize_antialias": (lambda x: ops.image.resize(x, (2, 2), antialias=True), None, [rng.uniform(size=(1, 4, 3, 2))]),
    "scale_and_translate": (lambda x: ops.image.scale_and_translate(x, (1, 5, 4, 2), numpy.array([1.2, 0.8]),
                                                                    numpy.array([0.3, 0.0]), (1, 2), "cubic"),
                            None, [rng.uniform(size=(1, 4, 3, 2))]),
    "map_coordinates": (lambda x, c: ops.image.map_coordinates(x, c, 1, fill_mode="reflect"), None,
                        [rng.normal(size=(3, 4)), rng.uniform(0.1, 2.4, size=(2, 5)) + numpy.array([[0.0], [0.5]])]),
    "gaussian_blur": (lambda x: ops.image.gaussian_blur(x, (3, 3), (0.8, 0.8)), None, [rng.uniform(size=(1, 4, 4, 2))]),
    "sobel_edges": (ops.image.sobel_edges, None, [rng.uniform(size=(1, 4, 4, 1))]),
    "ssim": (lambda a, b: ops.image.ssim(a, b, filter_size=3), None,
             [rng.uniform(size=(1, 4, 4, 1)), rng.uniform(size=(1, 4, 4, 1))]),
    "rgb_to_hsv": (ops.image.rgb_to_hsv, None, [rng.uniform(0.1, 0.9, size=(1, 2, 2, 3))]),
    "hsv_to_rgb": (ops.image.hsv_to_rgb, None, [numpy.array([[[[0.1, 0.5, 0.7], [0.45, 0.2, 0.9]]]])]),
    "extract_patches": (lambda x: ops.image.extract_patches(x, 2), None, [rng.uniform(size=(1, 4, 4, 2))]),
    "crop_pad_images": (lambda x: ops.image.pad_images(ops.image.crop_images(x, 1, 1, target_height=2,
                                                                             target_width=2), 1, 0, 1, 2), None,
                        [rng.uniform(size=(1, 4, 4, 2))]),
}

# Ops whose forward another test checks against Keras (a reference here would repeat their code).
FORWARD_ELSEWHERE = {name for name, (_, reference, _) in CASES.items() if reference is None}
WIDENS_HALF = {"rfft_real", "rfft_imag"}  # a 16-bit signal's spectrum is float32, as Keras's (test_fft_framing.py)


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_and_gradient(name):
    op, reference, inputs = CASES[name]
    if reference is None:
        from minikeras.autograd import gradcheck

        tensors = [mk.Tensor(x, requires_grad=True) for x in inputs]
        assert gradcheck(op, tensors)
        return
    check_op(op, reference, inputs, dtype_kept=name not in WIDENS_HALF)
