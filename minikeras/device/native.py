"""The CUDA libraries minikeras calls itself, through ctypes, for a given array module.

Two GPU paths skip CuPy and call a CUDA library directly: the matrix
products of a graph capture call cuBLAS's GEMM (``cublas_direct.py``: CuPy
14.2 refuses cuBLAS while a stream captures) and convolutions call cuDNN
(``cudnn.py``: CuPy 14 has no cuDNN). Each finds its library in the process
(the libcublas CuPy loaded, the cuDNN wheel), unless a double of CUDA that
stands in for ``cupy`` (``minikeras.testing.sim_cupy``) has provided its
own for that module: then the same ctypes calls run against its model, so
the test suite exercises these paths without a GPU. Doubles are looked up
by the array module, so a real CuPy in the same process is never served a
double.

Each caller holds the C prototypes of the functions it calls
(``SIGNATURES``: name -> (restype, argtypes), checked against the vendors'
headers by benchmarks/ctypes_audit.py) and declares their return types
with :func:`declare`. Arguments keep ctypes' default conversion (a Python
int is passed as a 32-bit C ``int``; the callers pass ``c_void_p``,
``c_int64``, ``c_longlong`` objects for the rest): declared ``argtypes``
cost about 110 ns per argument per call (memset's 3 arguments, 537 -> 860
ns), about 2.5 us per batched GEMM (23 arguments), and the doubles check
every call the suite makes as that default conversion passes it
(sim_cupy/libs/_boundary.py).
"""
_provided = {}  # (id of an array module, library name) -> (the module, the library double)


def provide(module, name, library):
    """Serve ``library`` as the CUDA library ``name`` ("cublas", the CuPy
    wrapper "cupy_cublas", or "cudnn") to code running on the array module
    ``module``."""
    _provided[(id(module), name)] = (module, library)


def provided(module, name):
    """The double of the library ``name`` provided for ``module``, or None
    (then the caller loads the real one)."""
    entry = _provided.get((id(module), name))
    return None if entry is None or entry[0] is not module else entry[1]


def declare(library, signatures):
    """Set the ``restype`` of each function of ``library`` named in
    ``signatures`` ({name: (restype, argtypes)}; the argument types stay
    ctypes' defaults, module docstring), once per library (a ctypes CDLL, or
    a double whose functions check it); returns ``library``."""
    if getattr(library, "_minikeras_signatures", None) is signatures:
        return library
    for name, (restype, _) in signatures.items():
        getattr(library, name).restype = restype
    library._minikeras_signatures = signatures
    return library
