"""Keras's ``encode_categorical_inputs`` on host arrays: integer ids to
one-hot, multi-hot or count vectors, shared by CategoryEncoding,
Discretization, Hashing and the lookup layers.

Shapes by rank, as Keras gives them (a rank-0 id is one example, upranked
first; a rank-1 input is one example's ids for "multi_hot"/"count"):

==========  =============  ===================
input       "one_hot"      "multi_hot"/"count"
==========  =============  ===================
``()``      ``(1, d)``     ``(d,)``
``(n,)``    ``(n, d)``     ``(d,)``
``(b, 1)``  ``(b, d)``     ``(b, d)``
``(b, n)``  ``(b, n, d)``  ``(b, d)``
==========  =============  ===================
"""
import numpy
from minikeras._support import load_budget

__all__ = ["encode_categorical"]


def encode_categorical(indices, output_mode, depth, count_weights=None, dtype="float32"):
    """Keras's ``encode_categorical_inputs`` on host arrays.

    Args:
        indices: integer ids (any shape; a scalar counts as one sample).
        output_mode: "int", "one_hot", "multi_hot" or "count".
        depth: the number of classes.
        count_weights: per-id weights for "count" (the ids' shape).
        dtype: the output dtype (except "int", which keeps ``indices``).
    """
    indices = numpy.asarray(indices)
    if output_mode == "int":
        return indices
    if indices.ndim == 0:
        indices = indices.reshape(1)
    if output_mode == "one_hot":
        if indices.ndim > 1 and indices.shape[-1] == 1:
            indices = indices[..., 0]
        # While a file loads, the depth its config declares (num_tokens, num_bins, a crossing_dim) is charged
        # first; no depth x depth identity is made (numpy.eye would be 40 GB at 10^5 bins).
        load_budget.charge(tuple(indices.shape) + (depth,), dtype, f"a one_hot encoding {depth} wide", cumulative=False)
        valid = (indices >= 0) & (indices < depth)
        encoded = numpy.zeros(tuple(indices.shape) + (depth,), dtype=dtype)
        numpy.put_along_axis(encoded, numpy.where(valid, indices, 0)[..., None].astype(numpy.int64),
                             valid[..., None].astype(dtype), axis=-1)
        return encoded
    rows = indices.reshape(int(numpy.prod(indices.shape[:-1])), indices.shape[-1])  # (an example may hold no id)
    load_budget.charge_bytes(rows.shape[0] * depth * (8 + numpy.dtype(dtype).itemsize),
                             f"a {output_mode} encoding of shape {(rows.shape[0], depth)} (float64 counts, then {dtype})",
                             cumulative=False)
    weights = numpy.ones(rows.shape) if count_weights is None else numpy.asarray(count_weights, numpy.float64).reshape(
        rows.shape)
    valid = (rows >= 0) & (rows < depth)
    counts = numpy.zeros((rows.shape[0], depth))
    row_ids = numpy.broadcast_to(numpy.arange(rows.shape[0])[:, None], rows.shape)
    numpy.add.at(counts, (row_ids[valid], rows[valid].astype(numpy.int64)), weights[valid])
    if output_mode == "multi_hot":
        counts = numpy.minimum(counts, 1.0)
    return counts.reshape(indices.shape[:-1] + (depth,)).astype(dtype)
