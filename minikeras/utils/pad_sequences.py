"""pad_sequences: lists of variable length to one rectangular array."""
import numbers

import numpy


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0):
    """Pads (or cuts) sequences to one length, like ``keras.utils.pad_sequences``.

    Args:
        sequences: a list (or other iterable) of sequences; each is a list or
            array whose items are numbers or equally shaped arrays.
        maxlen: the length of the result; default: the longest sequence.
        dtype: the result's dtype.
        padding: ``"pre"`` (default, pad at the front) or ``"post"``.
        truncating: ``"pre"`` (default, drop the front of a long sequence) or
            ``"post"`` (drop its end).
        value: what padded positions hold.

    Returns:
        A NumPy array of shape ``(len(sequences), maxlen) + item_shape``.

    Raises:
        ValueError: bad ``padding``/``truncating``/``maxlen``, a sequence
            that is not iterable, or items of different shapes.

    Example:
        >>> pad_sequences([[1, 2, 3], [4]], maxlen=2)
        array([[2, 3],
               [0, 4]], dtype=int32)
    """
    for name, choice in (("padding", padding), ("truncating", truncating)):
        if choice not in ("pre", "post"):
            raise ValueError(f"pad_sequences: {name} must be 'pre' or 'post', received {choice!r}.")
    if maxlen is not None and (isinstance(maxlen, bool) or not isinstance(maxlen, numbers.Integral) or maxlen < 0):
        raise ValueError(f"pad_sequences: maxlen must be a non-negative int or None, received {maxlen!r}.")
    if not hasattr(sequences, "__iter__"):
        raise ValueError(f"pad_sequences expects a list of sequences, received {type(sequences).__name__}.")
    rows = []
    for position, sequence in enumerate(sequences):
        if not hasattr(sequence, "__len__"):
            raise ValueError(f"pad_sequences: sequence {position} is a {type(sequence).__name__}, "
                             "expected a list or an array.")
        rows.append(sequence)
    item_shape = ()
    for row in rows:
        if len(row):
            item_shape = numpy.asarray(row).shape[1:]
            break
    if maxlen is None:
        maxlen = max((len(row) for row in rows), default=0)
    is_text = numpy.dtype(dtype).kind in "USO"
    if isinstance(value, str) and not is_text:
        raise ValueError(f"pad_sequences: value {value!r} is a string but dtype {dtype} is not a text dtype.")
    result = numpy.full((len(rows), maxlen) + item_shape, value, dtype=dtype)
    for position, row in enumerate(rows):
        if not len(row) or not maxlen:
            continue
        kept = numpy.asarray(row[-maxlen:] if truncating == "pre" else row[:maxlen], dtype=dtype)
        if kept.shape[1:] != item_shape:
            raise ValueError(f"pad_sequences: sequence {position} has items of shape {kept.shape[1:]}, "
                             f"expected {item_shape} like the others.")
        if padding == "post":
            result[position, :len(kept)] = kept
        else:
            result[position, maxlen - len(kept):] = kept
    return result
