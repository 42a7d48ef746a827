"""cuDNN 9 at the boundary ``minikeras.device.cudnn`` calls it through
ctypes: handles, tensor/filter/convolution descriptors, the heuristics and
workspace queries, ``cudnnConvolutionForward`` and
``cudnnConvolutionBackwardData``.

The descriptors hold what cuDNN's hold, and the convolutions read and write
the device memory the pointers name *as the descriptors describe it*
(channels-last float32, packed): an array of another layout, dtype or size
is misread as on a GPU, and a pointer outside a live allocation is refused
(an illegal address there). What cuDNN refuses is refused with its status:
a zero or negative dimension, stride or dilation
(``CUDNN_STATUS_BAD_PARAM``, as an empty batch met on an H200), an output
descriptor that does not match the convolution, a workspace smaller than
asked. Each call runs on the handle's stream (``cudnnSetStream``) as one
kernel: ordered, raced, counted, captured.

The arithmetic is written apart from the library's im2col path (windows of
the padded input, one tensordot per call), so the suite compares two
implementations.
"""
import itertools
import types

import numpy
from numpy.lib.stride_tricks import sliding_window_view

from minikeras.testing.sim_cupy import _calls
from minikeras.testing.sim_cupy.cuda import memory, stream as stream_module

VERSION = 91900
SUCCESS, NOT_INITIALIZED, BAD_PARAM, NOT_SUPPORTED = 0, 1001, 2000, 3000
_FLOAT, _NHWC = 0, 1
DEFAULT_MATH, TENSOR_OP_MATH, TENSOR_OP_MATH_ALLOW_CONVERSION, FMA_MATH = 0, 1, 2, 3  # cudnnMathType_t
_MESSAGES = {SUCCESS: b"CUDNN_STATUS_SUCCESS", NOT_INITIALIZED: b"CUDNN_STATUS_NOT_INITIALIZED",
             BAD_PARAM: b"CUDNN_STATUS_BAD_PARAM", NOT_SUPPORTED: b"CUDNN_STATUS_NOT_SUPPORTED"}
_WORKSPACE = 4096  # bytes each algorithm asks for

_ids = itertools.count(0xC0000, 0x10)
_objects = {}  # handle or descriptor -> its state


def _value(argument):
    return argument if isinstance(argument, int) else (getattr(argument, "value", argument) or 0)


def _create(kind):
    def create(out):
        pointer = next(_ids)
        _objects[pointer] = {"kind": kind}
        out._obj.value = pointer
        return SUCCESS

    return create


def _get(argument, kind):
    state = _objects.get(_value(argument))
    return state if state is not None and state["kind"] == kind else None


def cudnnGetVersion():
    return VERSION


def cudnnGetErrorString(status):
    return _MESSAGES.get(status, b"CUDNN_STATUS_UNKNOWN")


cudnnCreate = _create("handle")
cudnnCreateTensorDescriptor = _create("tensor")
cudnnCreateFilterDescriptor = _create("filter")
cudnnCreateConvolutionDescriptor = _create("convolution")


def cudnnSetStream(handle, stream):
    state = _get(handle, "handle")
    if state is None:
        return NOT_INITIALIZED
    state["stream"] = _value(stream)
    return SUCCESS


def _set_4d(kind, argument, layout, dtype, dims):
    state = _get(argument, kind)
    if state is None or layout not in (0, 1) or any(int(d) <= 0 for d in dims):
        return BAD_PARAM
    if layout != _NHWC or dtype != _FLOAT:
        return NOT_SUPPORTED  # what this double models: channels-last float32
    state["dims"] = tuple(int(d) for d in dims)
    return SUCCESS


def cudnnSetTensor4dDescriptor(descriptor, layout, dtype, n, c, h, w):
    return _set_4d("tensor", descriptor, layout, dtype, (n, c, h, w))


def cudnnSetFilter4dDescriptor(descriptor, dtype, layout, k, c, h, w):
    return _set_4d("filter", descriptor, layout, dtype, (k, c, h, w))


def cudnnSetConvolution2dDescriptor(descriptor, pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w, mode, dtype):
    state = _get(descriptor, "convolution")
    if state is None or min(stride_h, stride_w, dilation_h, dilation_w) <= 0 or min(pad_h, pad_w) < 0:
        return BAD_PARAM
    state.update(pads=(pad_h, pad_w), strides=(stride_h, stride_w), dilation=(dilation_h, dilation_w))
    return SUCCESS


def cudnnSetConvolutionMathType(descriptor, math_type):
    """Kept on the descriptor (``state["math"]``): ``CUDNN_DEFAULT_MATH`` and
    the tensor-op types let a float32 convolution use TF32 on an Ampere or
    newer GPU (this one: compute capability 9.0), ``CUDNN_FMA_MATH`` does not."""
    state = _get(descriptor, "convolution")
    if state is None or _value(math_type) not in (DEFAULT_MATH, TENSOR_OP_MATH, TENSOR_OP_MATH_ALLOW_CONVERSION,
                                                  FMA_MATH):
        return BAD_PARAM
    state["math"] = _value(math_type)
    return SUCCESS


def _inputs(conv, *arrays):
    """The convolution's float32 inputs as its math type reads them: rounded
    to TF32 unless the math type is ``CUDNN_FMA_MATH``."""
    if conv.get("math", DEFAULT_MATH) == FMA_MATH:
        return arrays
    from minikeras.testing.sim_cupy.libs.cublas import to_tf32

    return tuple(to_tf32(array) for array in arrays)


def _geometry(x, f, conv, y):
    """``(x dims, filter dims, convolution, y dims)`` when they agree, else None."""
    x, f, conv, y = _get(x, "tensor"), _get(f, "filter"), _get(conv, "convolution"), _get(y, "tensor")
    if None in (x, f, conv, y) or "dims" not in x or "dims" not in f or "dims" not in y or "pads" not in conv:
        return None
    n, c, h, w = x["dims"]
    k, fc, kh, kw = f["dims"]
    (ph, pw), (sh, sw), (dh, dw) = conv["pads"], conv["strides"], conv["dilation"]
    out = (n, k, (h + 2 * ph - (kh - 1) * dh - 1) // sh + 1, (w + 2 * pw - (kw - 1) * dw - 1) // sw + 1)
    if fc != c or y["dims"] != out:
        return None
    return x["dims"], f["dims"], conv, y["dims"]


def _heuristic(order):
    def heuristic(handle, first, second, conv, last, requested, count, results):
        arguments = dict(zip(order, (first, second, last)))
        if _get(handle, "handle") is None:
            return NOT_INITIALIZED
        if _geometry(arguments["x"], arguments["filter"], conv, arguments["y"]) is None or requested < 1:
            return BAD_PARAM
        results[0].algo, results[0].status, results[0].time = 1, SUCCESS, 0.01
        results[0].memory, results[0].determinism, results[0].mathType = _WORKSPACE, 1, 0
        count._obj.value = 1
        return SUCCESS

    return heuristic


def _workspace(order):
    def workspace(handle, first, second, conv, last, algorithm, size):
        arguments = dict(zip(order, (first, second, last)))
        if _geometry(arguments["x"], arguments["filter"], conv, arguments["y"]) is None or algorithm != 1:
            return BAD_PARAM
        size._obj.value = _WORKSPACE
        return SUCCESS

    return workspace


_FORWARD_ORDER = ("x", "filter", "y")
_BACKWARD_ORDER = ("filter", "y", "x")
cudnnGetConvolutionForwardAlgorithm_v7 = _heuristic(_FORWARD_ORDER)
cudnnGetConvolutionForwardWorkspaceSize = _workspace(_FORWARD_ORDER)
cudnnGetConvolutionBackwardDataAlgorithm_v7 = _heuristic(_BACKWARD_ORDER)
cudnnGetConvolutionBackwardDataWorkspaceSize = _workspace(_BACKWARD_ORDER)


def _tensor(pointer, shape):
    """The packed float32 tensor of ``shape`` at ``pointer``, and its block."""
    count = int(numpy.prod(shape))
    block, _ = memory._block_at(_value(pointer), count * 4)
    return memory._host_view(_value(pointer), count, numpy.float32).reshape(shape), block


def _windows(x, kernel_hw, conv, out_hw):
    """(N, Ho, Wo, C, kh, kw) windows of the input padded on both sides."""
    (ph, pw), (sh, sw), (dh, dw) = conv["pads"], conv["strides"], conv["dilation"]
    (kh, kw), (ho, wo) = kernel_hw, out_hw
    padded = numpy.pad(x, ((0, 0), (ph, ph), (pw, pw), (0, 0)))
    windows = sliding_window_view(padded, ((kh - 1) * dh + 1, (kw - 1) * dw + 1), axis=(1, 2))
    return windows[:, ::sh, ::sw, :, ::dh, ::dw][:, :ho, :wo]


def _run(name, handle, arguments, workspace, workspace_bytes, compute):
    state = _get(handle, "handle")
    if state is None:
        return NOT_INITIALIZED
    if workspace_bytes < _WORKSPACE:
        return BAD_PARAM
    stream = stream_module._from_pointer(state.get("stream", 0))
    if stream is None or stream.ptr in (0, 1):
        raise RuntimeError(f"Simulated cuDNN: {name} on the legacy default stream (cudnnSetStream was not called).")
    work_block, _ = memory._block_at(_value(workspace), _WORKSPACE)
    reads, writes, run = compute()
    _calls.issue(stream, name, reads, writes + [work_block], run)
    return SUCCESS


def cudnnConvolutionForward(handle, alpha, x_desc, x, w_desc, w, conv_desc, algorithm, workspace, workspace_bytes,
                            beta, y_desc, y):
    geometry = _geometry(x_desc, w_desc, conv_desc, y_desc)
    if geometry is None:
        return BAD_PARAM
    (n, c, h, wd), (k, _, kh, kw), conv, (_, _, ho, wo) = geometry

    def compute():
        images, image_block = _tensor(x, (n, h, wd, c))
        kernel, kernel_block = _tensor(w, (k, kh, kw, c))
        out, out_block = _tensor(y, (n, ho, wo, k))

        def run():
            read_images, read_kernel = _inputs(conv, images, kernel)
            windows = _windows(read_images, (kh, kw), conv, (ho, wo))  # (N, Ho, Wo, C, kh, kw) x (K, kh, kw, C)
            out[...] = numpy.tensordot(windows, read_kernel, axes=([3, 4, 5], [3, 1, 2]))

        return [image_block, kernel_block], [out_block], run

    return _run("cudnnConvolutionForward", handle, None, workspace, _value(workspace_bytes), compute)


def cudnnConvolutionBackwardData(handle, alpha, w_desc, w, dy_desc, dy, conv_desc, algorithm, workspace,
                                 workspace_bytes, beta, dx_desc, dx):
    geometry = _geometry(dx_desc, w_desc, conv_desc, dy_desc)
    if geometry is None:
        return BAD_PARAM
    (n, c, h, wd), (k, _, kh, kw), conv, (_, _, ho, wo) = geometry
    (ph, pw), (sh, sw), (dh, dw) = conv["pads"], conv["strides"], conv["dilation"]

    def compute():
        kernel, kernel_block = _tensor(w, (k, kh, kw, c))
        grad, grad_block = _tensor(dy, (n, ho, wo, k))
        out, out_block = _tensor(dx, (n, h, wd, c))

        def run():
            read_kernel, read_grad = _inputs(conv, kernel, grad)
            padded = numpy.zeros((n, h + 2 * ph, wd + 2 * pw, c), numpy.float32)
            for i in range(kh):
                for j in range(kw):
                    rows = slice(i * dh, i * dh + sh * (ho - 1) + 1, sh)
                    cols = slice(j * dw, j * dw + sw * (wo - 1) + 1, sw)
                    padded[:, rows, cols, :] += read_grad @ read_kernel[:, i, j, :]
            out[...] = padded[:, ph:ph + h, pw:pw + wd]

        return [kernel_block, grad_block], [out_block], run

    return _run("cudnnConvolutionBackwardData", handle, None, workspace, _value(workspace_bytes), compute)


library = types.SimpleNamespace(**{name: value for name, value in list(globals().items())
                                   if name.startswith("cudnn") and callable(value)})
