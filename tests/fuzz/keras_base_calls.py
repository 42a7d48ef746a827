"""Working base calls of the keras.ops functions (issue 24) whose required
arguments are not all (2, 3, 4) float32 arrays, for the argument fuzz
(argument_cases.py merges them into its BASE_CALLS): each fuzzed argument
starts from a call that succeeds, so a refusal is about that argument.
"""
import numpy


def _array(*shape):
    return numpy.linspace(-1.0, 1.0, int(numpy.prod(shape))).astype("float32").reshape(shape)


def _ints(*values):
    return numpy.array(values, "int32")


def _square(n=3):
    return (numpy.eye(n) * 2 + 0.1 * numpy.arange(n * n).reshape(n, n) / (n * n)).astype("float32")


def _spd(n=3):
    a = _square(n)
    return (a @ a.T).astype("float32")


def _pair(*shape):  # fft's (real, imag)
    return (_array(*shape), _array(*shape) * 0.5)


def _add(a, b):
    return a + b


def _identity(x):
    return x


KERAS_BASE_CALLS = {
    "adaptive_average_pool": ((_array(1, 4, 4, 2), 2), {}),
    "adaptive_max_pool": ((_array(1, 4, 4, 2), 2), {}),
    "argpartition": ((_array(2, 5), 2), {}),
    "array_split": ((_array(4, 3), 2), {}),
    "associative_scan": ((_add, _array(4, 3)), {}),
    "average_pool": ((_array(1, 6, 2), 2), {}),
    "max_pool": ((_array(1, 6, 2), 2), {}),
    "bartlett": ((5,), {}),
    "blackman": ((5,), {}),
    "hamming": ((5,), {}),
    "hanning": ((5,), {}),
    "kaiser": ((5, 2.0), {}),
    "batch_normalization": ((_array(2, 3), _array(3), numpy.ones(3, "float32"), -1), {}),
    "bincount": ((_ints(0, 1, 1, 3),), {}),
    "bitwise_and": ((_ints(5, 3), _ints(1, 2)), {}),
    "bitwise_or": ((_ints(5, 3), _ints(1, 2)), {}),
    "bitwise_xor": ((_ints(5, 3), _ints(1, 2)), {}),
    "bitwise_invert": ((_ints(5, 3),), {}),
    "bitwise_not": ((_ints(5, 3),), {}),
    "bitwise_left_shift": ((_ints(5, 3), _ints(1, 2)), {}),
    "bitwise_right_shift": ((_ints(5, 3), _ints(1, 2)), {}),
    "left_shift": ((_ints(5, 3), _ints(1, 2)), {}),
    "right_shift": ((_ints(5, 3), _ints(1, 2)), {}),
    "gcd": ((_ints(12, 9), _ints(8, 6)), {}),
    "lcm": ((_ints(12, 9), _ints(8, 6)), {}),
    "ldexp": ((_array(2, 3), _ints(1, 2, 3)), {}),
    "broadcast_to": ((_array(3), (2, 3)), {}),
    "cholesky": ((_spd(),), {}),
    "cholesky_inverse": ((numpy.linalg.cholesky(_spd()).astype("float32"),), {}),
    "det": ((_square(),), {}),
    "inv": ((_square(),), {}),
    "logdet": ((_spd(),), {}),
    "slogdet": ((_square(),), {}),
    "lu_factor": ((_square(),), {}),
    "eig": ((_square(),), {}),
    "eigh": ((_spd(),), {}),
    "solve": ((_square(), _array(3, 2)), {}),
    "solve_triangular": ((numpy.triu(_square()), _array(3, 2)), {}),
    "lstsq": ((_array(4, 3), _array(4, 2)), {}),
    "cond": ((True, lambda: 1.0, lambda: 0.0), {}),
    "conv": ((_array(1, 5, 2), numpy.ones((2, 2, 3), "float32")), {}),
    "depthwise_conv": ((_array(1, 5, 5, 2), numpy.ones((2, 2, 2, 1), "float32")), {}),
    "separable_conv": ((_array(1, 5, 5, 2), numpy.ones((2, 2, 2, 1), "float32"),
                        numpy.ones((1, 1, 2, 3), "float32")), {}),
    "corrcoef": ((_array(2, 4) ** 2,), {}),
    "correlate": ((_array(5), _array(3)), {}),
    "cross": ((_array(2, 3), _array(2, 3) ** 2), {}),
    "ctc_decode": ((numpy.log(numpy.full((2, 4, 3), 1 / 3, "float32")), _ints(4, 3)), {}),
    "ctc_loss": ((_ints(1, 2, 1, 2).reshape(2, 2), _array(2, 5, 3), _ints(2, 2), _ints(5, 5)), {}),
    "depth_to_space": ((_array(1, 2, 2, 4), 2), {}),
    "space_to_depth": ((_array(1, 4, 4, 1), 2), {}),
    "diag": ((_array(3),), {}),
    "digitize": ((_array(5), numpy.array([-0.5, 0.0, 0.5], "float32")), {}),
    "dot": ((_array(2, 3), _array(3, 4)), {}),
    "tensordot": ((_array(2, 3), _array(3, 4)), {"axes": 1}),
    "dsplit": ((_array(2, 3, 4), 2), {}),
    "hsplit": ((_array(2, 4, 3), 2), {}),
    "vsplit": ((_array(4, 3), 2), {}),
    "einsum": (("ij,jk->ik", _array(2, 3), _array(3, 4)), {}),
    "empty": (((2, 3),), {}),
    "extract_sequences": ((_array(2, 8), 4, 2), {}),
    "fft": ((_pair(2, 4),), {}),
    "fft2": ((_pair(2, 4),), {}),
    "ifft2": ((_pair(2, 4),), {}),
    "irfft": ((_pair(2, 3),), {}),
    "stft": ((_array(2, 16), 8, 4, 8), {}),
    "istft": ((_pair(2, 5, 5), 8, 4, 8), {}),
    "fold": ((_array(1, 4, 9), (4, 4), 2), {}),
    "unfold": ((_array(1, 1, 4, 4), 2), {}),
    "fori_loop": ((0, 3, lambda i, x: x + 1.0, _array(2)), {}),
    "while_loop": ((lambda *state: state[0] < 3, lambda *state: (state[0] + 1,) + state[1:], 0), {}),
    "full_like": ((_array(2, 3), 1.5), {}),
    "get_item": ((_array(4, 3), 1), {}),
    "histogram": ((_array(10),), {}),
    "identity": ((3,), {}),
    "tri": ((3,), {}),
    "in_top_k": ((_ints(0, 2), _array(2, 4), 2), {}),
    "map": ((_identity, _array(3, 2)), {}),
    "scan": ((lambda carry, x: (carry + x, carry), _array(2)), {"xs": _array(3, 2)}),
    "vectorized_map": ((_identity, _array(3, 2)), {}),
    "vectorize": ((_identity,), {}),
    "switch": ((1, [lambda x: x, lambda x: x * 2.0], _array(2)), {}),
    "moments": ((_array(2, 3), -1), {}),
    "multi_hot": ((_ints(0, 2),), {"num_classes": 4}),
    "quantile": ((_array(2, 5), 0.5), {}),
    "nanquantile": ((_array(2, 5), 0.5), {}),
    "percentile": ((_array(2, 5), 50), {}),
    "nanpercentile": ((_array(2, 5), 50), {}),
    "psnr": ((_array(2, 3), _array(2, 3) * 0.5, 1.0), {}),
    "rearrange": ((_array(2, 3, 4), "a b c -> b a c"), {}),
    "roll": ((_array(2, 3), 1), {}),
    "saturate_cast": ((_array(2, 3) * 300, "int8"), {}),
    "scatter": ((_ints(0, 2).reshape(2, 1), _array(2), (4,)), {}),
    "scatter_update": ((_array(4, 3), _ints(0, 2).reshape(2, 1), _array(2, 3)), {}),
    "searchsorted": ((numpy.array([-1.0, 0.0, 1.0], "float32"), _array(4)), {}),
    "segment_max": ((_array(4, 3), _ints(0, 0, 1, 1)), {}),
    "segment_min": ((_array(4, 3), _ints(0, 0, 1, 1)), {}),
    "segment_prod": ((_array(4, 3), _ints(0, 0, 1, 1)), {}),
    "segment_sum": ((_array(4, 3), _ints(0, 0, 1, 1)), {}),
    "select": (([_array(2, 3) > 0, _array(2, 3) < -0.5], [_array(2, 3), _array(2, 3) * 2]), {}),
    "slice": ((_array(4, 3), (1, 0), (2, 3)), {}),
    "slice_update": ((_array(4, 3), (1, 0), _array(2, 3)), {}),
    "sparse_categorical_crossentropy": ((_ints(0, 2), numpy.full((2, 3), 1 / 3, "float32")), {}),
    "take_along_axis": ((_array(2, 3), _ints(0, 2, 1, 0, 0, 1).reshape(2, 3)), {"axis": 1}),
    "threshold": ((_array(2, 3), 0.0, -1.0), {}),
    "top_k": ((_array(2, 5), 2), {}),
    "unravel_index": ((_ints(1, 5), (2, 3)), {}),
    "vander": ((_array(3),), {}),
    "view_as_complex": ((_array(2, 2),), {}),
    "view_as_real": ((_array(2, 3).astype("complex64"),), {}),
    "rfft": ((_array(2, 4),), {}),
}
