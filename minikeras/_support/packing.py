"""Keras's batch packing: ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)``."""


def unpack_x_y_sample_weight(data):
    """``(x, y, sample_weight)`` from a batch, missing entries as None.

    A tuple of length 1 to 3 is unpacked; anything else (an array, a list,
    a dict) is ``x`` alone, as Keras does.

    Raises:
        ValueError: a tuple of more than three elements.
    """
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data[0], data[1], data[2]
    raise ValueError(f"A batch must be x, (x,), (x, y) or (x, y, sample_weight); received a tuple of {len(data)} "
                     "elements.")


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """The inverse of ``unpack_x_y_sample_weight``: the shortest tuple."""
    if y is None:
        # One array needs no tuple; a list or tuple of inputs gets one, so
        # that it is not read as (x, y).
        return x if not isinstance(x, (tuple, list)) else (x,)
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)
