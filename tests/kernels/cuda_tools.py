"""Tools the kernel tests (and benchmarks/kernel_resources.py) use to check CUDA
sources on a machine without a GPU.

- :func:`ptxas_report`: ``nvcc -Xptxas -v`` per kernel (registers, stack
  frame, spills) and its PTX's division instructions (``div``/``rem`` on 64
  or 32 bits: a runtime divisor costs ~20-70 instructions each).
- :class:`CpuHarness`: each kernel's CUDA source compiled by g++ as C++ for
  the host, with CUDA's built-ins defined (``threadIdx`` and friends as
  globals, ``__shared__`` as one static per block, ``__syncthreads`` as a
  switch to the next of the block's threads), launched as CuPy launches
  it: the same argument tuple (a device array's address, a number's bytes,
  a size-1 NumPy array's bytes for a struct passed by value). The blocks
  run one after another, a block's threads as fibers in one host thread
  that each run to their next barrier (or in one loop when the kernel has
  no barrier). So the launch glue and the kernel itself,
  the code a card would run, are checked against the NumPy reference
  here; what it cannot show is speed, and whatever the host and the GPU
  do differently (memory ordering between blocks, ``-ftz``, FMA
  contraction, warp-level timing).
"""
import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import types

import numpy

SIGNATURE = re.compile(r'extern "C" __global__ void (?:__launch_bounds__\([^)]*\)\s*)?(\w+)\((.*?)\)\s*\{', re.DOTALL)


def nvcc():
    """The nvcc executable, or None."""
    return shutil.which("nvcc") or next(
        (path for path in (os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc"),)
         if os.path.exists(path)), None)


def gxx():
    """A C++20 host compiler (g++), or None."""
    return shutil.which("g++")


def parameters(source, name):
    """The C types of kernel ``name``'s parameters, in order (``const`` and ``__restrict__`` kept out)."""
    found = {match.group(1): match.group(2) for match in SIGNATURE.finditer(source)}
    assert name in found, f"the source of {name!r} defines no extern \"C\" __global__ void {name}(...)"
    types_ = []
    for part in found[name].split(","):
        words = [w for w in part.replace("*", " * ").split() if w != "__restrict__"]
        types_.append(" ".join(words[:-1]).replace(" *", "*"))
    return types_


# ------------------------------------------------------------------ ptxas
_ENTRY = re.compile(r"Compiling entry function '(\w+)' for '(sm_\d+)'")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_REGISTERS = re.compile(r"Used (\d+) registers")


def ptxas_report(units, architectures, workdir):
    """Compile each translation unit (``{stem: source}``) for each architecture, side by side.

    Returns:
        ``{(arch, stem): {kernel: {"registers", "stack", "spill_stores", "spill_loads", "div64",
        "div32"}}}``: nvcc's ``-Xptxas -v`` numbers, and the PTX's ``div``/``rem`` instructions on
        64 and 32 bits (each a ~70 or ~20 instruction sequence for a divisor known at run time);
        every kernel's cubin is ``<workdir>/<arch>/<stem>.cubin``.
    """
    runs = {}
    for arch in architectures:
        os.makedirs(os.path.join(workdir, arch), exist_ok=True)
        for stem, source in units.items():
            path = os.path.join(workdir, f"{stem}.cu")
            with open(path, "w") as handle:
                handle.write(source)
            keep = os.path.join(workdir, arch, f"{stem}_keep")
            os.makedirs(keep, exist_ok=True)
            runs[(arch, stem)] = subprocess.Popen(
                [nvcc(), "-cubin", f"-arch={arch}", "-Xptxas", "-v", "-keep", "-keep-dir", keep, "-o",
                 os.path.join(workdir, arch, f"{stem}.cubin"), path],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    report = {}
    for (arch, stem), run in runs.items():
        output, _ = run.communicate(timeout=600)
        assert run.returncode == 0, f"nvcc -arch={arch} failed on {stem}:\n{output}"
        kernels = report[(arch, stem)] = {}
        current = None
        for line in output.splitlines():
            entry = _ENTRY.search(line)
            if entry:
                current = kernels.setdefault(entry.group(1), {})
                continue
            frame = _FRAME.search(line)
            if frame and current is not None and "stack" not in current:
                current["stack"], current["spill_stores"], current["spill_loads"] = map(int, frame.groups())
            registers = _REGISTERS.search(line)
            if registers and current is not None and "registers" not in current:
                current["registers"] = int(registers.group(1))
        keep = os.path.join(workdir, arch, f"{stem}_keep")
        ptx = "".join(open(os.path.join(keep, name)).read() for name in os.listdir(keep) if name.endswith(".ptx"))
        for name, body in re.findall(r"\.visible \.entry (\w+)\((.*?)\n}\n", ptx, re.DOTALL):
            if name in kernels:
                kernels[name]["div64"] = len(re.findall(r"\b(?:div|rem)\.[su]64\b", body))
                kernels[name]["div32"] = len(re.findall(r"\b(?:div|rem)\.[su]32\b", body))
    return report


def kernel_units(kernels, dtypes=("float32", "float64")):
    """``{f"kernels_{dtype}": source}``: every kernel's translation unit of each dtype in one file,
    each in its own namespace (its scalar_t and helpers its own; the extern "C" names differ)."""
    from minikeras.kernels import cuda_source

    return {f"kernels_{dtype}": "".join(f"namespace unit_{name} {{\n{cuda_source(kernel.cuda_source, dtype)}}}\n"
                                        for name, kernel in sorted(kernels.items()) if dtype in kernel.dtypes)
            for dtype in dtypes}


# ------------------------------------------------------------ CPU harness
PRELUDE = r"""
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <ucontext.h>
#include <vector>
using std::sqrt; using std::exp; using std::log; using std::fabs; using std::max; using std::min;
struct harness_dim3 { unsigned int x, y, z; };
static thread_local harness_dim3 threadIdx, blockIdx;
static harness_dim3 blockDim, gridDim;
/* A block's threads with barriers run as fibers in one host thread: each runs until its next
   __syncthreads (or its end), then the next; a round resumes every fiber once, so no thread passes
   a barrier before all have reached it. */
struct HarnessFiber { ucontext_t context; std::vector<char> stack; harness_dim3 index; bool done; };
static ucontext_t harness_scheduler;
static HarnessFiber* harness_current = nullptr;
static std::function<void()> harness_call;
static void harness_fiber_entry() { harness_call(); harness_current->done = true; }
static void harness_run_block(unsigned int threads, bool barriers) {
    if (!barriers) {
        for (unsigned int t = 0; t < threads; ++t) {
            threadIdx = {t % blockDim.x, (t / blockDim.x) % blockDim.y, t / (blockDim.x * blockDim.y)};
            harness_call();
        }
        return;
    }
    static std::vector<HarnessFiber> fibers;
    fibers.resize(threads);
    for (unsigned int t = 0; t < threads; ++t) {
        HarnessFiber& fiber = fibers[t];
        fiber.stack.resize(1 << 16);
        fiber.index = {t % blockDim.x, (t / blockDim.x) % blockDim.y, t / (blockDim.x * blockDim.y)};
        fiber.done = false;
        getcontext(&fiber.context);
        fiber.context.uc_stack.ss_sp = fiber.stack.data();
        fiber.context.uc_stack.ss_size = fiber.stack.size();
        fiber.context.uc_link = &harness_scheduler;
        makecontext(&fiber.context, harness_fiber_entry, 0);
    }
    for (bool running = true; running;) {
        running = false;
        for (HarnessFiber& fiber : fibers) {
            if (fiber.done) continue;
            harness_current = &fiber;
            threadIdx = fiber.index;
            swapcontext(&harness_scheduler, &fiber.context);
            running = running || !fiber.done;
        }
    }
}
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __shared__ static
#define __launch_bounds__(...)
inline void __syncthreads() { swapcontext(&harness_current->context, &harness_scheduler); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
template <class T> inline T __ldcg(const T* p) { return *(volatile const T*)p; }
template <class T> inline T __ldg(const T* p) { return *p; }
inline int atomicAdd(int* p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned int atomicAdd(unsigned int* p, unsigned int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned int __umulhi(unsigned int a, unsigned int b) { return (unsigned int)(((unsigned long long)a * b) >> 32); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline float fmaxf(float a, float b) { return std::fmax(a, b); }
inline float expf(float a) { return std::exp(a); }
inline float logf(float a) { return std::log(a); }
"""

_RUNNER = r"""
extern "C" void harness_run_{name}(unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                   unsigned int by, unsigned int bz, void** args) {{
    gridDim = {{gx, gy, gz}};
    blockDim = {{bx, by, bz}};
    harness_call = [args]() {{ {name}({arguments}); }};
    for (unsigned int z = 0; z < gz; ++z) for (unsigned int y = 0; y < gy; ++y) for (unsigned int x = 0; x < gx; ++x) {{
        blockIdx = {{x, y, z}};
        harness_run_block(bx * by * bz, {barriers});
    }}
}}
"""


class DeviceArray(numpy.ndarray):
    """A NumPy array standing for a device array: CuPy's ``.data.ptr`` (what launch glue reads)."""

    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.ctypes.data)


GUARD_BYTES = 256  # after every harness array: a kernel that writes past an array's end changes them
_GUARDED = []


def guarded(array):
    """A DeviceArray copy of ``array`` followed by GUARD_BYTES of a known pattern (see check_guards)."""
    array = numpy.asarray(array)
    buffer = numpy.full(array.nbytes + GUARD_BYTES, 0xA5, numpy.uint8)
    view = buffer[:array.nbytes].view(array.dtype).reshape(array.shape).view(DeviceArray)
    view[...] = array
    _GUARDED.append((buffer, array.nbytes))
    return view


def check_guards():
    """Assert no kernel wrote past the end of an array made since the last check."""
    damaged = sum(int((buffer[size:] != 0xA5).any()) for buffer, size in _GUARDED)
    _GUARDED.clear()
    assert damaged == 0, f"a kernel wrote past the end of {damaged} array(s)"


class ArrayModule:
    """NumPy as ``device.xp`` for launch glue: every array it makes is a guarded DeviceArray,
    and ``ascontiguousarray`` keeps a contiguous array as it is (as CuPy does)."""

    def __getattr__(self, name):
        function = getattr(numpy, name)
        if not callable(function) or isinstance(function, type):
            return function

        def wrapped(*args, **kwargs):
            result = function(*args, **kwargs)
            return guarded(result) if isinstance(result, numpy.ndarray) else result
        return wrapped

    @staticmethod
    def ascontiguousarray(array):
        return array if array.flags.c_contiguous else guarded(numpy.ascontiguousarray(array))


def device_arrays(*arrays):
    """Guarded DeviceArray copies of host arrays."""
    return [guarded(numpy.array(a, copy=True)) for a in arrays]


class CpuHarness:
    """Kernels compiled for the host by g++, launched with CuPy's argument convention.

    Args:
        kernels: ``{name: Kernel}`` (each with a CUDA source).
        dtype: the scalar_t they are built for.
        workdir: where the shared library goes (compiled once per distinct source).
    """

    def __init__(self, kernels, dtype, workdir):
        from minikeras.kernels import cuda_source

        units, runners = [], []
        self.parameters = {}
        for name, kernel in sorted(kernels.items()):
            source = cuda_source(kernel.cuda_source, dtype)
            self.parameters[name] = parameters(source, name)
            units.append(f"namespace unit_{name} {{\n{source}}}\n")
            arguments = ", ".join(f"*({c_type}*)args[{index}]" for index, c_type in enumerate(self.parameters[name]))
            runner = _RUNNER.format(name=name, arguments=arguments,
                                    barriers="true" if "__syncthreads" in source else "false")
            runners.append(f"namespace unit_{name} {{\n{runner}}}\n")
        text = PRELUDE + "".join(units) + "".join(runners)
        digest = hashlib.sha1(text.encode()).hexdigest()[:16]
        library = os.path.join(workdir, f"harness_{digest}.so")
        if not os.path.exists(library):
            path = os.path.join(workdir, f"harness_{digest}.cpp")
            with open(path, "w") as handle:
                handle.write(text)
            run = subprocess.run([gxx(), "-std=c++20", "-O1", "-ffp-contract=off", "-fPIC", "-shared", "-pthread",
                                  "-w", "-o", library, path], capture_output=True, text=True, timeout=600)
            assert run.returncode == 0, f"g++ failed on the kernels' CUDA sources:\n{run.stderr[:6000]}"
        self.library = ctypes.CDLL(library)
        self.dtype = numpy.dtype(dtype)

    def launcher(self, kernel):
        """A launcher for ``kernel``'s launch glue that runs each launch here."""
        return _HarnessLauncher(self, kernel)

    def run(self, name, grid, block, arguments):
        kept, pointers = [], (ctypes.c_void_p * max(1, len(arguments)))()
        assert len(arguments) == len(self.parameters[name]), f"{name}: {len(arguments)} arguments"
        for index, value in enumerate(arguments):
            if value is None:
                cell = ctypes.c_void_p(0)
            elif isinstance(value, DeviceArray):
                cell = ctypes.c_void_p(value.ctypes.data)
            elif isinstance(value, numpy.ndarray):  # a size-1 host array: passed by value, as CuPy does
                assert value.size == 1, f"{name} argument {index}: a host array of size {value.size}"
                cell = value
            elif isinstance(value, numpy.generic):
                cell = numpy.array(value)
            else:
                raise TypeError(f"{name} argument {index}: {type(value).__name__} is not a kernel argument")
            kept.append(cell)
            pointers[index] = ctypes.addressof(cell) if isinstance(cell, ctypes.c_void_p) else cell.ctypes.data
        grid, block = tuple(grid) + (1,) * (3 - len(grid)), tuple(block) + (1,) * (3 - len(block))
        getattr(self.library, f"harness_run_{name}")(*(ctypes.c_uint(v) for v in grid + block), pointers)


class _HarnessLauncher:
    def __init__(self, harness, kernel):
        self.harness, self.kernel, self.launches = harness, kernel, 0

    def check(self, *dtypes):
        for dtype in dtypes:
            self.kernel.check_dtype(dtype)
            if numpy.dtype(dtype) != self.harness.dtype:
                from minikeras.kernels.kernel import UnsupportedDtype
                raise UnsupportedDtype(f"the harness is built for {self.harness.dtype}, received {dtype}")

    def run(self, dtype, grid, block, arguments):
        assert numpy.dtype(dtype) == self.harness.dtype
        self.harness.run(self.kernel.name, grid, block, arguments)
        self.launches += 1


def harness_device():
    """The ``device`` launch glue sees: NumPy as xp, one made-up CUDA device."""
    return types.SimpleNamespace(xp=ArrayModule(), cuda_id=0, canonical="/harness:0")


def scratch_dir():
    """A per-user folder for the harness's compiled libraries (kept between runs: the
    library is named by its source's hash)."""
    path = os.path.join(tempfile.gettempdir(), f"minikeras_cuda_harness_{os.getuid()}")
    os.makedirs(path, exist_ok=True)
    return path
