"""Every public op names itself in the argument errors raised under it.

Many Keras-named ops are written over others: ``amax`` calls ``max``,
``vsplit`` calls ``array_split`` which calls ``split``, ``average_pool``
calls ``avg_pool1d``. Their argument checks name the op that made them
(``max: axis 1.5 ...``), which a user who called ``ops.amax`` never saw.
Rather than thread every caller's name through every callee, each public op
of ``minikeras.ops`` is wrapped once (:func:`wrap_public_ops`): a ValueError,
TypeError or IndexError raised by one of the library's own checks under it
is re-raised with the op's name in front (``amax: max: axis must be an int
..., received float 1.5``), the outermost op winning. Raw NumPy errors pass
unchanged, so the fuzz test still finds them as leaks to fix; a call that
succeeds pays one extra Python frame and nothing else.

An allocation the host cannot make anywhere under an op (a host-side index
array of ``10**12`` entries, beyond the ``Function`` whose errors
``device/op_errors.py`` already translates) becomes the same
:class:`~minikeras.errors.ResourceExhaustedError` naming the op.
"""
import functools
import itertools
import sys
import types

from minikeras.device import op_errors, placement_device
from minikeras._support.argument_validation import raised_by_library_check

_RELABELED = (ValueError, TypeError, IndexError)

# Ops of real numbers only: Keras 3 refuses complex operands to them (orderings,
# roundings, integer and window ops, the statistics built on sorting, the nn and
# image ops), and NumPy has no complex kernel for many (``ceil``, ``hypot``,
# ``cbrt``). Their complex arguments are refused on entry, with the library's
# TypeError, instead of failing deep inside or ordering complex numbers.
REAL_ONLY = frozenset("""
    adaptive_average_pool adaptive_max_pool amax amin arctan2 argmax argmin argpartition argsort average_pool
    binary_crossentropy bitwise_and bitwise_invert bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift
    bitwise_xor categorical_crossentropy cbrt cdist ceil celu cholesky clip conv conv_transpose cross depthwise_conv
    digitize dot_product_attention elu erf erfc erfinv fabs floor floor_divide fmax fmin fmod gcd gelu greater
    greater_equal in_top_k hard_sigmoid hard_silu hard_swish hard_tanh heaviside histogram hypot isfinite isin isinf isnan
    lcm ldexp leaky_relu left_shift less less_equal log_sigmoid log_softmax logaddexp logaddexp2 logsumexp lstsq
    matrix_rank max max_pool maximum median min minimum mod nan_to_num nanargmax nanargmin nancumprod nancumsum
    nanmax nanmedian nanmin nanpercentile nanquantile nanstd nanvar nextafter normalize percentile pinv polar ptp
    quantile relu relu6 right_shift round saturate_cast searchsorted segment_max segment_min selu separable_conv
    signbit softmax softplus softsign solve solve_triangular sort sparse_sigmoid sparsemax stft top_k trunc unique
    unravel_index affine_transform elastic_transform extract_patches extract_patches_3d gaussian_blur hsv_to_rgb
    resize rgb_to_hsv sobel_edges corrcoef map_coordinates rgb_to_grayscale slogdet
""".split())


def _refuse_complex(name, args, kwargs):
    for value in itertools.chain(args, kwargs.values()):
        dtype = getattr(value, "dtype", None)
        if isinstance(value, complex) or (dtype is not None and getattr(dtype, "kind", None) == "c"):
            raise TypeError(f"{name} does not support complex inputs, received "
                            f"{'a complex number' if dtype is None else f'dtype {dtype}'}.")


#: Set by the functional API (layers/input.py): ``handler(name, args, kwargs)``
#: records an op called on KerasTensors as a graph node (Keras 3's symbolic
#: ops), or returns None when no argument is one. Called only once the op has
#: refused its arguments, so a call on values pays nothing for it.
symbolic_handler = None


def names_its_errors(name, function):
    """``function`` with its library argument errors prefixed by ``name`` (see the module docstring)."""

    real_only = name in REAL_ONLY

    @functools.wraps(function)
    def op(*args, **kwargs):
        if real_only:
            _refuse_complex(name, args, kwargs)
        try:
            return function(*args, **kwargs)
        except MemoryError as error:
            translated = op_errors.translate(error, placement_device(), name)
            if translated is None:
                raise
            raise translated from error
        except _RELABELED as error:
            if symbolic_handler is not None:  # a KerasTensor argument: a functional model's graph node
                node = symbolic_handler(name, args, kwargs)
                if node is not None:
                    return node
            if type(error) not in _RELABELED:
                raise
            message = getattr(error, "_minikeras_op_message", None)  # an inner op relabeled it: start over
            if message is None and isinstance(error, ValueError):
                translated = op_errors.translate(error, placement_device(), name)  # NumPy's "array is too big"
                if translated is not None:
                    raise translated from error
            if message is None:
                message = str(error)
                if message.startswith(name) or not raised_by_library_check(error):
                    raise
            if message.startswith(name):
                raise type(error)(message).with_traceback(error.__traceback__) from None
            relabeled = type(error)(f"{name}: {message}")
            relabeled._minikeras_op_message = message
            raise relabeled.with_traceback(error.__traceback__) from None

    op._minikeras_names_errors = True
    return op


def wrap_public_ops(package, also=()):
    """Wrap every public function of ``package`` (``minikeras.ops``) in place
    and rebind the wrappers wherever else the functions are reachable by
    name: the modules in ``also`` and every loaded submodule of ``package``
    (the families re-exporting them, and each function's defining module, so
    ``ops.abs is ops.math.unary.abs`` still holds and pickling by qualified
    name finds the wrapper).

    An alias stays the same object as its op (``ops.swish is ops.silu``, as
    in Keras) and its errors name the op (its ``__name__``)."""
    namespace = vars(package)
    wrappers = {}
    for name, value in list(namespace.items()):
        if name.startswith("_") or not isinstance(value, types.FunctionType) or \
                getattr(value, "_minikeras_names_errors", False):
            continue
        if id(value) not in wrappers:
            label = value.__name__ if namespace.get(value.__name__) is value else name
            wrappers[id(value)] = names_its_errors(label, value)
        setattr(package, name, wrappers[id(value)])
    prefix = package.__name__ + "."
    modules = list(also) + [module for name, module in list(sys.modules.items()) if name.startswith(prefix)]
    for module in {id(module): module for module in modules if module is not None}.values():
        for name, value in list(vars(module).items()):
            if isinstance(value, types.FunctionType) and id(value) in wrappers:
                setattr(module, name, wrappers[id(value)])
