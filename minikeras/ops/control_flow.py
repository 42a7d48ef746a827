"""Control flow of ``keras.ops``, run eagerly: cond, switch, while_loop,
fori_loop, scan, associative_scan, map, vectorized_map.

minikeras records the graph as it runs, so a branch or a loop is ordinary
Python: only the branch taken and the iterations run are recorded, and
gradients flow through them as through any other ops. A predicate or an
index that is a Tensor is read on the host (one device sync), as the
runtime needs it to choose.
"""

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "associative_scan", "map", "vectorized_map"]

import numpy

from minikeras.autograd import Tensor
from minikeras.device import to_host
from minikeras.ops.array.indexing import getitem
from minikeras.ops.array.joining import concatenate, stack
from minikeras.ops.array.reshaping import moveaxis
from minikeras._support import nest
from minikeras._support.argument_validation import is_int, validate_axis, validate_flag, validate_int


def _host_value(value):
    if isinstance(value, Tensor):
        value = to_host(value.data)
    return numpy.asarray(value)


def _describe(value):
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def _function(op_name, name, value):
    if not callable(value):
        raise TypeError(f"{op_name}: {name} must be a function, received {_describe(value)}.")
    return value


def _host_int(op_name, name, value):
    """An int, or a one-element integer tensor/array, as a Python int (read on the host)."""
    if is_int(value):
        return int(value)
    host = _host_value(value) if isinstance(value, Tensor) or hasattr(value, "dtype") else None
    if host is None or host.size != 1 or host.dtype.kind not in "iu":
        raise TypeError(f"{op_name}: {name} must be an int or a one-element integer tensor, received "
                        f"{_describe(value)}.")
    return int(host.reshape(()))


def _sequences(op_name, name, xs):
    """The leaves of ``xs``, each with a leading axis of the same length; returns (leaves, length)."""
    leaves = nest.flatten(xs)
    if not leaves or not all(hasattr(leaf, "shape") and len(leaf.shape) >= 1 for leaf in leaves):
        raise TypeError(f"{op_name}: {name} must be a tensor (or a nest of tensors) with a leading axis, "
                        f"received {_describe(xs)}.")
    lengths = {int(leaf.shape[0]) for leaf in leaves}
    if len(lengths) != 1:
        raise ValueError(f"{op_name}: the tensors of {name} must share their leading axis, received lengths "
                         f"{sorted(lengths)}.")
    return leaves, lengths.pop()


def cond(pred, true_fn, false_fn):
    """``true_fn()`` if ``pred`` holds, else ``false_fn()``.

    Raises:
        ValueError: ``pred`` has more than one element.
    """
    _function("cond", "true_fn", true_fn)
    _function("cond", "false_fn", false_fn)
    value = _host_value(pred)
    if value.dtype.kind not in "biuf":
        raise TypeError(f"cond: pred must be a boolean (or a number), received {_describe(pred)}.")
    if value.size != 1:
        raise ValueError(f"cond: pred must be a single boolean, received shape {value.shape}.")
    return true_fn() if bool(value.reshape(())) else false_fn()


def switch(index, branches, *operands):
    """``branches[index](*operands)``; ``index`` is clamped to the valid range, as Keras's."""
    if not isinstance(branches, (list, tuple)):
        raise TypeError(f"switch: branches must be a list of functions, received {_describe(branches)}.")
    if not branches:
        raise ValueError("switch expects at least one branch.")
    for position, branch in enumerate(branches):
        _function("switch", f"branches[{position}]", branch)
    value = _host_int("switch", "index", index)
    return branches[max(0, min(value, len(branches) - 1))](*operands)


def while_loop(cond, body, loop_vars, maximum_iterations=None):  # noqa: A002  (keras.ops name)
    """Run ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` (at most ``maximum_iterations``).

    ``loop_vars`` is a tuple/list (unpacked into the calls) or a single value.
    """
    _function("while_loop", "cond", cond)
    _function("while_loop", "body", body)
    if maximum_iterations is not None:
        maximum_iterations = validate_int("while_loop", "maximum_iterations", maximum_iterations, minimum=0)
    is_sequence = isinstance(loop_vars, (tuple, list))
    state = tuple(loop_vars) if is_sequence else (loop_vars,)
    iterations = 0
    while maximum_iterations is None or iterations < maximum_iterations:
        if not bool(_host_value(cond(*state)).reshape(())):
            break
        result = body(*state)
        state = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        if len(state) != (len(loop_vars) if is_sequence else 1):
            raise ValueError(f"while_loop: body returned {len(state)} values for "
                             f"{len(loop_vars) if is_sequence else 1} loop variables.")
        iterations += 1
    return (type(loop_vars)(state) if is_sequence else state[0])


def fori_loop(lower, upper, body_fun, init_val):
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``; returns ``val``."""
    lower, upper = _host_int("fori_loop", "lower", lower), _host_int("fori_loop", "upper", upper)
    _function("fori_loop", "body_fun", body_fun)
    value = init_val
    for i in range(lower, upper):
        value = body_fun(i, value)
    return value


def _slices(xs, length, reverse):
    flat = nest.flatten(xs)
    order = range(length - 1, -1, -1) if reverse else range(length)
    for i in order:
        yield i, nest.pack_sequence_as(xs, [getitem(x, i) for x in flat])


def _stack_outputs(outputs, reverse):
    if reverse:
        outputs = outputs[::-1]
    if not outputs or outputs[0] is None:
        return None
    structure = outputs[0]
    flats = [nest.flatten(output) for output in outputs]
    return nest.pack_sequence_as(structure, [stack([flat[k] for flat in flats]) for k in range(len(flats[0]))])


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns ``(carry, stacked ys)``.

    ``xs=None`` runs ``length`` steps with ``x=None``. ``unroll`` is accepted
    for Keras's signature (every step runs eagerly anyway).
    """
    _function("scan", "f", f)
    reverse = validate_flag("scan", "reverse", reverse)
    if not isinstance(unroll, bool):
        validate_int("scan", "unroll", unroll, minimum=1)
    if length is not None:
        length = validate_int("scan", "length", length, minimum=0)
    if xs is None:
        if length is None:
            raise ValueError("scan: give xs or length.")
        steps = [(i, None) for i in (range(length - 1, -1, -1) if reverse else range(length))]
    else:
        _, count = _sequences("scan", "xs", xs)
        if length is not None and length != count:
            raise ValueError(f"scan: length={length} but xs has {count} steps.")
        steps = list(_slices(xs, count, reverse))
    carry = init
    outputs = []
    for _, x in steps:
        carry, y = f(carry, x)
        outputs.append(y)
    return carry, _stack_outputs(outputs, reverse)


def associative_scan(f, elems, reverse=False, axis=0):
    """Inclusive prefix combination ``f`` along ``axis`` (``f`` associative and elementwise).

    Runs in ``log2(n)`` vectorised steps (Hillis-Steele): each step combines
    every element with the one ``2**k`` before it.
    """
    _function("associative_scan", "f", f)
    reverse = validate_flag("associative_scan", "reverse", reverse)
    leaves = nest.flatten(elems)
    if not leaves or not all(hasattr(leaf, "shape") and len(leaf.shape) >= 1 for leaf in leaves):
        raise TypeError(f"associative_scan: elems must be a tensor (or a nest of tensors) with at least one axis, "
                        f"received {_describe(elems)}.")
    axis = validate_axis("associative_scan", axis, min(len(leaf.shape) for leaf in leaves))
    flat = [moveaxis(x, axis, 0) if axis else x for x in leaves]
    if len({x.shape[0] for x in flat}) != 1:
        raise ValueError(f"associative_scan: the tensors of elems must share axis {axis}, received shapes "
                         f"{[tuple(leaf.shape) for leaf in leaves]}.")
    if reverse:
        flat = [getitem(x, slice(None, None, -1)) for x in flat]
    n = flat[0].shape[0]
    offset = 1
    while offset < n:
        earlier = nest.pack_sequence_as(elems, [getitem(x, slice(None, n - offset)) for x in flat])
        later = nest.pack_sequence_as(elems, [getitem(x, slice(offset, None)) for x in flat])
        combined = nest.flatten(f(earlier, later))
        flat = [concatenate([getitem(x, slice(None, offset)), c], 0) for x, c in zip(flat, combined)]
        offset *= 2
    if reverse:
        flat = [getitem(x, slice(None, None, -1)) for x in flat]
    flat = [moveaxis(x, 0, axis) if axis else x for x in flat]
    return nest.pack_sequence_as(elems, flat)


def map(f, xs):  # noqa: A001  (keras.ops name)
    """``f`` applied to each slice of ``xs`` along the leading axis, results stacked."""
    _function("map", "f", f)
    _, count = _sequences("map", "xs", xs)
    return _stack_outputs([f(x) for _, x in _slices(xs, count, False)], False)


def vectorized_map(function, elements):
    """``function`` applied to each slice of ``elements`` along axis 0, results stacked (run eagerly)."""
    _function("vectorized_map", "function", function)
    _sequences("vectorized_map", "elements", elements)
    return map(function, elements)
