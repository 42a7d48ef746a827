"""Autocasting: a layer under a mixed policy computes with float16/bfloat16
copies of its float32 variables.

Keras keeps variables in the policy's variable dtype (float32) and, while a
layer of a "mixed" policy runs, reads them cast to its compute dtype. Here
the layer opens :func:`autocast_scope`; inside it every op
(``Function.apply``) that receives a variable made with ``autocast=True``
gets that variable through a differentiable cast instead, so the matmul runs
in float16 and the gradient arrives at the variable in float32. Each
variable is cast once per scope (an LSTM's kernels are read once per call,
not once per step), and the casts are forgotten when the scope closes, since
the variables change between steps.

Only variables are cast (a Tensor with an ``autocast`` attribute that is
True); other tensors keep their dtype: the layer casts its inputs itself.
"""
import contextlib
import threading

from minikeras.backend import dtypes

_state = threading.local()
#: This thread's scope: ``getattr(state, "dtype", None)`` is ``current_dtype()``
#: without a Python call (read once per op and per layer call).
state = _state


def current_dtype():
    """The compute dtype of the innermost open scope (a NumPy dtype), or None."""
    return getattr(_state, "dtype", None)


@contextlib.contextmanager
def autocast_scope(dtype):
    """Cast autocasting variables to ``dtype`` in the ops run inside.

    Args:
        dtype: the compute dtype (a name or dtype); None turns autocasting
            off inside (a layer that computes in its variable dtype).
    """
    target = None if dtype is None else dtypes.as_numpy_dtype(dtype)
    previous = (getattr(_state, "dtype", None), getattr(_state, "cache", None))
    _state.dtype, _state.cache = target, {}
    try:
        yield
    finally:
        _state.dtype, _state.cache = previous


def maybe_cast(value, target):
    """``value`` as the op should see it inside a scope casting to ``target``:
    a cast copy (made once per scope) for an autocasting float variable of
    another dtype, else ``value`` itself."""
    if not getattr(value, "autocast", False) or value.dtype == target or not dtypes.is_float_dtype(value.dtype):
        return value
    cache = _state.cache
    entry = cache.get(id(value))
    if entry is None or entry[0] is not value:
        entry = (value, _cast_function()(target).apply(value))
        cache[id(value)] = entry
    return entry[1]


_cast_class = []


def _cast_function():
    """The cast op (a Function; function.py imports this module, so the
    class is made on first use)."""
    if not _cast_class:
        from minikeras.autograd.function import Function

        class AutocastCast(Function):
            """The variable's value in the compute dtype; its gradient goes
            back to the variable in the variable's dtype."""

            autocasts = False  # the cast itself reads the variable as it is
            keeps_dtype = False

            def __init__(self, dtype):
                self.dtype = dtype

            def forward(self, x):
                self.input_dtype = x.dtype
                return x.astype(self.dtype)

            def backward(self, grad):
                return grad.astype(self.input_dtype)

        _cast_class.append(AutocastCast)
    return _cast_class[0]
