"""Argument checks shared by the ops, raising the library's own errors."""
from minikeras._support.argument_validation import is_int


def shape_of(value):
    shape = getattr(value, "shape", None)
    if shape is not None:
        return tuple(shape)
    return ()


def check_broadcast(op_name, a, b):
    """Raise ValueError naming ``op_name`` when ``a`` and ``b`` do not broadcast."""
    shape_a, shape_b = shape_of(a), shape_of(b)
    if shape_a == shape_b or not shape_a or not shape_b:
        return
    for size_a, size_b in zip(reversed(shape_a), reversed(shape_b)):
        if size_a != size_b and size_a != 1 and size_b != 1:
            raise ValueError(
                f"{op_name}: shapes {shape_a} and {shape_b} cannot be broadcast together "
                f"(axis sizes {size_a} and {size_b} differ and neither is 1)."
            )


def normalize_axis(op_name, axis, ndim):
    """Return ``axis`` as a sorted tuple of non-negative ints (None -> all)."""
    if axis is None:
        return tuple(range(ndim))
    if is_int(axis):
        axes = (axis,)
    elif isinstance(axis, (tuple, list)):
        axes = tuple(axis)
    else:  # a bool is no axis (True is not "axis 1"), nor a float or a string
        raise TypeError(f"{op_name}: axis must be an int or a tuple of ints, received "
                        f"{type(axis).__name__} {axis!r}.")
    result = []
    for a in axes:
        if not is_int(a):
            raise TypeError(f"{op_name}: axis must be an int or a tuple of ints, received {axis!r}.")
        if not -ndim <= a < ndim:
            raise ValueError(f"{op_name}: axis {a} is out of range for a tensor with {ndim} dimensions.")
        result.append(int(a) % ndim)
    if len(set(result)) != len(result):
        raise ValueError(f"{op_name}: repeated axis in {axis!r}.")
    return tuple(sorted(result))
