"""``rearrange``: einops-style reshapes and transposes written as a pattern,
and ``cdist``, pairwise Euclidean distances.

``rearrange(x, "b (h w) c -> b h w c", h=4)`` splits, permutes and merges
axes in one reshape-transpose-reshape, so its gradient is those ops'.
Axis names are words; parentheses group axes that share one input or
output axis; an unknown size inside a group is inferred when it is the only
one. Every name on the left must appear on the right (no reduction).
"""

__all__ = ["rearrange", "cdist"]

import re

from minikeras._support.argument_validation import validate_int

from minikeras.ops.array.reshaping import reshape, transpose
from minikeras.ops.math._elementwise import operand
from minikeras.ops.math._operands import _as_tensor

_TOKEN = re.compile(r"\(|\)|[A-Za-z_][A-Za-z0-9_]*|\S")


def _parse(side, pattern):
    groups, current = [], None
    for token in _TOKEN.findall(side):
        if token == "(":
            if current is not None:
                raise ValueError(f"rearrange: nested parentheses in {pattern!r}.")
            current = []
        elif token == ")":
            if current is None:
                raise ValueError(f"rearrange: unbalanced parentheses in {pattern!r}.")
            groups.append(current)
            current = None
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", token):
            if current is not None:
                current.append(token)
            else:
                groups.append([token])
        else:
            raise ValueError(f"rearrange: unexpected {token!r} in pattern {pattern!r}.")
    if current is not None:
        raise ValueError(f"rearrange: unbalanced parentheses in {pattern!r}.")
    return groups


def rearrange(tensor, pattern, **axes_lengths):
    """Reorder, split and merge axes by an einops pattern, e.g. ``"b h w c -> b (h w) c"``.

    Raises:
        ValueError: a malformed pattern, names that differ between the sides,
            or sizes that do not fit.
    """
    x = _as_tensor("rearrange", operand("rearrange", tensor))
    if not isinstance(pattern, str):
        raise TypeError(f"rearrange: pattern must be a string such as 'b h w c -> b (h w) c', received "
                        f"{type(pattern).__name__} {pattern!r:.60}.")
    for name, size in axes_lengths.items():
        validate_int("rearrange", name, size, minimum=1)
    if "->" not in pattern:
        raise ValueError(f"rearrange: the pattern needs '->', received {pattern!r}.")
    left_text, right_text = pattern.split("->")
    left, right = _parse(left_text, pattern), _parse(right_text, pattern)
    left_names = [name for group in left for name in group]
    right_names = [name for group in right for name in group]
    if sorted(left_names) != sorted(right_names) or len(set(left_names)) != len(left_names):
        raise ValueError(f"rearrange: both sides must name the same distinct axes, received {pattern!r}.")
    if len(left) != x.ndim:
        raise ValueError(f"rearrange: the left side has {len(left)} axes, the input {x.ndim} (shape {x.shape}).")
    sizes = {name: int(size) for name, size in axes_lengths.items()}
    for group, total in zip(left, x.shape):
        unknown = [name for name in group if name not in sizes]
        known = 1
        for name in group:
            if name in sizes:
                known *= sizes[name]
        if len(unknown) > 1:
            raise ValueError(f"rearrange: cannot infer the sizes of {unknown} in {pattern!r}; give them as keywords.")
        if unknown:
            if known == 0 or total % known:
                raise ValueError(f"rearrange: axis of size {total} does not split by {known} in {pattern!r}.")
            sizes[unknown[0]] = total // known
        elif known != total:
            raise ValueError(f"rearrange: group {group} has size {known} but the axis has {total}.")
    elementary = reshape(x, tuple(sizes[name] for name in left_names))
    permuted = transpose(elementary, tuple(left_names.index(name) for name in right_names))
    out_shape = []
    for group in right:
        size = 1
        for name in group:
            size *= sizes[name]
        out_shape.append(size)
    return reshape(permuted, tuple(out_shape))


def cdist(x, y):
    """Euclidean distances between the rows of ``x`` ``(..., m, d)`` and of ``y`` ``(..., n, d)``: ``(..., m, n)``."""
    from minikeras.ops.array.reshaping import expand_dims
    from minikeras.ops.reduce import sum as _sum

    x, y = _as_tensor("cdist", operand("cdist", x)), _as_tensor("cdist", operand("cdist", y))
    if x.ndim < 2 or y.ndim < 2 or x.shape[-1] != y.shape[-1]:
        raise ValueError(f"cdist expects (..., m, d) and (..., n, d) with the same d, received {x.shape} and "
                         f"{y.shape}.")
    difference = expand_dims(x, -2) - expand_dims(y, -3)
    return _sum(difference * difference, -1) ** 0.5
