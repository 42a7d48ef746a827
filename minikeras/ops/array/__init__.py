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
from minikeras.ops.array import dtype, indexing, joining, padding, repeating, reshaping
from minikeras.ops.array.dtype import *  # noqa: F401,F403
from minikeras.ops.array.indexing import *  # noqa: F401,F403
from minikeras.ops.array.joining import *  # noqa: F401,F403
from minikeras.ops.array.padding import *  # noqa: F401,F403
from minikeras.ops.array.repeating import *  # noqa: F401,F403
from minikeras.ops.array.reshaping import *  # noqa: F401,F403

__all__ = dtype.__all__ + indexing.__all__ + joining.__all__ + padding.__all__ + repeating.__all__ + reshaping.__all__
del dtype, indexing, joining, padding, repeating, reshaping
