"""Errors from an op's array work become the library's own (issue 27), on every device.

CuPy's CUDA errors are the simulated CuPy's (minikeras.testing.sim_cupy), with
CuPy 14's module paths, class names, bases, messages and attributes (checked
against the installed CuPy below, where it imports): one raised inside an op's forward or backward, or in work a
device runs outside any op, reaches the user as DeviceError (or, for the
codes meaning out of memory, ResourceExhaustedError) naming the device, the
op and what to try. A host allocation no machine can make
(``one_hot(x, 10**12)``) is ResourceExhaustedError too.
"""
import importlib.util
import inspect

import numpy
import pytest

import minikeras as mk
from minikeras.autograd import Function
from minikeras.device import cuda_errors
from minikeras.errors import DeviceError, ResourceExhaustedError

from minikeras.testing.sim_cupy.cuda.compiler import CompileException
from minikeras.testing.sim_cupy.cuda.runtime import CUDARuntimeError
from minikeras.testing.sim_cupy.simulation import CUBLASError

class Failing(Function):
    """An op whose forward (or backward) raises ``error``."""

    def __init__(self, error, in_backward=False):
        self.error, self.in_backward = error, in_backward

    def forward(self, x):
        if not self.in_backward:
            raise self.error
        return x * 1

    def backward(self, grad):
        raise self.error


def test_a_cublas_error_in_an_op_names_the_device_the_op_and_what_to_try():
    x = mk.tensor(numpy.ones(3, "float32"))
    device = x.device.canonical
    with pytest.raises(DeviceError) as caught:
        Failing(CUBLASError(13)).apply(x)
    error = caught.value
    assert (error.device, error.op, error.component, error.status) == (device, "Failing", "cuBLAS", 13)
    assert str(error).startswith(f"Failing on {device} failed: cuBLAS error CUBLAS_STATUS_EXECUTION_FAILED.")
    assert "What to try: rerun with CUDA_LAUNCH_BLOCKING=1" in str(error)
    assert isinstance(error.__cause__, CUBLASError)


def test_a_cuda_fault_in_backward_names_the_gradient_and_says_the_context_is_lost():
    x = mk.tensor(numpy.ones(3, "float32"), requires_grad=True)
    y = Failing(CUDARuntimeError(700), in_backward=True).apply(x)
    with pytest.raises(DeviceError, match=r"the gradient of Failing on /device:[CG]PU:0 failed: CUDA runtime error "
                                          r"cudaErrorIllegalAddress.*restart the process"):
        y.sum().backward()


def test_a_kernel_that_does_not_compile_points_at_the_cuda_toolkit_wheels():
    x = mk.tensor(numpy.ones(3, "float32"))
    with pytest.raises(DeviceError, match="NVRTC error .*nvidia-cuda-nvrtc-cu12") as caught:
        Failing(CompileException("error: identifier 'y' is undefined", "y;", "kernel", ())).apply(x)
    assert caught.value.status is None


@pytest.mark.parametrize("error", [CUBLASError(3), CUDARuntimeError(2)], ids=["cublas", "runtime"])
def test_cuda_out_of_memory_codes_are_resource_exhausted(error):
    x = mk.tensor(numpy.ones(3, "float32"))
    with pytest.raises(ResourceExhaustedError, match=r"Out of memory on /device:[CG]PU:0.*Failing on"):
        Failing(error).apply(x)


def test_a_host_allocation_no_machine_can_make_is_resource_exhausted():
    with pytest.raises(ResourceExhaustedError,
                       match="asked for 4000000000000 bytes.*zeros could not allocate") as caught:
        mk.ops.zeros((10**12,))
    assert caught.value.requested == 4 * 10**12
    with pytest.raises(ResourceExhaustedError, match="Repeat could not allocate"):
        mk.ops.repeat(mk.tensor(numpy.ones(3, "float32")), 10**12)


def test_a_size_past_64_bits_says_so_rather_than_asking_for_0_bytes():
    # NumPy's "array is too big" names no size: the error says why instead of "asked for 0 bytes".
    with pytest.raises(ResourceExhaustedError) as caught:
        mk.ops.zeros((2**40, 2**40))
    message = str(caught.value)
    assert "asked for 0 bytes" not in message and caught.value.requested is None
    assert "asked for an allocation of unknown size" in message and "does not fit in 64 bits" in message
    assert "zeros could not allocate" in message


def test_a_weight_too_large_to_initialize_is_resource_exhausted_naming_the_weight():
    layer = mk.layers.Dense(10**7)
    with pytest.raises(ResourceExhaustedError, match=r"asked for [1-9]\d* bytes.*the initializer of weight "
                                                     r"'dense(_\d+)?/kernel' could not allocate") as caught:
        layer.build((None, 10**6))
    assert caught.value.requested >= 4 * 10**13
    assert not layer.weights  # nothing half-made: a smaller layer can be built after


def test_a_pool_allocators_out_of_memory_names_the_op_once():
    # A GPU pool's allocator raises ResourceExhaustedError inside the op's
    # work, knowing no op (on an H200: "asked for ... the device's capacity."
    # and nothing more): the op adds its name and advice, keeping the detail.
    x = mk.tensor(numpy.ones(3, "float32"))
    raised = ResourceExhaustedError("/device:GPU:0", 1024, 512, 2048, "The memory is fragmented.")
    with pytest.raises(ResourceExhaustedError) as caught:
        Failing(raised).apply(x)
    error = caught.value
    assert (error.requested, error.in_use, error.limit, error.op) == (1024, 512, 2048, "Failing")
    assert str(error) == ("Out of memory on /device:GPU:0: asked for 1024 bytes with 512 bytes in use, limit 2048 "
                          "bytes. Failing could not allocate its result. Check the sizes passed to Failing (a shape, "
                          "a depth or a repeat count far larger than intended?), or use a smaller batch. The memory "
                          "is fragmented.")
    assert error.__cause__ is None and error.__suppress_context__


def test_other_errors_pass_unchanged():
    x = mk.tensor(numpy.ones(3, "float32"))
    with pytest.raises(KeyError):
        Failing(KeyError("a bug to fix where it is raised")).apply(x)
    assert cuda_errors.translate(RuntimeError("not CuPy's"), x.device, "op") is None


def test_the_fakes_match_the_installed_cupy():
    """Where CuPy imports (no GPU needed), its classes have the names, bases and
    attributes the fakes and cuda_errors.CUPY_ERRORS assume."""
    pytest.importorskip("cupy")
    from cupy.cuda import compiler
    from cupy_backends.cuda.api import runtime

    for real, fake in ((runtime.CUDARuntimeError, CUDARuntimeError), (compiler.CompileException, CompileException)):
        assert (real.__module__, real.__name__) == (fake.__module__, fake.__name__)
        assert (real.__module__, real.__name__) in cuda_errors.CUPY_ERRORS
        assert real.__mro__[1] is fake.__mro__[1]  # RuntimeError / Exception
    assert runtime.CUDARuntimeError(700).status == 700
    assert str(runtime.CUDARuntimeError(700)).startswith("cudaErrorIllegalAddress")
    assert list(inspect.signature(compiler.CompileException).parameters) == \
        list(inspect.signature(CompileException).parameters)
    # cuBLAS loads libcublas on import: check only that the module CUPY_ERRORS names exists.
    assert importlib.util.find_spec("cupy_backends.cuda.libs.cublas") is not None
    assert cuda_errors.component(runtime.CUDARuntimeError(700)) == "CUDA runtime"


def test_cudnn_errors_name_cudnn_and_its_out_of_memory_is_resource_exhausted():
    from minikeras.device.cudnn import CudnnError

    x = mk.tensor(numpy.ones(3, "float32"))
    with pytest.raises(DeviceError, match=r"Failing on /device:[CG]PU:0 failed: cuDNN error cuDNN's "
                                          r"cudnnConvolutionForward failed") as caught:
        Failing(CudnnError("cuDNN's cudnnConvolutionForward failed: CUDNN_STATUS_BAD_PARAM", 2000)).apply(x)
    assert (caught.value.component, caught.value.status) == ("cuDNN", 2000)
    with pytest.raises(ResourceExhaustedError, match=r"cuDNN could not allocate its workspace in Failing"):
        Failing(CudnnError("CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED", 4004)).apply(x)
