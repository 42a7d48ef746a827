"""Every CUDA source of minikeras.kernels compiles, and every launch passes
the arguments its kernel's signature declares.

The compile runs ``nvcc`` for sm_90 (Hopper) and sm_80 (Ampere), device
code only (``-cubin``), on exactly the translation unit CuPy's RawKernel
hands NVRTC (``kernels.cuda_source``: ``scalar_t`` defined, then the
source; RawKernel sources are complete, unlike ElementwiseKernel
fragments, so no wrapping is needed), with ``-Xptxas -v``: the kernels
written to their floors (issue 33) must keep no stack frame, no spill and
no division in their index math. Where nvcc is absent (CI) it is skipped
with the reason. The launch check needs no compiler: each kernel's launch
glue runs on NumPy arrays with a recording launcher, and every argument
must match its C parameter (pointer, int, long long, unsigned long long,
scalar_t, or a struct passed by value as a size-1 NumPy array of its
dtype), as CuPy passes them by position.
"""
import types

import numpy
import pytest

from minikeras import kernels
from minikeras.device import registry
from minikeras.kernels.cuda_common import by_value_structs
from minikeras.ops.nn.sliding_window import WindowGeometry

from tests.kernels.cuda_tools import ArrayModule as _ArrayModule
from tests.kernels.cuda_tools import DeviceArray as _DeviceArray
from tests.kernels.cuda_tools import kernel_units, ptxas_report
from tests.kernels.cuda_tools import nvcc as _nvcc
from tests.kernels.cuda_tools import parameters as _parameters

ARCHITECTURES = ("sm_90", "sm_80")


# The kernels written to their floors (issue 33): no stack frame (a local array or a table indexed at
# run time: the multi-tensor updates had 256-768 bytes), no spills, no division in their index math.
FLOOR_KERNELS = ("im2col", "col2im", "adam_update", "sgd_update", "rmsprop_update", "weight_decay_update",
                 "batch_norm_statistics", "batch_norm_normalize", "batch_norm_backward_sums",
                 "batch_norm_backward_input")


@pytest.fixture(scope="module")
def ptxas(tmp_path_factory):
    """nvcc -Xptxas -v of every kernel, each dtype, for sm_90 and sm_80 (compiled once per module)."""
    if _nvcc() is None:
        pytest.skip("nvcc not found (no CUDA toolkit on this machine): CUDA sources not compiled")
    compiled = {name: kernel for name, kernel in kernels.registered().items() if kernel.cuda_source is not None}
    workdir = tmp_path_factory.mktemp("ptxas")
    return compiled, workdir, ptxas_report(kernel_units(compiled), ARCHITECTURES, str(workdir))


@pytest.mark.slow
def test_every_cuda_source_compiles_for_hopper_and_ampere(ptxas):
    # One translation unit per dtype, each kernel in its own namespace, so that nvcc starts four
    # times rather than forty; the sources are exactly what CuPy's RawKernel hands NVRTC.
    compiled, workdir, report = ptxas
    assert len(compiled) >= 10
    for (arch, stem), found in report.items():
        symbols = (workdir / arch / f"{stem}.cubin").read_bytes()
        dtype = stem.split("_")[-1]
        for name in compiled:  # each kernel is there under its own (extern "C") name
            if dtype in compiled[name].dtypes:
                assert name.encode() + b"\0" in symbols, f"{name} missing from the {arch} {dtype} cubin"
                assert name in found, f"ptxas reported nothing for {name} ({arch}, {dtype})"


@pytest.mark.slow
def test_the_kernels_at_their_floors_keep_no_stack_frame_spill_or_division(ptxas):
    _, _, report = ptxas
    for (arch, stem), found in report.items():
        for name in FLOOR_KERNELS:
            resources = found[name]
            where = f"{name} ({arch}, {stem}): {resources}"
            assert resources["stack"] == 0, f"a stack frame (local memory) in {where}"
            assert resources["spill_stores"] == resources["spill_loads"] == 0, f"register spills in {where}"
            assert resources["div64"] == 0, f"a 64-bit division or remainder in {where}"
            assert resources["div32"] == 0, f"a 32-bit division by a run-time divisor in {where}"
            assert resources["registers"] <= 64, f"more than 64 registers (fewer blocks per SM) in {where}"


# ------------------------------------------------------------ launch arguments
def _check_argument(c_type, value, dtype, where):
    struct = by_value_structs().get(c_type.replace("const ", ""))
    if struct is not None:  # passed by value: CuPy copies a size-1 NumPy array's bytes
        assert type(value) is numpy.ndarray and value.size == 1, (
            f"{where}: {c_type} is passed by value as a size-1 NumPy array, received {type(value).__name__}")
        assert value.dtype == struct.dtype, f"{where}: {c_type} takes dtype {struct.dtype}, received {value.dtype}"
        return
    if "*" in c_type:
        assert isinstance(value, numpy.ndarray), f"{where}: {c_type} takes an array, received {type(value)}"
        if "scalar_t" in c_type:
            assert value.dtype == dtype, f"{where}: {c_type} takes {dtype}, received {value.dtype}"
        elif "unsigned long long" in c_type:
            assert value.dtype == numpy.uint64, f"{where}: {c_type} takes uint64, received {value.dtype}"
        elif "long long" in c_type:
            assert value.dtype == numpy.int64, f"{where}: {c_type} takes int64, received {value.dtype}"
        elif "int" in c_type:
            assert value.dtype == numpy.int32, f"{where}: {c_type} takes int32, received {value.dtype}"
        assert value.flags.c_contiguous, f"{where}: a kernel indexes its arrays flat; received a strided one"
        return
    expected = {"unsigned long long": numpy.uint64, "long long": numpy.int64, "int": numpy.int32,
                "scalar_t": numpy.dtype(dtype).type}[c_type.replace("const ", "")]
    assert type(value) is expected, f"{where}: {c_type} takes {expected.__name__}, received {type(value).__name__}"


def _parameter_bytes(arguments):
    """The size of a launch's parameter buffer: each argument at its alignment, as the driver lays them."""
    size = 0
    for value in arguments:
        if isinstance(value, numpy.ndarray) and type(value) is numpy.ndarray:  # a struct by value
            width, alignment = value.dtype.itemsize, value.dtype.alignment
        elif isinstance(value, numpy.ndarray):  # a device pointer
            width = alignment = 8
        else:
            width = alignment = numpy.dtype(type(value)).itemsize
        size = -(-size // alignment) * alignment + width
    return size


class _Recorder:
    """A launcher that checks each launch's arguments against the kernel's signature."""

    def __init__(self, kernel):
        self.kernel, self.launches = kernel, 0

    def check(self, *dtypes):
        for dtype in dtypes:
            self.kernel.check_dtype(dtype)

    def run(self, dtype, grid, block, arguments):
        parameters = _parameters(self.kernel.cuda_source, self.kernel.name)
        assert len(arguments) == len(parameters), (
            f"{self.kernel.name}: {len(arguments)} arguments for {len(parameters)} parameters")
        for index, (c_type, value) in enumerate(zip(parameters, arguments)):
            _check_argument(c_type, value, dtype, f"{self.kernel.name} parameter {index} ({c_type})")
        assert _parameter_bytes(arguments) <= 4096, (
            f"{self.kernel.name}: {_parameter_bytes(arguments)} bytes of parameters; CUDA before 12.1 takes 4096")
        assert grid[0] >= 1 and block[0] >= 1
        self.launches += 1


def _arrays(*shapes, dtype="float32"):
    rng = numpy.random.default_rng(0)
    return [rng.random(shape).astype(dtype).view(_DeviceArray) for shape in shapes]


def _pool_geometry(padding):
    return WindowGeometry("max_pool2d", (2, 5, 5, 3), (2, 2), (2, 2), (1, 1), padding)


def _cases(dtype):
    out, bias = _arrays((4, 3), (3,), dtype=dtype)
    grad, relu_out, target = _arrays((4, 3), (4, 3), (4, 3), dtype=dtype)
    logits, probabilities = _arrays((4, 5), (4, 5), dtype=dtype)
    labels = numpy.array([0, 4, 2, 1])
    adam = [(g, m, v, None, w, None, None) for g, m, v, w in (_arrays(*[shape] * 4, dtype=dtype)
                                                               for shape in ((3, 2), (7,)))]
    images, = _arrays((2, 5, 5, 3), dtype=dtype)
    same = _pool_geometry("same")
    pooled_grad, = _arrays((2, same.out_h, same.out_w, 3), dtype=dtype)
    conv = WindowGeometry("conv2d", (2, 5, 5, 3), (3, 3), (1, 1), (1, 1), "same")
    patches, = _arrays((2, conv.out_h, conv.out_w, 3, 3, 3), dtype=dtype)
    bn_x, bn_grad = _arrays((6, 8), (6, 8), dtype=dtype)
    bn_stats = [numpy.ones((1, 8), dtype).view(_DeviceArray) for _ in range(4)]  # mean, inv_std, two sums
    bn_gamma, bn_beta = _arrays((1, 8), (1, 8), dtype=dtype)
    return {
        "batch_norm_statistics": [(bn_x, (0,), 6, 1e-3)],
        "batch_norm_normalize": [(bn_x, (0,), bn_stats[0], bn_stats[1], bn_gamma, bn_beta, None),
                                 (bn_x, (0,), bn_stats[0], bn_stats[1], None, None, None)],
        "batch_norm_backward_sums": [(bn_grad, None, bn_x, bn_stats[0], bn_stats[1], (0,))],
        "batch_norm_backward_input": [(bn_grad, None, bn_x, bn_stats[0], bn_stats[1], bn_gamma, bn_stats[2],
                                       bn_stats[3], 6, None),
                                      (bn_grad, None, bn_x, bn_stats[0], bn_stats[1], None, bn_stats[2], bn_stats[3],
                                       6, None)],
        "bias_relu": [(out, bias, True), (out, None, True)],
        "relu_backward": [(grad, relu_out, target)],
        "relu_bias_backward": [(grad, relu_out, target)],
        "matmul_bias_relu": [(grad, _arrays((3, 5), dtype=dtype)[0], _arrays((5,), dtype=dtype)[0], True),
                             (grad, _arrays((3, 5), dtype=dtype)[0], None, False)],
        "adam_update": [(adam, 0.01, 0.9, 0.999, 1e-7)],
        "rmsprop_update": [
            ([(g, v, a, m, w, None, None) for g, v, a, m, w in (_arrays(*[(3, 2)] * 5, dtype=dtype),)], 0.01, 0.9,
             1e-7, 0.5),
            ([(g, v, None, None, w, None, None) for g, v, w in (_arrays(*[(4,)] * 3, dtype=dtype),)], 0.01, 0.9, 1e-7,
             0.0)],
        "weight_decay_update": [([(w, None) for w in _arrays((3, 2), (4,), dtype=dtype)], 0.004, 0.01)],
        "sgd_update": [([(g, v, w, None, None) for g, v, w in (_arrays((3,), (3,), (3,), dtype=dtype),)], 0.1, 0.9,
                        True),
                       ([(g, None, w, None, None) for g, w in (_arrays((5, 2), (5, 2), dtype=dtype),)], 0.1, 0.0,
                        False)],
        "sparse_softmax_cross_entropy": [(logits, labels, True), (logits, labels, False)],
        "sparse_softmax_cross_entropy_mean": [(logits, labels, True), (logits, labels, False)],
        "sparse_softmax_cross_entropy_backward": [
            (probabilities, labels, labels.astype(dtype)),
            (probabilities, labels, numpy.broadcast_to(numpy.ones(1, dtype), (4,)).view(_DeviceArray))],  # a mean's
        "max_pool": [(images, same, True), (images, _pool_geometry("valid"), False)],
        "max_pool_backward": [(pooled_grad, numpy.zeros(pooled_grad.shape, numpy.int32), same)],
        "avg_pool": [(images, same)],
        "avg_pool_backward": [(pooled_grad, same)],
        "im2col": [(images, conv, numpy.empty(patches.shape, dtype).view(_DeviceArray), False, [None])],
        "col2im": [(patches, conv, numpy.empty(images.shape, dtype).view(_DeviceArray))],
        "counter_random": [((4, 3), numpy.dtype(dtype), 12345, numpy.zeros(2, numpy.uint64).view(_DeviceArray), False),
                           ((5,), numpy.dtype(dtype), 2**64 - 1, numpy.zeros(2, numpy.uint64).view(_DeviceArray), True)],
    }


LAUNCH_CASE_NAMES = tuple(_cases("float32"))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_every_launch_passes_what_its_kernel_declares(dtype):
    device = types.SimpleNamespace(xp=_ArrayModule(), cuda_id=0)
    cases = _cases(dtype)
    with_source = {name for name, kernel in kernels.registered().items() if kernel.cuda_source is not None}
    assert with_source <= set(cases), f"add launch cases for {sorted(with_source - set(cases))}"
    for name in sorted(with_source):
        kernel = kernels.registered()[name]
        for arguments in cases[name]:
            recorder = _Recorder(kernel)
            kernel.launch(recorder, device, *arguments)
            assert recorder.launches == 1, f"{name}: {recorder.launches} launches"


def test_a_compiled_kernel_falls_back_to_its_reference_for_other_dtypes():
    """float16 has no CUDA source yet: the reference runs (several launches), nothing is compiled."""
    cpu = registry.get_device("cpu:0")
    device = types.SimpleNamespace(xp=numpy, cuda_id=0, compiles_kernels=True, row_blocks=cpu.row_blocks,
                                   one_kernel=cpu.one_kernel)
    out = numpy.array([[-1.0, 2.0]], dtype="float16")
    kernels.get("bias_relu", device)(out, numpy.array([0.5, 0.5], dtype="float16"), True)
    numpy.testing.assert_array_equal(out, [[0.0, 2.5]])
    # (other tests on a real GPU compile its float32 source first: none for float16)
    assert not [key for key in kernels.registered()["bias_relu"]._compiled if "float16" in key]


def test_a_compiled_max_pool_backward_leaves_a_reference_index_to_the_reference():
    """A forward that ran its reference (uint8 index) is routed back by the reference, not the kernel."""
    cpu = registry.get_device("cpu:0")
    device = types.SimpleNamespace(xp=_ArrayModule(), cuda_id=0, compiles_kernels=True, row_blocks=cpu.row_blocks,
                                   one_kernel=cpu.one_kernel)
    geometry = _pool_geometry("valid")
    images = numpy.random.default_rng(0).random((2, 5, 5, 3)).astype("float32")
    out, index = kernels.registered()["max_pool"].reference(cpu, images, geometry, True)
    assert index.dtype == numpy.uint8
    grad = numpy.ones_like(out)
    routed = kernels.get("max_pool_backward", device)(grad, index, geometry)
    expected = kernels.registered()["max_pool_backward"].reference(cpu, grad, index, geometry)
    numpy.testing.assert_array_equal(routed, expected)
    assert routed.sum() == grad.size


def test_a_strided_target_of_the_bias_gradient_takes_the_reference():
    """The kernel writes its target flat: a strided one is written by the reference, nothing is compiled."""
    cpu = registry.get_device("cpu:0")
    device = types.SimpleNamespace(xp=_ArrayModule(), cuda_id=0, compiles_kernels=True, row_blocks=cpu.row_blocks,
                                   one_kernel=cpu.one_kernel)
    grad, out = _arrays((4, 3), (4, 3))
    target = numpy.zeros((3, 4), "float32").T  # (4, 3), Fortran order
    # On a real GPU another test of this process may have compiled it already.
    compiled = dict(kernels.registered()["relu_bias_backward"]._compiled)
    masked, grad_bias = kernels.get("relu_bias_backward", device)(grad, out, target)
    assert masked is target
    numpy.testing.assert_array_equal(target, grad * (out > 0))
    numpy.testing.assert_allclose(grad_bias, (grad * (out > 0)).sum(axis=0), rtol=1e-6)
    assert kernels.registered()["relu_bias_backward"]._compiled == compiled
