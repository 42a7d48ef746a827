"""A fused GPU kernel beside its NumPy reference, and the table of kernels.

On a GPU each array call is one kernel launch, ~10 us of host time, while
the arithmetic of a small model's step takes a few microseconds; so what
several array calls do in one pass over memory (bias + ReLU, an optimizer
update over every variable, softmax + cross-entropy, a pooling window) is
written once as a CUDA kernel. A :class:`Kernel` holds:

- ``reference(device, *args, **params)``: the same computation written on
  ``device.xp`` (and the device's block helpers). It is the CPU path, and a
  GPU whose CuPy compiles no CUDA (the simulated CuPy of the test suite)
  runs it too, counted as ONE kernel launch (``device.one_kernel()``), so a
  test of the reference on the simulated GPU checks what the real GPU runs
  and how many launches it costs;
- ``cuda_source``: a CUDA C++ translation unit (CuPy ``RawKernel`` source)
  written on ``scalar_t``, which :func:`cuda_source` defines per dtype;
- ``launch(launcher, device, *args, **params)``: allocates the outputs and
  calls ``launcher.run(dtype, grid, block, arguments)`` once per launch.

:func:`get` ``(name, device)`` returns the callable to use on ``device``: the
compiled kernel where ``device.compiles_kernels`` (a GPU with CuPy's RawKernel; compiled by
CuPy/NVRTC on first use, once per CUDA device and dtype), else the
reference. This is the one place where "fused or not" is decided, as
PyTorch's optimizers dispatch single/foreach/fused in one place.
"""
import functools
import importlib

import numpy

_KERNELS = {}
# The modules that register kernels, imported on the first look-up that misses (``get``,
# ``registered``), so that ``import minikeras`` loads none of them; ops that never run a
# fused kernel never load them.
FAMILIES = ("batch_norm", "bias_gradient", "counter_random", "elementwise", "im2col", "matmul_epilogue",
            "optimizer_updates", "pooling", "reductions")
_families_loaded = []
_C_TYPES = {"float32": "float", "float64": "double"}
THREADS = 256  # threads per block of the elementwise launches


class Kernel:
    """A fused kernel: its CUDA source, its NumPy reference, its launch.

    Args:
        name: the table key and the ``extern "C"`` function the source defines.
        reference: ``reference(device, *args, **params)`` on ``device.xp``.
        cuda_source: CUDA C++ on ``scalar_t`` (see :func:`cuda_source`), or
            None for a kernel that has only its reference for now.
        launch: ``launch(launcher, device, *args, **params)``, the glue that
            sizes the grid and passes the arguments (with ``cuda_source``).
        dtypes: the float dtypes the CUDA source is built for.
    """

    def __init__(self, name, reference, cuda_source=None, launch=None, dtypes=("float32", "float64")):
        if (cuda_source is None) != (launch is None):
            raise ValueError(f"Kernel {name!r}: cuda_source and launch go together.")
        self.name = name
        self.reference = reference
        self.cuda_source = cuda_source
        self.launch = launch
        self.dtypes = tuple(dtypes)
        self._compiled = {}
        self._accepted = set()  # dtype objects (or names) check_dtype has passed

    def bound(self, device):
        """The callable that runs this kernel on ``device``: the compiled
        launch, the reference counted as one launch (``device.one_kernel()``),
        or the bare reference where the device counts no launches (the CPU).
        (:func:`get` makes the same choice inline.)"""
        if device.compiles_kernels and self.cuda_source is not None:
            return functools.partial(self._run_compiled, _Launcher(self, device), device)
        if device.counts_kernel_launches:
            return functools.partial(self._run_reference, device)
        return functools.partial(self.reference, device)

    def _run_compiled(self, launcher, device, *args, **params):
        try:
            return self.launch(launcher, device, *args, **params)
        except UnsupportedDtype:
            # e.g. float16 or integers: the reference, as several array calls.
            return self.reference(device, *args, **params)

    def _run_reference(self, device, *args, **params):
        with device.one_kernel():
            return self.reference(device, *args, **params)

    def compiled(self, device, dtype):
        """The CuPy RawKernel of ``dtype`` on ``device`` (built on first use).

        Looked up by the dtype object as it comes first (every launch asks,
        and ``numpy.dtype(...).name`` costs a microsecond), by its name on a miss."""
        key = (device.cuda_id, dtype)
        function = self._compiled.get(key)
        if function is None:
            name = numpy.dtype(dtype).name
            function = self._compiled.get((device.cuda_id, name))
            if function is None:
                self.check_dtype(name)
                function = device.xp.RawKernel(cuda_source(self.cuda_source, name), self.name)
                self._compiled[(device.cuda_id, name)] = function
            self._compiled[key] = function
        return function

    def check_dtype(self, dtype):
        """Raise UnsupportedDtype unless the CUDA source is built for ``dtype``
        (a launch glue checks every dtype before its first launch)."""
        if dtype in self._accepted:
            return
        if numpy.dtype(dtype).name not in self.dtypes:
            raise UnsupportedDtype(f"Kernel {self.name!r} is built for {self.dtypes}, received dtype {dtype}.")
        self._accepted.add(dtype)

    def __repr__(self):
        return f"Kernel({self.name!r}, cuda={'yes' if self.cuda_source else 'no'})"


class UnsupportedDtype(TypeError):
    """A compiled kernel has no source for this dtype (its reference runs instead)."""


class _Launcher:
    """What a kernel's ``launch`` glue calls: one compiled launch, counted."""

    __slots__ = ("kernel", "device")

    def __init__(self, kernel, device):
        self.kernel, self.device = kernel, device

    def check(self, *dtypes):
        """Raise UnsupportedDtype (before any launch) unless every dtype is built."""
        kernel = self.kernel
        for dtype in dtypes:
            if dtype not in kernel._accepted:  # Kernel.check_dtype's first test, inline
                kernel.check_dtype(dtype)

    def run(self, dtype, grid, block, arguments):
        device = self.device
        function = self.kernel._compiled.get((device.cuda_id, dtype))  # Kernel.compiled's hit, inline
        if function is None:
            function = self.kernel.compiled(device, dtype)
        device.stats.kernel_launches += 1
        function(grid, block, arguments)


def cuda_source(source, dtype):
    """``source`` as a complete translation unit for ``dtype`` (float32 or
    float64): ``scalar_t`` is defined first, as CuPy's RawKernel sees it."""
    dtype = numpy.dtype(dtype).name
    if dtype not in _C_TYPES:
        raise TypeError(f"fused kernels are built for float32 and float64, received dtype {dtype}.")
    return f"typedef {_C_TYPES[dtype]} scalar_t;\n{source}"


def blocks_for(count, threads=THREADS):
    """``(grid, block)`` covering ``count`` threads (at least one block)."""
    return (max(1, -(-int(count) // threads)),), (threads,)


def register(kernel):
    """Add ``kernel`` to the table (its name must be new)."""
    if kernel.name in _KERNELS:
        raise ValueError(f"a kernel named {kernel.name!r} is already registered.")
    _KERNELS[kernel.name] = kernel
    return kernel


def get(name, device):
    """The kernel ``name`` as a callable on ``device`` (compiled on a GPU
    that compiles kernels, the NumPy reference elsewhere).

    Raises:
        KeyError: no kernel has that name (the message lists them).
    """
    kernel = _KERNELS.get(name)
    if kernel is None:
        load_families()
        try:
            kernel = _KERNELS[name]
        except KeyError:
            raise KeyError(f"no fused kernel named {name!r}; registered: {sorted(_KERNELS)}.") from None
    # Kernel.bound(device), inline: a call fewer per fused op.
    if device.compiles_kernels and kernel.cuda_source is not None:
        return functools.partial(kernel._run_compiled, _Launcher(kernel, device), device)
    if device.counts_kernel_launches:
        return functools.partial(kernel._run_reference, device)
    return functools.partial(kernel.reference, device)


def registered():
    """Every registered Kernel, by name."""
    load_families()
    return dict(_KERNELS)


def load_families():
    """Import every module of :data:`FAMILIES` (they register their kernels); once."""
    if not _families_loaded:
        for family in FAMILIES:
            importlib.import_module(f"minikeras.kernels.{family}")
        _families_loaded.append(True)
