"""The ctypes boundary of cuDNN and cuBLAS (issue 33's ctypes audit).

minikeras holds the C prototype of every function it calls
(``SIGNATURES``; ``device/native.declare`` sets their restypes); the
simulated libraries hold their own reading of the headers (``PROTOTYPES``)
and check every call against it as ctypes passes it
(sim_cupy/libs/_boundary.py); benchmarks/ctypes_audit.py
checks both against the vendors' headers (CUDA 13, cuDNN 9.28, cuBLAS
13.10). Each fix that audit led to has a test here that fails without it.
"""
import ctypes

import pytest

from minikeras.device import cublas_direct, cuda_errors, cudnn, cudnn_graph, native
from minikeras.errors import DeviceError
from minikeras.testing.sim_cupy.cuda.runtime import CUDARuntimeError
from minikeras.testing.sim_cupy.libs import _boundary, cublas as sim_cublas, cudnn as sim


def _fresh(module, library_name):
    """An undeclared copy of a double's library (the shared one is declared by the first use)."""
    import inspect

    functions = {name: inspect.unwrap(getattr(module.library, name)) for name in module.PROTOTYPES}
    return _boundary.library(library_name, functions, module.PROTOTYPES)


# ---------------------------------------------------------------- prototypes

@pytest.mark.parametrize("ours, theirs", [(cudnn.SIGNATURES, sim.PROTOTYPES),
                                          (cublas_direct.SIGNATURES, sim_cublas.PROTOTYPES)])
def test_minikeras_declares_what_the_doubles_check(ours, theirs):
    assert set(ours) == set(theirs)
    for name, (restype, argtypes) in ours.items():
        assert _boundary.kind(restype) == _boundary.kind(theirs[name][0]), name
        assert [_boundary.kind(t) for t in argtypes] == [_boundary.kind(t) for t in theirs[name][1]], name


def test_using_a_library_declares_its_return_types(simulated_gpu, monkeypatch):
    monkeypatch.setenv("MINIKERAS_CUDNN", "1")
    simulated_gpu.convolutions()
    assert sim.library.cudnnGetErrorString.restype is ctypes.c_char_p
    assert sim.library.cudnnGetVersion.restype is ctypes.c_size_t
    assert sim.library.cudnnBackendSetAttribute.argtypes is None  # ctypes' default conversion (native.py)
    with simulated_gpu.activate():
        library = cublas_direct._library(simulated_gpu.xp)
    assert library.cublasGemmEx.restype is ctypes.c_int


def test_a_pointer_returned_through_the_default_int_is_refused():
    library = _fresh(sim, "cuDNN")  # undeclared: ctypes would truncate cudnnGetErrorString's char* to an int
    with pytest.raises(RuntimeError, match="returns c_char_p in C, but its restype is c_int"):
        library.cudnnGetErrorString(2000)
    native.declare(library, cudnn.SIGNATURES)
    assert library.cudnnGetErrorString(2000) == b"CUDNN_STATUS_BAD_PARAM"


def test_declare_sets_a_real_ctypes_librarys_return_types_once():
    libc = ctypes.CDLL(None)
    signatures = {"labs": (ctypes.c_long, (ctypes.c_long,))}
    assert native.declare(libc, signatures) is libc
    assert libc.labs.restype is ctypes.c_long and libc.labs(ctypes.c_long(-(2**40))) == 2**40  # 64 bits back
    libc.labs.restype = ctypes.c_int
    native.declare(libc, signatures)  # already declared with this table: left as is
    assert libc.labs.restype is ctypes.c_int


def test_an_undeclared_python_int_for_a_64_bit_parameter_is_refused():
    library = native.declare(_fresh(sim, "cuDNN"), cudnn.SIGNATURES)
    descriptor = ctypes.c_void_p()
    assert library.cudnnBackendCreateDescriptor(sim.TENSOR, ctypes.byref(descriptor)) == sim.SUCCESS
    values = (ctypes.c_int64 * 1)(16)
    with pytest.raises(RuntimeError, match="Python int 1 as argument 3 while undeclared"):
        library.cudnnBackendSetAttribute(descriptor, 900, sim.INT64, 1, values)  # the count is int64_t
    assert library.cudnnBackendSetAttribute(descriptor, 900, sim.INT64, ctypes.c_int64(1), values) == sim.SUCCESS


def test_a_declaration_other_than_the_prototype_is_refused():
    library = native.declare(_fresh(sim_cublas, "cuBLAS"), cublas_direct.SIGNATURES)
    argtypes = list(sim_cublas.PROTOTYPES["cublasGemmStridedBatchedEx"][1])
    argtypes[10] = ctypes.c_int  # strideA as int: cuBLAS reads long long
    library.cublasGemmStridedBatchedEx.argtypes = argtypes
    with pytest.raises(RuntimeError, match="was declared with argtypes"):
        library.cublasGemmStridedBatchedEx(*[0] * len(argtypes))


def test_a_wrong_argument_count_or_a_truncated_int_is_refused():
    library = native.declare(_fresh(sim_cublas, "cuBLAS"), cublas_direct.SIGNATURES)
    with pytest.raises(RuntimeError, match="was given 18 arguments; its C prototype takes 19"):
        library.cublasGemmEx(*[0] * 18)
    arguments = [None, 0, 0, 2**31, 1, 1] + [None] * 13
    with pytest.raises(RuntimeError, match="argument 3 is 2147483648, which its 32-bit C int parameter truncates"):
        library.cublasGemmEx(*arguments)


# ---------------------------------------------------------------- fixes the audit led to

def test_a_boolean_attribute_is_set_as_one_byte_elements():
    # CUDNN_TYPE_BOOLEAN is a C++ bool: cudnn_graph set it as a 4-byte C int before the audit.
    assert ctypes.sizeof(cudnn_graph.ELEMENT_TYPES[cudnn_graph.TYPE_BOOLEAN]) == 1
    builder = cudnn_graph.Builder(sim.library, lambda status, call: None)
    tensor = builder.create(cudnn_graph.TENSOR)
    builder.set(tensor, 907, cudnn_graph.TYPE_BOOLEAN, [False])  # CUDNN_ATTR_TENSOR_IS_VIRTUAL
    assert sim._objects[tensor.value]["attributes"][907] == [False]
    builder.destroy(builder.made)


def _set(descriptor, name, kind, values):
    return sim.library.cudnnBackendSetAttribute(descriptor, name, kind, ctypes.c_int64(len(values)), values)


def _create(kind):
    descriptor = ctypes.c_void_p()
    assert sim.library.cudnnBackendCreateDescriptor(kind, ctypes.byref(descriptor)) == sim.SUCCESS
    return descriptor


def test_the_variant_packs_intermediates_are_pointers():
    # cudnn_graph.h: CUDNN_ATTR_VARIANT_PACK_INTERMEDIATES (CUDNN_TYPE_VOID_PTR, 0+ elements); the double took INT64.
    pack = _create(sim.VARIANT_PACK)
    assert _set(pack, 1002, sim.VOID_PTR, (ctypes.c_void_p * 2)(0x1000, 0x2000)) == sim.SUCCESS
    assert _set(pack, 1002, sim.INT64, (ctypes.c_int64 * 1)(0x1000)) == sim.ATTRIBUTE_TYPE
    sim.library.cudnnBackendDestroyDescriptor(pack)


def test_counts_follow_cudnn_graph_h():
    # Dilations and the like take 1..CUDNN_DIM_MAX (8) elements, alpha and beta "1+": the double took 1..3 and 1.
    convolution, operation = _create(sim.CONVOLUTION), _create(sim.FORWARD)
    assert _set(convolution, 102, sim.INT64, (ctypes.c_int64 * 4)(1, 1, 1, 1)) == sim.SUCCESS
    assert _set(convolution, 102, sim.INT64, (ctypes.c_int64 * 9)(*[1] * 9)) == sim.BAD_PARAM
    assert _set(operation, 700, sim.FLOAT, (ctypes.c_float * 2)(1.0, 1.0)) == sim.SUCCESS
    assert _set(operation, 700, sim.FLOAT, (ctypes.c_float * 0)()) == sim.BAD_PARAM
    for descriptor in (convolution, operation):
        sim.library.cudnnBackendDestroyDescriptor(descriptor)


def test_the_simulated_cublas_takes_cublas_13s_autotune_algorithm(simulated_gpu):
    import numpy

    with simulated_gpu.activate():
        xp = simulated_gpu.xp
        a, b, c = xp.ones((2, 4), numpy.float32), xp.ones((4, 3), numpy.float32), xp.zeros((2, 3), numpy.float32)
        handle = cublas_direct._handle(xp, False)
        alpha, beta = ctypes.c_float(1.0), ctypes.c_float(0.0)
        library = cublas_direct._library(xp)

        def gemm(algo):
            return library.cublasGemmEx(
                ctypes.c_void_p(handle), 0, 0, 3, 2, 4, ctypes.byref(alpha), ctypes.c_void_p(b.data.ptr),
                sim_cublas.CUDA_R_32F, 3, ctypes.c_void_p(a.data.ptr), sim_cublas.CUDA_R_32F, 4, ctypes.byref(beta),
                ctypes.c_void_p(c.data.ptr), sim_cublas.CUDA_R_32F, 3, sim_cublas.COMPUTE_32F, algo)

        assert gemm(999) == 0  # CUBLAS_GEMM_AUTOTUNE (cublas_api.h, cuBLAS 13)
        assert gemm(998) == 7  # no such algorithm: CUBLAS_STATUS_INVALID_VALUE
        assert simulated_gpu.to_host(c).tolist() == [[4.0] * 3] * 2


class _Device:
    canonical = "/device:GPU:0"


@pytest.mark.parametrize("code, sticky", [(226, True), (700, True), (702, True), (719, True), (911, True),
                                          (701, False), (720, False)])
def test_only_the_errors_cuda_documents_as_fatal_say_restart(code, sticky):
    # driver_types.h: 226 (contained) and 911 (external device) leave "the process in an inconsistent
    # state"; 701 (launch out of resources) and 720 (cooperative launch too large) never started.
    error = cuda_errors.translate(CUDARuntimeError(code), _Device(), "Conv2D")
    assert isinstance(error, DeviceError)
    assert ("restart the process" in str(error)) is sticky
