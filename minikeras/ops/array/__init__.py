"""Array ops: the ops that move, select, join, repeat, pad or cast elements.

One family per module:

- ``reshaping``: reshape, transpose, expand_dims, squeeze, flatten (ravel),
  moveaxis, swapaxes;
- ``indexing``: getitem (``x[index]``), take;
- ``joining``: concatenate, stack, split;
- ``repeating``: tile, repeat;
- ``padding``: pad;
- ``dtype``: cast.

Ops that only move or select elements have simple gradients: the gradient
is moved or selected back. Indexing that may pick an element more than once
(integer arrays, ``repeat``, ``pad`` with reflect modes) scatter-adds its
gradient so that repeated picks accumulate (``_common._scatter_add_rows``).
"""
from minikeras.ops.array.dtype import cast
from minikeras.ops.array.indexing import getitem, take
from minikeras.ops.array.joining import concatenate, split, stack
from minikeras.ops.array.padding import pad
from minikeras.ops.array.repeating import repeat, tile
from minikeras.ops.array.reshaping import expand_dims, flatten, moveaxis, ravel, reshape, squeeze, swapaxes, transpose

# The shape ops of the package's first six modules; the later array families
# (arranging, rearranging, scatter, sorting) are imported from their modules.
__all__ = ["cast", "concatenate", "expand_dims", "flatten", "getitem", "moveaxis", "pad", "ravel", "repeat", "reshape",
           "split", "squeeze", "stack", "swapaxes", "take", "tile", "transpose"]
