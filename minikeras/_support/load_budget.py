"""The memory a model rebuilt from a file may allocate, bounded by the file.

While a model is rebuilt from a file (``saving/``'s readers open
:func:`loading_budget`), the weights and probe tensors its layers create
(``Layer.add_weight``, ``Input`` probes, a lookup's vocabulary) are counted
against what the file's own weights justify, so a config declaring huge
layers is refused before it allocates. Layers charge the budget and
``saving/`` opens it: it lives below both.
"""
import contextlib
import threading

import numpy

# Declared sizes above this are refused unless load_model gets a larger
# ``max_bytes``: far beyond any model this library trains on one host, far
# below what would take a machine down.
DEFAULT_MAX_BYTES = 4 * 2**30

# A rebuild may create probe tensors (one small batch per input) and weights
# this much larger than the file's own weights before we call it absurd.
_PROBE_FLOOR_BYTES = 64 * 2**20

#: What one vocabulary entry costs a lookup layer beside its characters (its
#: string object, list slot and index entry: ~110 bytes measured at the peak
#: of ``set_vocabulary`` for short tokens), counted against the budget while
#: a file loads.
TOKEN_BYTES = 128

_local = threading.local()


class FileLoadError(ValueError):
    """A file could not be loaded: corrupt, truncated, tampered with,
    inconsistent with itself, or declaring absurd sizes. The message names
    the file and what is wrong."""


class _Budget:
    def __init__(self, limit, source):
        self.limit, self.used, self.source = limit, 0, source


@contextlib.contextmanager
def loading_budget(weight_bytes, source, max_bytes=DEFAULT_MAX_BYTES):
    """Bound what rebuilding a model from ``source`` may allocate.

    Inside the scope, layers create their weights without running the
    initializers (zeros: the file's values replace them), and every weight
    and probe tensor counts against a budget of the file's own weight bytes
    (plus a floor for probe batches), so a config declaring huge layers is
    refused before it allocates.

    Args:
        weight_bytes: the total declared size of the file's weight datasets.
        source: the file, for messages.
        max_bytes: a hard ceiling on the budget; None for no budget.
    """
    limit = max(2 * int(weight_bytes), _PROBE_FLOOR_BYTES)
    if max_bytes is None:  # a trusted file: skip the initializers, count nothing
        limit = float("inf")
    else:
        limit = min(limit, max_bytes)
    previous = getattr(_local, "budget", None)
    _local.budget = _Budget(limit, source)
    try:
        yield
    finally:
        _local.budget = previous


def loading():
    """Whether a model is being rebuilt from a file (weights come next)."""
    return getattr(_local, "budget", None) is not None


def charge(shape, dtype, what, cumulative=True):
    """Count an allocation of ``shape``/``dtype`` against the rebuild budget
    (no-op outside :func:`loading_budget`). ``cumulative=False`` checks a
    temporary allocation (a probe batch) alone, without keeping it counted.

    Raises:
        FileLoadError: the allocation would go past the budget.
    """
    if getattr(_local, "budget", None) is None:
        return
    nbytes = int(numpy.prod([int(s) for s in shape], dtype=object)) * numpy.dtype(dtype).itemsize
    charge_bytes(nbytes, f"{what} of shape {tuple(shape)}", cumulative)


def charge_bytes(nbytes, what, cumulative=True):
    """:func:`charge` for ``nbytes`` that are no array (a vocabulary's tokens,
    the OOV tokens of a lookup): ``what`` says what and how many.

    Raises:
        FileLoadError: the allocation would go past the budget.
    """
    budget = getattr(_local, "budget", None)
    if budget is None:
        return
    nbytes = int(nbytes)
    held = budget.used if cumulative else 0
    if held + nbytes > budget.limit:
        raise FileLoadError(
            f"{budget.source}: rebuilding the model would allocate {what} ({nbytes} bytes, {held} already), more "
            f"than the file's weights justify (limit {budget.limit} bytes). The model config declares sizes its "
            "weights do not back: refusing it (load with max_bytes=None if the file is trusted)."
        )
    if cumulative:
        budget.used += nbytes
