"""Cases for the keras.ops parity test (issue 24): each calls one op through a
namespace ``K`` that is ``keras.ops`` when recording and ``minikeras.ops``
when testing, on fixed seeded inputs of several shapes and dtypes.

Run ``KERAS_BACKEND=tensorflow /work/side/bin/python -m tests.ops.keras_ops_cases``
from the repository root to rewrite ``fixtures/keras_ops_parity.npz`` (the
values and dtypes Keras 3 gives). Neither Keras nor minikeras is imported at
module level, so both environments can import the cases.
"""
import os

import numpy

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_ops_parity.npz")

_rng = numpy.random.default_rng(24)
A = _rng.normal(size=(3, 4)).astype("float32")
B = _rng.normal(size=(4, 5)).astype("float32")
C = _rng.normal(size=(2, 3, 4)).astype("float32")
V = _rng.normal(size=(5,)).astype("float32")
W = _rng.normal(size=(5,)).astype("float32")
POS = (_rng.uniform(0.2, 3.0, size=(3, 4))).astype("float32")
UNIT = (_rng.uniform(-0.9, 0.9, size=(3, 4))).astype("float32")
I = _rng.integers(-5, 9, size=(3, 4)).astype("int32")
J = _rng.integers(1, 6, size=(3, 4)).astype("int32")
U8 = _rng.integers(0, 255, size=(6,)).astype("uint8")
D64 = _rng.normal(size=(3, 4)).astype("float64")
SPD = (lambda m: (m @ m.T + 4 * numpy.eye(4)).astype("float32"))(_rng.normal(size=(4, 4)))
SQ = (_rng.normal(size=(2, 3, 3)) + 3 * numpy.eye(3)).astype("float32")
NAN = numpy.array([[1.0, numpy.nan, 3.0, -2.0], [numpy.nan, numpy.nan, 0.5, 4.0], [2.0, 1.0, numpy.inf, -1.0]],
                  "float32")
IDS = numpy.array([0, 2, 0, 1, 2, 2], "int32")
ROWS = _rng.normal(size=(6, 3)).astype("float32")
Q = _rng.normal(size=(2, 5, 4, 8)).astype("float32")
KV = _rng.normal(size=(2, 6, 2, 8)).astype("float32")
VAL = _rng.normal(size=(2, 6, 2, 8)).astype("float32")
IMG = _rng.uniform(size=(2, 6, 7, 3)).astype("float32")
LOGITS = _rng.normal(size=(3, 5)).astype("float32")
PROBS = (lambda e: (e / e.sum(-1, keepdims=True)).astype("float32"))(numpy.exp(LOGITS))
LABELS = numpy.array([1, 4, 0], "int32")
SORTED = numpy.array([-1.0, 0.0, 0.5, 2.0, 3.0], "float32")

CASES = {
    # elementwise math
    "arccos": lambda K: K.arccos(UNIT), "arcsin": lambda K: K.arcsin(UNIT), "arctan": lambda K: K.arctan(A),
    "arcsinh": lambda K: K.arcsinh(A), "arccosh": lambda K: K.arccosh(POS + 1), "arctanh": lambda K: K.arctanh(UNIT),
    "arctan2": lambda K: K.arctan2(A, POS), "arctan2_int": lambda K: K.arctan2(I, J),
    "sinh": lambda K: K.sinh(A), "cosh": lambda K: K.cosh(A), "tan": lambda K: K.tan(UNIT),
    "hypot": lambda K: K.hypot(A, B[:3, :4]), "sinc": lambda K: K.sinc(A), "deg2rad": lambda K: K.deg2rad(A),
    "rad2deg": lambda K: K.rad2deg(I), "exp2": lambda K: K.exp2(A), "log2": lambda K: K.log2(POS),
    "log10": lambda K: K.log10(POS), "log2_int": lambda K: K.log2(J), "logaddexp": lambda K: K.logaddexp(A, UNIT),
    "logaddexp2": lambda K: K.logaddexp2(A, UNIT), "cbrt": lambda K: K.cbrt(A), "erfc": lambda K: K.erfc(A),
    "erfinv": lambda K: K.erfinv(UNIT), "i0": lambda K: K.i0(A), "ceil": lambda K: K.ceil(A),
    "floor": lambda K: K.floor(A * 3), "round": lambda K: K.round(A * 10), "round_dec": lambda K: K.round(A, 2),
    "round_int": lambda K: K.round(I), "trunc": lambda K: K.trunc(A * 3), "fabs": lambda K: K.fabs(I),
    "floor_divide": lambda K: K.floor_divide(I, J), "floor_divide_f": lambda K: K.floor_divide(A, 0.3),
    "mod": lambda K: K.mod(I, J), "mod_f": lambda K: K.mod(A, 0.7), "fmod": lambda K: K.fmod(A, 0.7),
    "fmax": lambda K: K.fmax(NAN, 1.0), "fmin": lambda K: K.fmin(NAN, A), "heaviside": lambda K: K.heaviside(I, 0.5),
    "divide_no_nan": lambda K: K.divide_no_nan(A, I), "true_divide": lambda K: K.true_divide(I, J),
    "nan_to_num": lambda K: K.nan_to_num(NAN, nan=-1.0, posinf=9.0), "signbit": lambda K: K.signbit(A),
    "ldexp": lambda K: K.ldexp(A, J), "nextafter": lambda K: K.nextafter(A, POS),
    "bitwise_and": lambda K: K.bitwise_and(I, J), "bitwise_or": lambda K: K.bitwise_or(I, 3),
    "bitwise_xor": lambda K: K.bitwise_xor(U8, U8[::-1]), "bitwise_not": lambda K: K.bitwise_not(I),
    "bitwise_invert": lambda K: K.bitwise_invert(U8), "left_shift": lambda K: K.left_shift(J, 2),
    "right_shift": lambda K: K.right_shift(I, 1), "bitwise_left_shift": lambda K: K.bitwise_left_shift(J, J),
    "gcd": lambda K: K.gcd(I, J), "lcm": lambda K: K.lcm(I, J),
    "isnan": lambda K: K.isnan(NAN), "isinf": lambda K: K.isinf(NAN), "isfinite": lambda K: K.isfinite(NAN),
    "isposinf": lambda K: K.isposinf(NAN), "isneginf": lambda K: K.isneginf(-NAN), "isreal": lambda K: K.isreal(A),
    "isclose": lambda K: K.isclose(A, A + 1e-6), "allclose": lambda K: K.allclose(A, A + 1e-3),
    "isin": lambda K: K.isin(I, J), "all": lambda K: K.all(I > 0, axis=1), "any": lambda K: K.any(I > 7),
    "count_nonzero": lambda K: K.count_nonzero(I, axis=0), "real": lambda K: K.real(A), "imag": lambda K: K.imag(A),
    "conj": lambda K: K.conj(A), "angle": lambda K: K.angle(A),
    "add_int_float": lambda K: K.add(I, A), "multiply_int_pyfloat": lambda K: K.multiply(I, 1.5),
    "add_f64": lambda K: K.add(A, D64), "power_int": lambda K: K.power(J, 2),
    # reductions and statistics
    "amax": lambda K: K.amax(C, axis=1), "amin": lambda K: K.amin(C, axis=(0, 2)), "ptp": lambda K: K.ptp(A, axis=0),
    "average": lambda K: K.average(A, axis=1, weights=V[:4]), "median": lambda K: K.median(C, axis=1),
    "median_all": lambda K: K.median(A), "quantile": lambda K: K.quantile(C, [0.1, 0.5, 0.9], axis=2),
    "quantile_lower": lambda K: K.quantile(A, 0.3, axis=1, method="lower"),
    "quantile_nearest": lambda K: K.quantile(A, 0.3, axis=0, method="nearest", keepdims=True),
    "percentile": lambda K: K.percentile(A, 75.0, axis=1, method="midpoint"),
    "nansum": lambda K: K.nansum(NAN[:2], axis=1), "nanmean": lambda K: K.nanmean(NAN[:2], axis=0),
    "nanmax": lambda K: K.nanmax(NAN[:2], axis=1), "nanmin": lambda K: K.nanmin(NAN[:2]),
    "nanprod": lambda K: K.nanprod(NAN[:2], axis=1), "nanvar": lambda K: K.nanvar(NAN[:2], axis=1),
    "nanstd": lambda K: K.nanstd(NAN[:2]), "nanargmax": lambda K: K.nanargmax(NAN[:2], axis=1),
    "nanargmin": lambda K: K.nanargmin(NAN[:2], axis=1), "nanmedian": lambda K: K.nanmedian(NAN[:2], axis=1),
    "nanquantile": lambda K: K.nanquantile(NAN[:2], 0.25, axis=1),
    "nancumsum": lambda K: K.nancumsum(NAN[:2], axis=1), "nancumprod": lambda K: K.nancumprod(NAN[:2], axis=1),
    "cumsum": lambda K: K.cumsum(A, axis=1), "cumsum_flat": lambda K: K.cumsum(I),
    "cumprod": lambda K: K.cumprod(A, axis=0), "diff": lambda K: K.diff(C, n=2, axis=-1),
    "corrcoef": lambda K: K.corrcoef(A), "trapezoid": lambda K: K.trapezoid(A, axis=1),
    "trapezoid_x": lambda K: K.trapezoid(V, x=SORTED), "correlate": lambda K: K.correlate(V, W[:3]),
    "correlate_full": lambda K: K.correlate(V, W[:3], mode="full"), "correlate_same": lambda K: K.correlate(V, W, "same"),
    "bincount": lambda K: K.bincount(IDS), "bincount_w": lambda K: K.bincount(IDS, weights=V.tolist() + [1.0], minlength=5),
    "histogram": lambda K: K.histogram(V, bins=4), "moments": lambda K: K.moments(C, axes=[0, 1]),
    "max_initial": lambda K: K.max(A, axis=1, initial=0.5), "prod_int8": lambda K: K.prod(J.astype("int8"), axis=0),
    "prod_int32": lambda K: K.prod(J, axis=1), "divide_int": lambda K: K.divide(I, J), "subtract_u8_int": lambda K: K.subtract(U8, 3),
    # products
    "einsum": lambda K: K.einsum("ij,jk->ik", A, B), "einsum_batch": lambda K: K.einsum("bij,jk->bik", C, B),
    "einsum_ellipsis": lambda K: K.einsum("...j,jk", C, B), "einsum_trace": lambda K: K.einsum("ii", SPD),
    "einsum_int": lambda K: K.einsum("ij,ij->i", I, J), "tensordot": lambda K: K.tensordot(C, B, axes=1),
    "tensordot_axes": lambda K: K.tensordot(C, A, axes=([1, 2], [0, 1])), "dot": lambda K: K.dot(C, B),
    "dot_vec": lambda K: K.dot(V, W), "inner": lambda K: K.inner(A, C), "outer": lambda K: K.outer(V, A[0]),
    "vdot": lambda K: K.vdot(V, W), "kron": lambda K: K.kron(A[:2, :2], B[:2, :3]),
    "cross": lambda K: K.cross(C[..., :3], A[:, :3]), "cdist": lambda K: K.cdist(C, A),
    # arranging and indexing
    "flip": lambda K: K.flip(C, axis=(0, 2)), "fliplr": lambda K: K.fliplr(A), "flipud": lambda K: K.flipud(A),
    "rot90": lambda K: K.rot90(C, k=3, axes=(1, 2)), "roll": lambda K: K.roll(C, 2, axis=2),
    "roll_flat": lambda K: K.roll(A, -5), "broadcast_to": lambda K: K.broadcast_to(V, (2, 5)),
    "append": lambda K: K.append(A, B[:1, :4], axis=0), "append_flat": lambda K: K.append(V, A),
    "array_split": lambda K: K.array_split(V, 3), "hsplit": lambda K: K.hsplit(A, 2), "vsplit": lambda K: K.vsplit(C, 2),
    "dsplit": lambda K: K.dsplit(C, 2), "hstack": lambda K: K.hstack([A, A]), "vstack": lambda K: K.vstack([A, B[:2, :4]]),
    "dstack": lambda K: K.dstack([A, A]), "unstack": lambda K: K.unstack(C, axis=1),
    "tril": lambda K: K.tril(C, k=1), "triu": lambda K: K.triu(A, k=-1), "diag": lambda K: K.diag(V, k=-1),
    "diag_of": lambda K: K.diag(A, k=1), "diagflat": lambda K: K.diagflat(A[:2, :2]),
    "diagonal": lambda K: K.diagonal(C, offset=1, axis1=1, axis2=2), "trace": lambda K: K.trace(C, axis1=1, axis2=2),
    "meshgrid": lambda K: K.meshgrid(V, W[:3]), "meshgrid_ij": lambda K: K.meshgrid(V, W[:3], indexing="ij"),
    "select": lambda K: K.select([A < -0.5, A > 0.5], [A * 2, A * 3], default=-1.0),
    "get_item": lambda K: K.get_item(C, 1), "slice": lambda K: K.slice(C, (0, 1, 1), (2, 2, 2)),
    "nonzero": lambda K: K.nonzero(I > 3), "unravel_index": lambda K: K.unravel_index(IDS, (3, 4)),
    "vander": lambda K: K.vander(SORTED, 3), "copy": lambda K: K.copy(A),
    "take_along_axis": lambda K: K.take_along_axis(A, numpy.argsort(A, axis=1)[:, :2], axis=1),
    "sort": lambda K: K.sort(C, axis=1), "argsort": lambda K: K.argsort(A, axis=0),
    "top_k": lambda K: K.top_k(A, 2), "in_top_k": lambda K: K.in_top_k(LABELS, LOGITS, 2),
    "searchsorted": lambda K: K.searchsorted(SORTED, V, side="right"), "digitize": lambda K: K.digitize(V, SORTED),
    "unique": lambda K: K.unique(numpy.array([3, 1, 3, 2, 1], "int32")),
    "unique_all": lambda K: K.unique(numpy.array([3.0, 1.0, 3.0, 2.0, 1.0], "float32"), return_index=True,
                                     return_inverse=True, return_counts=True),
    "unique_size": lambda K: K.unique(numpy.array([3, 1, 3, 2, 1], "int32"), size=5, fill_value=-1),
    "argmax": lambda K: K.argmax(A, axis=1), "argmin_flat": lambda K: K.argmin(C),
    "searchsorted_left": lambda K: K.searchsorted(SORTED, numpy.array([-1.0, 0.5, 9.0], "float32")),
    "clip_int": lambda K: K.clip(I, 0, 5), "where_mixed": lambda K: K.where(A > 0, I, A),
    "sqrt_int": lambda K: K.sqrt(J), "exp_int": lambda K: K.exp(J), "sum_bool": lambda K: K.sum(A > 0),
    "mean_int": lambda K: K.mean(I, axis=0), "var_int": lambda K: K.var(J), "abs_int8": lambda K: K.abs(
        I.astype("int8")), "square_u8": lambda K: K.square(U8), "maximum_int_float": lambda K: K.maximum(I, A),
    "matmul_int_float": lambda K: K.matmul(I, B), "concatenate_mixed": lambda K: K.concatenate([I, A], axis=0),
    "stack_mixed": lambda K: K.stack([I, A]), "one_hot": lambda K: K.one_hot(LABELS, 5),
    "softmax": lambda K: K.softmax(LOGITS), "log_softmax": lambda K: K.log_softmax(LOGITS, axis=0),
    "logsumexp": lambda K: K.logsumexp(C, axis=(0, 2)), "repeat": lambda K: K.repeat(A, 2, axis=1),
    "tile": lambda K: K.tile(V, (2, 2)), "pad_reflect": lambda K: K.pad(A, ((1, 1), (2, 2)), mode="reflect"),
    "take": lambda K: K.take(C, numpy.array([[0, 2], [1, 1]]), axis=2), "expm1": lambda K: K.expm1(A),
    "erf": lambda K: K.erf(A), "sign_int": lambda K: K.sign(I), "reciprocal": lambda K: K.reciprocal(POS),
    "scatter": lambda K: K.scatter(numpy.array([[0, 1], [2, 3], [0, 1]]), numpy.array([1.0, 2.0, 3.0], "float32"),
                                   (3, 4)),
    "scatter_update": lambda K: K.scatter_update(A, numpy.array([[0, 1], [2, 2]]), numpy.array([9.0, 8.0], "float32")),
    "slice_update": lambda K: K.slice_update(A, (1, 1), numpy.ones((2, 2), "float32")),
    "segment_sum": lambda K: K.segment_sum(ROWS, IDS), "segment_max": lambda K: K.segment_max(ROWS, IDS, num_segments=3),
    "rearrange": lambda K: K.rearrange(C, "b h w -> h (b w)"),
    # creation
    "linspace": lambda K: K.linspace(0.0, 1.0, 7), "linspace_noend": lambda K: K.linspace(-1, 2, 4, endpoint=False),
    "linspace_vec": lambda K: K.linspace(V[:2], W[:2], 3, axis=1), "logspace": lambda K: K.logspace(0.0, 2.0, 5),
    "geomspace": lambda K: K.geomspace(1.0, 1000.0, 4), "tri": lambda K: K.tri(3, 4, 1),
    "identity": lambda K: K.identity(3), "full_like": lambda K: K.full_like(I, 7),
    "eye_k": lambda K: K.eye(3, 4, k=1), "hamming": lambda K: K.hamming(6), "hanning": lambda K: K.hanning(6),
    "bartlett": lambda K: K.bartlett(5), "blackman": lambda K: K.blackman(6), "kaiser": lambda K: K.kaiser(6, 2.5),
    "array": lambda K: K.array([[1.0, 2.0], [3.0, 4.0]]), "saturate_cast": lambda K: K.saturate_cast(A * 200, "int8"),
    # nn
    "celu": lambda K: K.celu(A, alpha=0.5), "glu": lambda K: K.glu(A), "hard_shrink": lambda K: K.hard_shrink(A),
    "hard_tanh": lambda K: K.hard_tanh(A * 2), "soft_shrink": lambda K: K.soft_shrink(A, 0.3),
    "sparse_plus": lambda K: K.sparse_plus(A * 2), "sparse_sigmoid": lambda K: K.sparse_sigmoid(A * 2),
    "sparsemax": lambda K: K.sparsemax(A * 2), "squareplus": lambda K: K.squareplus(A, 2),
    "tanh_shrink": lambda K: K.tanh_shrink(A), "threshold": lambda K: K.threshold(A, 0.1, -3.0),
    "log_sigmoid": lambda K: K.log_sigmoid(A), "gelu_exact": lambda K: K.gelu(A, approximate=False),
    "gelu_tanh": lambda K: K.gelu(A, approximate=True),
    "batch_normalization": lambda K: K.batch_normalization(C, V[:4], POS[0], axis=-1, offset=W[:4], scale=A[0]),
    "layer_normalization": lambda K: K.layer_normalization(C, gamma=A[0], beta=A[1], epsilon=1e-3),
    "rms_normalization": lambda K: K.rms_normalization(C, scale=A[0], epsilon=1e-3),
    "normalize": lambda K: K.normalize(A), "normalize_l1": lambda K: K.normalize(A, axis=0, order=1),
    "binary_crossentropy": lambda K: K.binary_crossentropy((PROBS > 0.3).astype("float32"), PROBS),
    "binary_crossentropy_logits": lambda K: K.binary_crossentropy((PROBS > 0.3).astype("float32"), LOGITS, True),
    "categorical_crossentropy": lambda K: K.categorical_crossentropy(PROBS[::-1], PROBS),
    "categorical_crossentropy_logits": lambda K: K.categorical_crossentropy(PROBS[::-1], LOGITS, from_logits=True),
    "sparse_categorical_crossentropy": lambda K: K.sparse_categorical_crossentropy(LABELS, PROBS),
    "sparse_categorical_crossentropy_logits": lambda K: K.sparse_categorical_crossentropy(LABELS, LOGITS, True),
    "multi_hot": lambda K: K.multi_hot(numpy.array([[0, 2], [1, 1]], "int32"), 4),
    "depth_to_space": lambda K: K.depth_to_space(_rng_image(K, (1, 2, 3, 8)), 2),
    "space_to_depth": lambda K: K.space_to_depth(IMG[:, :6, :6], 3),
    "psnr": lambda K: K.psnr(IMG[0], IMG[1], 1.0),
    "max_pool": lambda K: K.max_pool(IMG, 2, padding="same"),
    "average_pool": lambda K: K.average_pool(IMG, (2, 3), strides=(1, 2)),
    "conv": lambda K: K.conv(IMG, numpy.ones((3, 3, 3, 2), "float32") * 0.1, padding="same"),
    "conv_first": lambda K: K.conv(IMG.transpose(0, 3, 1, 2), numpy.ones((2, 2, 3, 2), "float32") * 0.2,
                                   data_format="channels_first"),
    "conv1d": lambda K: K.conv(C, numpy.ones((2, 4, 3), "float32") * 0.1, strides=1),
    "depthwise_conv": lambda K: K.depthwise_conv(IMG, numpy.ones((2, 2, 3, 2), "float32") * 0.3),
    "separable_conv": lambda K: K.separable_conv(IMG, numpy.ones((2, 2, 3, 1), "float32") * 0.3,
                                                 numpy.ones((1, 1, 3, 4), "float32") * 0.5),
    "conv_transpose": lambda K: K.conv_transpose(IMG, numpy.ones((3, 3, 2, 3), "float32") * 0.1, strides=2),
    "adaptive_average_pool": lambda K: K.adaptive_average_pool(IMG, (4, 3)),
    "adaptive_max_pool": lambda K: K.adaptive_max_pool(IMG, 4),
    "dot_product_attention": lambda K: K.dot_product_attention(Q, KV, VAL),
    "dot_product_attention_causal": lambda K: K.dot_product_attention(Q, KV[:, :5], VAL[:, :5], is_causal=True),
    "dot_product_attention_mask": lambda K: K.dot_product_attention(
        Q, KV, VAL, mask=numpy.tril(numpy.ones((5, 6), bool), 1)[None, None], scale=0.3),
    "dot_product_attention_bias": lambda K: K.dot_product_attention(Q, KV, VAL, bias=numpy.ones((5, 6), "float32")
                                                                    * numpy.arange(6, dtype="float32")),
    "ctc_loss": lambda K: K.ctc_loss(numpy.array([[1, 2, 2], [3, 1, 0]], "int32"), _rng_logits(K),
                                     numpy.array([3, 2], "int32"), numpy.array([7, 5], "int32")),
    "ctc_decode": lambda K: K.ctc_decode(_rng_logits(K), numpy.array([7, 5], "int32")),
    "unfold": lambda K: K.unfold(IMG.transpose(0, 3, 1, 2), 2, stride=2),
    "unfold_padded": lambda K: K.unfold(IMG.transpose(0, 3, 1, 2), (3, 2), dilation=(1, 2), padding=1, stride=(2, 1)),
    "fold": lambda K: K.fold(K.unfold(IMG.transpose(0, 3, 1, 2), 3, padding=1), (6, 7), 3, padding=1),
    "extract_sequences": lambda K: K.extract_sequences(C, 2, 1),
    # linalg and fft
    "inv": lambda K: K.inv(SQ), "det": lambda K: K.det(SQ), "slogdet": lambda K: K.slogdet(SQ),
    "solve": lambda K: K.solve(SQ, C[:, :, :3]), "cholesky": lambda K: K.cholesky(SPD),
    "norm": lambda K: K.norm(A), "norm_axis": lambda K: K.norm(C, ord=1, axis=-1),
    "norm_fro": lambda K: K.norm(C, ord="fro", axis=(1, 2)), "norm_inf": lambda K: K.norm(A, ord=numpy.inf),
    "eigh_values": lambda K: K.eigh(SPD)[0], "svd_values": lambda K: K.svd(A, compute_uv=False),
    "matrix_rank": lambda K: K.matrix_rank(A), "pinv": lambda K: K.pinv(A), "logdet": lambda K: K.logdet(SPD),
    "solve_triangular": lambda K: K.solve_triangular(SQ, C[:, :, :3], lower=True),
    "lstsq": lambda K: K.lstsq(A, B[:3]), "lu_factor": lambda K: K.lu_factor(SQ[0]),
    "fft": lambda K: K.fft((A, UNIT)), "fft2": lambda K: K.fft2((A, UNIT)), "ifft2": lambda K: K.ifft2((A, UNIT)),
    "rfft": lambda K: K.rfft(C), "rfft_len": lambda K: K.rfft(C, 6), "irfft": lambda K: K.irfft((A, UNIT)),
    "stft": lambda K: K.stft(numpy.tile(V, 4), 8, 4, 8), "stft_pad": lambda K: K.stft(numpy.tile(V, 4), 6, 2, 8),
    "istft_pad": lambda K: K.istft(K.stft(numpy.tile(V, 4), 6, 2, 8), 6, 2, 8, window="hamming", center=False), "istft": lambda K: K.istft(K.stft(numpy.tile(V, 4), 8, 4, 8),
                                                                                  8, 4, 8),
    # image (Keras's ops.image namespace: K.image)
    **{f"resize_{method}{'_aa' if aa else ''}_{size[0]}x{size[1]}":
       (lambda K, method=method, aa=aa, size=size: K.image.resize(IMG, size, interpolation=method, antialias=aa))
       for method in ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5")
       for aa in (False, True) for size in ((4, 5), (9, 11))},
    "resize_first": lambda K: K.image.resize(IMG.transpose(0, 3, 1, 2), (4, 9), data_format="channels_first"),
    "resize_crop": lambda K: K.image.resize(IMG, (3, 6), crop_to_aspect_ratio=True),
    "resize_pad": lambda K: K.image.resize(IMG, (3, 6), pad_to_aspect_ratio=True, fill_value=0.5),
    "resize_uint8_nearest": lambda K: K.image.resize((IMG * 255).astype("uint8"), (4, 4), interpolation="nearest"),
    "resize_single": lambda K: K.image.resize(IMG[0], (3, 3)),
    "pad_images": lambda K: K.image.pad_images(IMG, 1, 2, target_height=9, target_width=10),
    "crop_images": lambda K: K.image.crop_images(IMG, 1, 2, bottom_cropping=2, right_cropping=1),
    "rgb_to_grayscale": lambda K: K.image.rgb_to_grayscale(IMG),
    "rgb_to_hsv": lambda K: K.image.rgb_to_hsv(IMG),
    "hsv_to_rgb": lambda K: K.image.hsv_to_rgb(IMG),
    "hsv_round_trip_first": lambda K: K.image.hsv_to_rgb(K.image.rgb_to_hsv(IMG.transpose(0, 3, 1, 2),
                                                                            data_format="channels_first"),
                                                         data_format="channels_first"),
    "extract_patches": lambda K: K.image.extract_patches(IMG, 2),
    "extract_patches_strided": lambda K: K.image.extract_patches(IMG, (3, 2), strides=(2, 1), padding="same"),
    "extract_patches_3d": lambda K: K.image.extract_patches_3d(numpy.stack([IMG, IMG * 2], 1), (2, 2, 2)),
    "map_coordinates": lambda K: K.image.map_coordinates(A, numpy.stack([UNIT * 3 + 1, POS * 2]), 1),
    **{f"map_coordinates_{mode}": (lambda K, mode=mode: K.image.map_coordinates(
        A, numpy.stack([UNIT * 5, POS * 3 - 2]), 1, fill_mode=mode, fill_value=-1.0))
       for mode in ("constant", "nearest", "wrap", "mirror", "reflect")},
    "map_coordinates_order0": lambda K: K.image.map_coordinates(A, numpy.stack([UNIT * 3 + 1.2, POS * 2]), 0),
    "affine_transform": lambda K: K.image.affine_transform(IMG, numpy.array([1.1, 0.2, -0.5, -0.1, 0.9, 0.7, 0.0, 0.0],
                                                                            "float32")),
    "perspective_transform": lambda K: K.image.perspective_transform(
        IMG, numpy.array([[0, 0], [6, 0], [0, 5], [6, 5]], "float32"),
        numpy.array([[0.5, 0.3], [5.6, 0.1], [0.2, 4.5], [6.1, 5.2]], "float32")),
    "gaussian_blur": lambda K: K.image.gaussian_blur(IMG, (3, 3), (1.0, 1.0)),
    "gaussian_blur_wide": lambda K: K.image.gaussian_blur(IMG, (5, 5), (1.5, 1.5)),
    "sobel_edges": lambda K: K.image.sobel_edges(IMG),
    "ssim": lambda K: K.image.ssim(IMG, IMG[::-1] * 0.5 + IMG * 0.5, filter_size=3),
    "scale_and_translate": lambda K: K.image.scale_and_translate(IMG, (2, 9, 5, 3), numpy.array([1.4, 0.7]),
                                                                 numpy.array([0.5, -0.2]), (1, 2), "bilinear"),
    "scale_and_translate_lanczos": lambda K: K.image.scale_and_translate(IMG, (2, 4, 11, 3), numpy.array([0.6, 1.5]),
                                                                         numpy.array([0.0, 0.3]), (1, 2), "lanczos3",
                                                                         antialias=False),
}


def _rng_image(K, shape):
    return numpy.arange(numpy.prod(shape), dtype="float32").reshape(shape) / 10


def _rng_logits(K):
    return numpy.random.default_rng(3).normal(size=(2, 7, 5)).astype("float32")


def flat_outputs(value, to_numpy):
    """The arrays of an op result (nested tuples/lists flattened in order)."""
    if isinstance(value, (tuple, list)):
        return [array for item in value for array in flat_outputs(item, to_numpy)]
    return [numpy.asarray(to_numpy(value))]


def main():
    import keras

    record = {}
    for name, case in CASES.items():
        try:
            outputs = flat_outputs(case(keras.ops), keras.ops.convert_to_numpy)
        except Exception as error:  # noqa: BLE001 - a case Keras refuses is left out, and said so
            print(f"skipped {name}: {type(error).__name__}: {error}")
            continue
        for index, array in enumerate(outputs):
            record[f"{name}/{index}"] = array
    numpy.savez_compressed(FIXTURE, **record)
    print(f"{len(record)} arrays from {len({key.split('/')[0] for key in record})} cases, Keras {keras.__version__}")


if __name__ == "__main__":
    main()
