"""An unpickler that builds only NumPy arrays and plain Python values.

Keras's IMDB and Reuters ``.npz`` files hold ragged sequences as object
arrays, which NumPy stores as pickles, and CIFAR-100 batches are pickled
dicts. ``pickle.load`` on such a file would run whatever code a tampered file
names; this unpickler refuses every global except the few NumPy needs to
rebuild an array, so a malicious file fails to load instead of running code.
"""
import importlib
import io
import pickle

# (module, name) pairs an array pickle may name; numpy._core.* is mapped to numpy.core.*.
_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"),  # arrays, protocols 0-4
    ("numpy.core.multiarray", "scalar"),  # NumPy scalars
    ("numpy.core.numeric", "_frombuffer"),  # arrays, protocol 5
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("_codecs", "encode"),  # how protocol 2 stores bytes under Python 3
}


class RestrictedUnpickler(pickle.Unpickler):
    """``pickle.Unpickler`` limited to NumPy array reconstruction (see the module docstring)."""

    def find_class(self, module, name):
        """Returns an allowed global; raises ``pickle.UnpicklingError`` for any other."""
        canonical = "numpy.core" + module[len("numpy._core"):] if module.startswith("numpy._core") else module
        if (canonical, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name}")
        if canonical.startswith("numpy.core"):
            try:  # the new name first: the old one warns under NumPy 2
                return getattr(importlib.import_module("numpy._core" + canonical[len("numpy.core"):]), name)
            except ImportError:
                return getattr(importlib.import_module(canonical), name)
        return super().find_class(module, name)


def loads(data, encoding="ASCII"):
    """Unpickles ``data`` (bytes) with `RestrictedUnpickler`."""
    return RestrictedUnpickler(io.BytesIO(data), encoding=encoding).load()
