"""Best-effort control of the BLAS thread count while CPU replicas run.

Replicas on logical CPU devices run in their own threads, and each matrix
product would start BLAS's own threads too: two replicas on two cores with
two OpenBLAS threads each means four busy threads on two cores, and
OpenBLAS's waiting threads spin, so everything slows down (benchmarks/NOTES.md,
"CPU tuning constants"). While a MirroredModel over CPUs trains,
the BLAS thread count is therefore lowered to ``cores // replicas``, then
restored.

Only OpenBLAS (what NumPy's wheels ship) is handled, found among the
libraries the process has loaded; with any other BLAS, or none found,
nothing changes.
"""
import contextlib
import ctypes
import glob
import os

_PAIRS = [  # (get, set) symbol names by OpenBLAS build
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
]
_found = []  # [None] or [(get, set)] once looked up


def _candidate_paths():
    paths = []
    try:
        with open("/proc/self/maps") as maps:
            paths += [line.split()[-1] for line in maps if "openblas" in line.lower() and "/" in line]
    except OSError:
        pass
    import numpy

    folder = os.path.dirname(numpy.__file__)
    for pattern in ("../numpy.libs/*openblas*", ".dylibs/*openblas*", "../numpy/.libs/*openblas*"):
        paths += glob.glob(os.path.join(folder, pattern))
    return list(dict.fromkeys(paths))


def _api():
    if not _found:
        api = None
        for path in _candidate_paths():
            try:
                library = ctypes.CDLL(path)
            except OSError:
                continue
            for get_name, set_name in _PAIRS:
                if hasattr(library, get_name) and hasattr(library, set_name):
                    api = (getattr(library, get_name), getattr(library, set_name))
                    break
            if api is not None:
                break
        _found.append(api)
    return _found[0]


def get():
    """The BLAS thread count, or None when it cannot be read."""
    api = _api()
    return None if api is None else int(api[0]())


@contextlib.contextmanager
def at_most(count):
    """Within the block, BLAS uses at most ``count`` threads (no-op when
    ``count`` is None, already satisfied, or BLAS is not OpenBLAS)."""
    api = _api()
    previous = None if api is None or count is None else int(api[0]())
    if previous is None or previous <= count:
        yield
        return
    api[1](int(count))
    try:
        yield
    finally:
        api[1](previous)


def set_count(count):
    """Set the BLAS thread count (no-op when BLAS is not OpenBLAS)."""
    api = _api()
    if api is not None:
        api[1](int(count))
