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
import sys
import types

from minikeras.device import op_errors, placement_device
from minikeras.utils.argument_validation import raised_by_library_check

_RELABELED = (ValueError, TypeError, IndexError)


def names_its_errors(name, function):
    """``function`` with its library argument errors prefixed by ``name`` (see the module docstring)."""

    @functools.wraps(function)
    def op(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except MemoryError as error:
            translated = op_errors.translate(error, placement_device(), name)
            if translated is None:
                raise
            raise translated from error
        except _RELABELED as error:
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
