"""Differentiable ops (the functional API), one family per module.

Every op takes Tensors (or numbers/arrays as constants) and returns Tensors;
the natural ones are also Tensor methods and operators (``x.sum()``,
``a @ b``).

Each public name is imported explicitly from the one module that defines it
(no star imports, so no name depends on import order); ``__all__`` lists
them: Keras 3's ``keras.ops`` names and minikeras's own lower-level ops
(``conv2d``, ``dense``, ``lstm_sequence``, ...).
tests/ops/test_ops_names.py checks both.
"""
import sys as _sys

from minikeras.ops.array.arranging import (
    append, array_split, broadcast_to, copy, diag, diagflat, diagonal, dsplit, dstack, flip, fliplr, flipud,
    get_item, hsplit, hstack, meshgrid, nonzero, roll, rot90, select, slice, trace, tril, triu,
    unravel_index, unstack, vander, vsplit, vstack,
)
from minikeras.ops.array.dtype import cast
from minikeras.ops.array.indexing import getitem, take
from minikeras.ops.array.joining import concatenate, split, stack
from minikeras.ops.array.padding import pad
from minikeras.ops.array.rearranging import cdist, rearrange
from minikeras.ops.array.repeating import repeat, tile
from minikeras.ops.array.reshaping import (
    expand_dims, flatten, moveaxis, ravel, reshape, squeeze, swapaxes, transpose,
)
from minikeras.ops.array.scatter import (
    scatter, scatter_update, segment_max, segment_min, segment_prod, segment_sum, slice_update,
)
from minikeras.ops.array.sorting import (
    argpartition, argsort, digitize, in_top_k, searchsorted, sort, take_along_axis, top_k, unique,
)
from minikeras.ops.creation import (
    arange, array, bartlett, blackman, empty, empty_like, eye, full, full_like, geomspace, hamming, hanning,
    identity, kaiser, linspace, logspace, ones, ones_like, tri, zeros, zeros_like,
)
from minikeras.ops.core import (
    convert_to_numpy, convert_to_tensor, custom_gradient, dtype, is_tensor, ndim, saturate_cast, shape, size,
    stop_gradient, vectorize, view,
)
from minikeras.ops.math.abs_sign import abs, absolute, sign
from minikeras.ops.math.arithmetic import (
    add, div, divide, mul, multiply, neg, negative, pow, power, sub, subtract,
)
from minikeras.ops.math.compare import (
    clip, equal, greater, greater_equal, less, less_equal, logical_and, logical_not, logical_or, logical_xor,
    maximum, minimum, not_equal, where,
)
from minikeras.ops.math.complex_parts import (
    angle, conj, conjugate, imag, polar, real, view_as_complex, view_as_real,
)
from minikeras.ops.math.cumulative import cumprod, cumsum, diff, nancumprod, nancumsum
from minikeras.ops.math.exp_log import (
    cbrt, erfc, erfinv, exp, exp2, expm1, i0, log, log10, log1p, log2, logaddexp, logaddexp2,
)
from minikeras.ops.math.fft import fft, fft2, ifft2, irfft, istft, rfft, stft
from minikeras.ops.math.integer_ops import (
    bitwise_and, bitwise_invert, bitwise_left_shift, bitwise_not, bitwise_or, bitwise_right_shift,
    bitwise_xor, gcd, lcm, left_shift, right_shift,
)
from minikeras.ops.math.linalg import (
    cholesky, cholesky_inverse, det, eig, eigh, inv, logdet, lstsq, lu_factor, matrix_rank, norm, pinv, qr,
    slogdet, solve, solve_triangular, svd,
)
from minikeras.ops.math.matmul import matmul
from minikeras.ops.math.powers import reciprocal, rsqrt, sqrt, square
from minikeras.ops.math.predicates import (
    all, allclose, any, count_nonzero, isclose, isfinite, isin, isinf, isnan, isneginf, isposinf, isreal,
)
from minikeras.ops.math.products import cross, dot, einsum, inner, kron, outer, tensordot, vdot
from minikeras.ops.math.rounding import (
    ceil, divide_no_nan, fabs, floor, floor_divide, fmax, fmin, fmod, heaviside, ldexp, mod, nan_to_num,
    nextafter, round, signbit, true_divide, trunc,
)
from minikeras.ops.math.special import erf
from minikeras.ops.math.statistics import (
    amax, amin, average, bincount, corrcoef, correlate, histogram, median, moments, nanargmax, nanargmin,
    nanmax, nanmean, nanmedian, nanmin, nanpercentile, nanprod, nanquantile, nanstd, nansum, nanvar,
    percentile, ptp, quantile, trapezoid,
)
from minikeras.ops.math.trig import (
    arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, cos, cosh, deg2rad, hypot, rad2deg, sin,
    sinc, sinh, tan,
)
from minikeras.ops.reduce import argmax, argmin, logsumexp, max, mean, min, prod, std, sum, var
from minikeras.ops.nn.activations import (
    elu, gelu, hard_sigmoid, hard_silu, hard_swish, leaky_relu, log_sigmoid, relu, relu6, selu, sigmoid,
    silu, softplus, softsign, swish, tanh,
)
from minikeras.ops.nn.activations_composed import (
    celu, glu, hard_shrink, hard_tanh, soft_shrink, sparse_plus, sparse_sigmoid, sparsemax, squareplus,
    tanh_shrink, threshold,
)
from minikeras.ops.nn.affine_transform import affine_transform
from minikeras.ops.nn.attention import dot_product_attention
from minikeras.ops.nn.bias_activation import bias_activation
from minikeras.ops.nn.conv import conv1d, conv2d
from minikeras.ops.nn.conv3d import avg_pool3d, conv3d, max_pool3d
from minikeras.ops.nn.conv3d_transpose import conv3d_transpose
from minikeras.ops.nn.conv_depthwise import depthwise_conv2d
from minikeras.ops.nn.conv_transpose import conv2d_transpose
from minikeras.ops.nn.ctc import ctc_loss
from minikeras.ops.nn.ctc_decode import ctc_decode
from minikeras.ops.nn.dense import dense
from minikeras.ops.nn.dropout import dropout
from minikeras.ops.nn.embedding import embedding, one_hot
from minikeras.ops.nn.group_norm import group_normalize
from minikeras.ops.nn.keras_functions import (
    adaptive_average_pool, adaptive_max_pool, average_pool, conv, conv_transpose, depth_to_space,
    depthwise_conv, extract_sequences, fold, max_pool, separable_conv, space_to_depth, unfold,
)
from minikeras.ops.nn.keras_normalization_losses import (
    batch_normalization, binary_crossentropy, categorical_crossentropy, layer_normalization, multi_hot,
    normalize, psnr, rms_normalization, sparse_categorical_crossentropy,
)
from minikeras.ops.nn.normalization import batch_norm_inference, batch_norm_training, layer_norm
from minikeras.ops.nn.pool import avg_pool1d, avg_pool2d, max_pool1d, max_pool2d
from minikeras.ops.nn.resize import resize
from minikeras.ops.nn.rnn_gru import gru_sequence
from minikeras.ops.nn.rnn_lstm import lstm_sequence
from minikeras.ops.nn.rnn_simple import simple_rnn_sequence
from minikeras.ops.nn.softmax import (
    log_softmax, sigmoid_cross_entropy, softmax, softmax_cross_entropy, sparse_softmax_cross_entropy,
)
from minikeras.ops.nn.upsampling import upsample
from minikeras.ops.nn.weight_penalty import weight_penalty
from minikeras.ops.control_flow import (
    associative_scan, cond, fori_loop, map, scan, switch, vectorized_map, while_loop,
)
from minikeras.ops._promotion import result_type

__all__ = [
    "abs", "absolute", "adaptive_average_pool", "adaptive_max_pool", "add", "affine_transform", "all",
    "allclose", "amax", "amin", "angle", "any", "append", "arange", "arccos", "arccosh", "arcsin", "arcsinh",
    "arctan", "arctan2", "arctanh", "argmax", "argmin", "argpartition", "argsort", "array", "array_split",
    "associative_scan", "average", "average_pool", "avg_pool1d", "avg_pool2d", "avg_pool3d", "bartlett",
    "batch_norm_inference", "batch_norm_training", "batch_normalization", "bias_activation",
    "binary_crossentropy", "bincount", "bitwise_and", "bitwise_invert", "bitwise_left_shift", "bitwise_not",
    "bitwise_or", "bitwise_right_shift", "bitwise_xor", "blackman", "broadcast_to", "cast",
    "categorical_crossentropy", "cbrt", "cdist", "ceil", "celu", "cholesky", "cholesky_inverse", "clip",
    "concatenate", "cond", "conj", "conjugate", "conv", "conv1d", "conv2d", "conv2d_transpose", "conv3d",
    "conv3d_transpose", "conv_transpose", "convert_to_numpy", "convert_to_tensor", "copy", "corrcoef",
    "correlate", "cos", "cosh", "count_nonzero", "cross", "ctc_decode", "ctc_loss", "cumprod", "cumsum",
    "custom_gradient", "deg2rad", "dense", "depth_to_space", "depthwise_conv", "depthwise_conv2d", "det",
    "diag", "diagflat", "diagonal", "diff", "digitize", "div", "divide", "divide_no_nan", "dot",
    "dot_product_attention", "dropout", "dsplit", "dstack", "dtype", "eig", "eigh", "einsum", "elu",
    "embedding", "empty", "empty_like", "equal", "erf", "erfc", "erfinv", "exp", "exp2", "expand_dims",
    "expm1", "extract_sequences", "eye", "fabs", "fft", "fft2", "flatten", "flip", "fliplr", "flipud",
    "floor", "floor_divide", "fmax", "fmin", "fmod", "fold", "fori_loop", "full", "full_like", "gcd", "gelu",
    "geomspace", "get_item", "getitem", "glu", "greater", "greater_equal", "group_normalize", "gru_sequence",
    "hamming", "hanning", "hard_shrink", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "heaviside",
    "histogram", "hsplit", "hstack", "hypot", "i0", "identity", "ifft2", "imag", "in_top_k", "inner", "inv",
    "irfft", "is_tensor", "isclose", "isfinite", "isin", "isinf", "isnan", "isneginf", "isposinf", "isreal",
    "istft", "kaiser", "kron", "layer_norm", "layer_normalization", "lcm", "ldexp", "leaky_relu",
    "left_shift", "less", "less_equal", "linspace", "log", "log10", "log1p", "log2", "log_sigmoid",
    "log_softmax", "logaddexp", "logaddexp2", "logdet", "logical_and", "logical_not", "logical_or",
    "logical_xor", "logspace", "logsumexp", "lstm_sequence", "lstsq", "lu_factor", "map", "matmul",
    "matrix_rank", "max", "max_pool", "max_pool1d", "max_pool2d", "max_pool3d", "maximum", "mean", "median",
    "meshgrid", "min", "minimum", "mod", "moments", "moveaxis", "mul", "multi_hot", "multiply", "nan_to_num",
    "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmedian", "nanmin",
    "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum", "nanvar", "ndim", "neg", "negative",
    "nextafter", "nonzero", "norm", "normalize", "not_equal", "one_hot", "ones", "ones_like", "outer", "pad",
    "percentile", "pinv", "polar", "pow", "power", "prod", "psnr", "ptp", "qr", "quantile", "rad2deg",
    "ravel", "real", "rearrange", "reciprocal", "relu", "relu6", "repeat", "reshape", "resize",
    "result_type", "rfft", "right_shift", "rms_normalization", "roll", "rot90", "round", "rsqrt",
    "saturate_cast", "scan", "scatter", "scatter_update", "searchsorted", "segment_max", "segment_min",
    "segment_prod", "segment_sum", "select", "selu", "separable_conv", "shape", "sigmoid",
    "sigmoid_cross_entropy", "sign", "signbit", "silu", "simple_rnn_sequence", "sin", "sinc", "sinh", "size",
    "slice", "slice_update", "slogdet", "soft_shrink", "softmax", "softmax_cross_entropy", "softplus",
    "softsign", "solve", "solve_triangular", "sort", "space_to_depth", "sparse_categorical_crossentropy",
    "sparse_plus", "sparse_sigmoid", "sparse_softmax_cross_entropy", "sparsemax", "split", "sqrt", "square",
    "squareplus", "squeeze", "stack", "std", "stft", "stop_gradient", "sub", "subtract", "sum", "svd",
    "swapaxes", "swish", "switch", "take", "take_along_axis", "tan", "tanh", "tanh_shrink", "tensordot",
    "threshold", "tile", "top_k", "trace", "transpose", "trapezoid", "tri", "tril", "triu", "true_divide",
    "trunc", "unfold", "unique", "unravel_index", "unstack", "upsample", "vander", "var", "vdot",
    "vectorize", "vectorized_map", "view", "view_as_complex", "view_as_real", "vsplit", "vstack",
    "weight_penalty", "where", "while_loop", "zeros", "zeros_like",
]

# Keras's namespaces (last: every op exists by now). ``ops.array`` is the function
# (the array family stays importable as ``minikeras.ops.array.<module>``), and
# ``ops.nn.softmax``/``ops.nn.conv`` are functions too (see nn/_keras_namespace.py).
from minikeras.ops import image, linalg, numpy  # noqa: E402
from minikeras.ops.creation import array  # noqa: E402,F811  (the function, not the family package)
from minikeras.ops import _entry, _tensor_methods  # noqa: E402
from minikeras.ops.nn import _keras_namespace  # noqa: E402

# Last of all, when every op exists: each public op names itself in the argument errors under it.
_entry.wrap_public_ops(_sys.modules[__name__])
_entry.wrap_public_ops(image)  # keras.ops.image's functions, which are not ops.* names
_keras_namespace.bind()
_tensor_methods.install()
