"""The shape ops under their historical module name.

They live in the ``minikeras.ops.array`` family now (one module per family:
reshaping, indexing, joining, repeating, padding, dtype); this module keeps
``from minikeras.ops.shape import reshape`` working. Note that the package
attribute ``minikeras.ops.shape`` is Keras's ``ops.shape(x)`` function (see
``ops/keras_names.py``); this module is reached by ``from ... import``.
"""
from minikeras.ops.array import *  # noqa: F401,F403
from minikeras.ops.array import __all__  # noqa: F401
# Private helpers other op modules import from here (ops/nn/embedding.py).
from minikeras.ops.array._common import (  # noqa: F401
    _int_sequence, _scatter_add_axis, _scatter_add_rows, _single_axis, _size,
)
