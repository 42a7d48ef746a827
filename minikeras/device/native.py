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

Each caller declares the C prototypes of the functions it calls
(``SIGNATURES``: name -> (restype, argtypes), checked against the vendors'
headers by benchmarks/ctypes_audit.py) with :func:`declare`, so that ctypes
converts every argument to its C width (an undeclared function receives a
Python int as a 32-bit ``int``) and refuses a wrong count or kind.
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
    """Set ``restype`` and ``argtypes`` of each function of ``library`` named
    in ``signatures`` ({name: (restype, argtypes)}), once per library (a
    ctypes CDLL, or a double whose functions check what was declared)."""
    if getattr(library, "_minikeras_signatures", None) is signatures:
        return library
    for name, (restype, argtypes) in signatures.items():
        function = getattr(library, name)
        function.restype = restype
        function.argtypes = list(argtypes)
    library._minikeras_signatures = signatures
    return library
