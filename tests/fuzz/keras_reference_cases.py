"""The calls of the Keras-referenced argument fuzz (issue 36), shared by the
recorder (``make_keras_reference.py``, which runs them on Keras 3) and the
replay (``keras_reference.py``, which runs them on minikeras and compares).

Every function of Keras's ``keras.ops`` and ``keras.ops.image`` namespaces
(their signatures come from ``tests/ops/fixtures/keras_ops_names.json``, so
neither Keras nor minikeras is imported here) is called once with a working
*base call* (keras_base_calls.py, :data:`EXTRA_BASE_CALLS`, else (2, 3, 4)
float32 arrays), then once for each *variant* of each argument, the others
keeping their base values:

- an array argument gets other dtypes (int32, bool, float16, float64,
  complex64), a 0-d array, Python numbers, an empty array, NaN and inf
  entries, fewer and more axes, a list, None and a string;
- a list of arrays (``concatenate``, ``hstack``) gets scalars, an empty
  list, mismatched or mixed members, a bare array;
- any other argument gets :data:`SCALAR_VALUES` (bools, negatives, floats
  for ints, NaN, huge ints, strings, None, tuples, an array where a number
  is expected, complex).

A case is ``(label, op, args, kwargs, argument, value)`` (the fuzzed
argument's name and value; None and None for a base call); the label (``"sum(axis=1.5)"``,
``"nanmax(x=all_nan)"``) is its key in the recorded fixture. The list is
deterministic: the same calls in the same order on every run.
"""
import json
import os

import numpy

from keras_base_calls import KERAS_BASE_CALLS

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = os.path.join(os.path.dirname(HERE), "ops", "fixtures", "keras_ops_names.json")
FIXTURE = os.path.join(HERE, "fixtures", "keras_argument_answers.json")

HUGE = 10**12


def _array(*shape):
    return numpy.linspace(-1.0, 1.0, int(numpy.prod(shape))).astype("float32").reshape(shape)


def _ints(*values):
    return numpy.array(values, "int32")


# Ops left out: they take or return functions (their arrays are the user's
# function's business), or Keras has no TensorFlow implementation of them.
LEFT_OUT = {"custom_gradient", "jvp", "vectorize", "vectorized_map", "map", "scan", "associative_scan",
            "fori_loop", "while_loop", "cond", "switch"}

# Base calls of the ops whose required arguments are not (2, 3, 4) float32
# arrays and that keras_base_calls.py does not list (the older ops).
EXTRA_BASE_CALLS = {
    "arange": ((5,), {}),
    "eye": ((3,), {}),
    "full": (((2, 3), 1.5), {}),
    "zeros": (((2, 3),), {}),
    "ones": (((2, 3),), {}),
    "cast": ((_array(2, 3), "float64"), {}),
    "clip": ((_array(2, 3), -0.5, 0.5), {}),
    "reshape": ((_array(2, 3), (3, 2)), {}),
    "expand_dims": ((_array(2, 3), 0), {}),
    "moveaxis": ((_array(2, 3, 4), 0, 1), {}),
    "swapaxes": ((_array(2, 3, 4), 0, 1), {}),
    "one_hot": ((_ints(0, 2, 1), 3), {}),
    "repeat": ((_array(2, 3), 2), {}),
    "tile": ((_array(2, 3), 2), {}),
    "split": ((_array(4, 3), 2), {}),
    "take": ((_array(4, 3), _ints(0, 1)), {}),
    "pad": ((_array(2, 3), 1), {}),
    "where": ((_array(2, 3) > 0, _array(2, 3), numpy.ones((2, 3), "float32")), {}),
    "concatenate": (([_array(2, 3), _array(2, 3)],), {}),
    "stack": (([_array(2, 3), _array(2, 3)],), {}),
    "hstack": (([_array(2, 3), _array(2, 3)],), {}),
    "vstack": (([_array(2, 3), _array(2, 3)],), {}),
    "dstack": (([_array(2, 3), _array(2, 3)],), {}),
    "meshgrid": ((_array(3), _array(2)), {}),
    "matmul": ((_array(2, 3), _array(3, 4)), {}),
    "inner": ((_array(2, 3), _array(4, 3)), {}),
    "outer": ((_array(3), _array(4)), {}),
    "vdot": ((_array(3), _array(3)), {}),
    "kron": ((_array(2, 2), _array(2, 3)), {}),
    "cdist": ((_array(3, 2), _array(4, 2)), {}),
    "view": ((_array(2, 3),), {"dtype": "int32"}),
    "polar": ((numpy.abs(_array(2, 3)), _array(2, 3)), {}),
    "empty_like": ((_array(2, 3),), {}),
    "diagflat": ((_array(2, 2),), {}),
    "trace": ((_array(3, 3),), {}),
    "diagonal": ((_array(3, 3),), {}),
    "qr": ((_array(3, 3) + numpy.eye(3, dtype="float32"),), {}),
    "svd": ((_array(3, 3) + numpy.eye(3, dtype="float32"),), {}),
    "pinv": ((_array(3, 3) + numpy.eye(3, dtype="float32"),), {}),
    "matrix_rank": ((_array(3, 3) + numpy.eye(3, dtype="float32"),), {}),
    "norm": ((_array(3, 3),), {}),
    "binary_crossentropy": (((_array(2, 3) > 0).astype("float32"), _array(2, 3) * 0.4 + 0.5), {}),
    "categorical_crossentropy": ((numpy.eye(3, dtype="float32")[:2], _array(2, 3) * 0.4 + 0.5), {}),
    "dot_product_attention": ((_array(1, 3, 2, 4), _array(1, 3, 2, 4), _array(1, 3, 2, 4)), {}),
    "rms_normalization": ((_array(2, 3),), {}),
    "layer_normalization": ((_array(2, 3),), {}),
    "normalize": ((_array(2, 3),), {}),
    "softmax": ((_array(2, 3),), {}),
    "log_softmax": ((_array(2, 3),), {}),
    "glu": ((_array(2, 4),), {}),
    "sparsemax": ((_array(2, 3),), {}),
    "image.affine_transform": ((_array(1, 4, 4, 2), numpy.array([[1, 0, 0, 0, 1, 0, 0, 0]], "float32")), {}),
    "image.crop_images": ((_array(1, 4, 4, 2), 1, 1), {"target_height": 2, "target_width": 2}),
    "image.pad_images": ((_array(1, 4, 4, 2), 1, 1), {"target_height": 6, "target_width": 6}),
    "image.resize": ((_array(1, 4, 4, 2), (3, 3)), {}),
    "image.extract_patches": ((_array(1, 4, 4, 2), 2), {}),
    "image.extract_patches_3d": ((_array(1, 4, 4, 4, 2), 2), {}),
    "image.map_coordinates": ((_array(3, 3), numpy.stack([_array(2, 2) + 1, _array(2, 2) + 1]), 1), {}),
    "image.perspective_transform": ((_array(1, 4, 4, 2), numpy.array([[0, 0], [3, 0], [0, 3], [3, 3]], "float32"),
                                     numpy.array([[0.5, 0], [3, 0.2], [0, 3], [3.1, 3]], "float32")), {}),
    "image.scale_and_translate": ((_array(1, 4, 4, 2), (1, 6, 6, 2), numpy.array([1.5, 1.5], "float32"),
                                   numpy.array([0.0, 0.0], "float32"), (1, 2), "bilinear"), {}),
    "image.gaussian_blur": ((_array(1, 4, 4, 2),), {}),
    "image.elastic_transform": ((_array(1, 4, 4, 2),), {"seed": 1}),
    "image.rgb_to_grayscale": ((_array(1, 4, 4, 3),), {}),
    "image.rgb_to_hsv": ((_array(1, 4, 4, 3) * 0.5 + 0.5,), {}),
    "image.hsv_to_rgb": ((_array(1, 4, 4, 3) * 0.5 + 0.5,), {}),
    "image.sobel_edges": ((_array(1, 4, 4, 2),), {}),
    "image.ssim": ((_array(1, 8, 8, 2), _array(1, 8, 8, 2) * 0.5), {"filter_size": 3}),
    "image.psnr": ((_array(1, 4, 4, 2), _array(1, 4, 4, 2) * 0.5, 1.0), {}),
}

SCALAR_VALUES = (True, False, 0, 1, -1, 2, 3, -7, 1.5, -0.5, float("nan"), float("inf"), HUGE, -HUGE, "a", "",
                 None, [], (1.5,), (0, 0), (1, 2), numpy.int64(1), numpy.float32(2.0), numpy.array([1, 2], "int32"),
                 1 + 2j, "float32", "valid")


def _label_of_scalar(value):
    if isinstance(value, numpy.ndarray):
        return f"array{value.tolist()}"
    if isinstance(value, numpy.generic):
        return f"{type(value).__name__}({value.item()!r})"
    return repr(value)


def array_variants(value):
    """``[(label, variant)]`` of an array argument whose base value is ``value``."""
    base = numpy.asarray(value)
    real = base.real if base.dtype.kind == "c" else base
    variants = [
        ("int32", numpy.round(real * 3).astype("int32")),
        ("bool", real > 0),
        ("float16", real.astype("float16")),
        ("float64", real.astype("float64")),
        ("complex64", (real + 0.5j * real[::-1] if real.ndim else real + 0.5j).astype("complex64")),
        ("scalar_array", numpy.asarray(real.ravel()[0] if real.size else 0, real.dtype)),
        ("python_float", 0.5),
        ("python_int", 2),
        ("empty", numpy.zeros(real.shape[:-1] + (0,) if real.ndim else (0,), real.dtype)),
        ("list", real.tolist()),
        ("none", None),
        ("string", "a"),
    ]
    if real.dtype.kind == "f":
        one_nan = real.copy()
        if one_nan.size:
            one_nan.flat[0] = numpy.nan
        inf = real.copy()
        if inf.size:
            inf.flat[-1] = numpy.inf
        variants += [("one_nan", one_nan), ("all_nan", numpy.full_like(real, numpy.nan)), ("inf", inf)]
    if real.ndim >= 1:
        variants.append(("vector", real.ravel()[:3].copy()))
        variants.append(("batched", real[None]))
    return variants


def sequence_variants(value):
    """``[(label, variant)]`` of a list-of-arrays argument (``concatenate``)."""
    first = numpy.asarray(value[0])
    return [
        ("scalars", [numpy.float32(1.0), numpy.float32(2.0)]),
        ("python_scalars", [1.0, 2.0]),
        ("bare_scalar", 1.0),
        ("empty_list", []),
        ("one", [first]),
        ("mixed_dtypes", [first, numpy.round(first * 3).astype("int32")]),
        ("mismatched", [first, first[..., :1] if first.ndim else first]),
        ("bare_array", first),
        ("empty_arrays", [numpy.zeros((0,), "float32"), numpy.zeros((0,), "float32")]),
        ("none", None),
        ("string", "a"),
    ]


def number_variants():
    """``[(label, variant)]`` of an argument whose base value is a Python number or shape."""
    return [(_label_of_scalar(value), value) for value in SCALAR_VALUES] + [
        ("array[3,4]", numpy.array([3, 4], "int32")), ("array(3)", numpy.array(3, "int32")),
        ("float_array", numpy.array([0.5, 1.5], "float32"))]


def _kind_of(value):
    if isinstance(value, numpy.ndarray):
        return "array"
    if isinstance(value, list) and value and all(isinstance(item, numpy.ndarray) for item in value):
        return "sequence"
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(item, numpy.ndarray) for item in value):
        return "pair"  # fft's (real, imag)
    if callable(value):
        return None
    return "scalar"


def signatures():
    """``{op: [(name, kind, default repr)]}`` of the fuzzed ops (``image.resize`` for the image ops)."""
    with open(NAMES) as handle:
        names = json.load(handle)["namespaces"]
    found = {}
    for namespace, prefix in (("ops", ""), ("image", "image.")):
        for name, parameters in names[namespace].items():
            if name in LEFT_OUT or parameters is None:
                continue
            found[prefix + name] = parameters
    return found


def base_call(op, parameters):
    """``(args, kwargs)`` of a call of ``op`` that works on Keras."""
    if op in EXTRA_BASE_CALLS:
        args, kwargs = EXTRA_BASE_CALLS[op]
        return list(args), dict(kwargs)
    if op in KERAS_BASE_CALLS:
        args, kwargs = KERAS_BASE_CALLS[op]
        return list(args), dict(kwargs)
    required = [p for p in parameters if p[2] is None and p[1] == "POSITIONAL_OR_KEYWORD"]
    return [_array(2, 3, 4) for _ in required], {}


def _variants(value, default):
    kind = _kind_of(value)
    if kind == "array":
        return array_variants(value)
    if kind == "sequence":
        return sequence_variants(value)
    if kind == "pair":
        real, imag = value
        return [(f"real_{label}", (variant, imag)) for label, variant in array_variants(real)
                if isinstance(variant, numpy.ndarray) and variant.shape == real.shape] + \
            [("bare_array", real), ("triple", (real, imag, imag)), ("none", None)]
    if kind == "scalar":
        return number_variants()
    return []


def cases():
    """Every fuzzed call as ``(label, op, args, kwargs, argument, value)``, each op's base call first."""
    for op, parameters in sorted(signatures().items()):
        args, kwargs = base_call(op, parameters)
        yield f"{op}()", op, list(args), dict(kwargs), None, None
        for index, (name, kind, default) in enumerate(parameters):
            if kind in ("VAR_POSITIONAL", "VAR_KEYWORD"):
                continue
            if index < len(args):
                base = args[index]
            elif name in kwargs:
                base = kwargs[name]
            elif default is not None:
                base = _default_value(default)
            else:
                continue
            for label, variant in _variants(base, default):
                call_args, call_kwargs = list(args), dict(kwargs)
                if index < len(call_args):
                    call_args[index] = variant
                else:
                    call_kwargs[name] = variant
                yield f"{op}({name}={label})", op, call_args, call_kwargs, name, variant


def _default_value(text):
    """A default's value from its repr in the names fixture (None where it is no literal)."""
    try:
        import ast

        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None


def resolve(namespace, op):
    """The function ``op`` (``image.resize`` included) of an ops namespace."""
    if op.startswith("image."):
        return getattr(namespace.image, op[len("image."):])
    return getattr(namespace, op)
