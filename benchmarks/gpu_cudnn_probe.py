"""Can minikeras call cuDNN's convolutions, and would they pay? (issue 22)

CuPy 14 has no cuDNN, and minikeras's GPU convolutions are an im2col kernel
plus a cuBLAS GEMM: on an H200 the Fashion CNN's step was 1.61 ms of GPU
time against PyTorch's 0.86 (cuDNN), the CIFAR CNN's 6.09 against 1.71.
The GPU image has cuDNN 9 (``nvidia-cudnn-cu13``). This probe loads it with
ctypes, runs its legacy convolution API (forward, backward data, backward
filter) on channels-last float32 tensors for the layers of gpu_bench's two
CNNs, checks the results against PyTorch in float64, and times, per layer,
with CUDA events (median of 30 after 5 warm-ups):

- cuDNN's three calls, FMA math (no TF32), NHWC;
- PyTorch's conv2d forward + backward (float32, TF32 off, its default NCHW);
- minikeras's Conv op forward + backward: through cuDNN (device/cudnn.py),
  as by default (im2col + cuBLAS), and with ``MINIKERAS_CUDNN=1``.

    python3 benchmarks/gpu_cudnn_probe.py [--json out.json]

Without a CUDA device it says so and exits 0.
"""
import argparse
import ctypes
import glob
import json
import os
import sys

os.environ.setdefault("CUPY_TF32", "0")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

# (name, batch, height, width, in channels, out channels, padding)
LAYERS = [
    ("cnn.conv1", 128, 28, 28, 1, 32, "valid"),
    ("cnn.conv2", 128, 13, 13, 32, 64, "valid"),
    ("cifar.conv1", 128, 32, 32, 3, 32, "same"),
    ("cifar.conv2", 128, 32, 32, 32, 32, "valid"),
    ("cifar.conv3", 128, 15, 15, 32, 64, "same"),
    ("cifar.conv4", 128, 15, 15, 64, 64, "valid"),
]
FLOAT, NHWC, CROSS_CORRELATION, FMA_MATH = 0, 1, 1, 3


class AlgoPerf(ctypes.Structure):
    _fields_ = [("algo", ctypes.c_int), ("status", ctypes.c_int), ("time", ctypes.c_float),
                ("memory", ctypes.c_size_t), ("determinism", ctypes.c_int), ("mathType", ctypes.c_int),
                ("reserved", ctypes.c_int * 3)]


def load_cudnn():
    """(library, where it was found)."""
    tried = []
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib

        loaded = load_nvidia_dynamic_lib("cudnn")
        return ctypes.CDLL(loaded.abs_path), f"cuda.pathfinder: {loaded.abs_path}"
    except Exception as error:  # noqa: BLE001 - a probe reports every way it failed
        tried.append(f"cuda.pathfinder: {error!r}")
    try:
        import nvidia.cudnn

        for base in nvidia.cudnn.__path__:
            for path in sorted(glob.glob(os.path.join(base, "lib", "libcudnn.so*"))):
                return ctypes.CDLL(path), f"nvidia.cudnn: {path}"
    except Exception as error:  # noqa: BLE001
        tried.append(f"nvidia.cudnn: {error!r}")
    for name in ("libcudnn.so.9", "libcudnn.so"):
        try:
            return ctypes.CDLL(name), f"soname {name}"
        except OSError as error:
            tried.append(f"{name}: {error}")
    raise RuntimeError("cuDNN not found: " + "; ".join(tried))


class Cudnn:
    def __init__(self, lib, cupy):
        self.lib, self.cupy = lib, cupy
        lib.cudnnGetVersion.restype = ctypes.c_size_t
        lib.cudnnGetErrorString.restype = ctypes.c_char_p
        self.handle = ctypes.c_void_p()
        self.check(lib.cudnnCreate(ctypes.byref(self.handle)), "cudnnCreate")
        self.check(lib.cudnnSetStream(self.handle, ctypes.c_void_p(cupy.cuda.get_current_stream().ptr)),
                   "cudnnSetStream")

    def check(self, status, what):
        if status:
            raise RuntimeError(f"{what}: {self.lib.cudnnGetErrorString(status).decode()} ({status})")

    def tensor(self, n, h, w, c):
        desc = ctypes.c_void_p()
        self.check(self.lib.cudnnCreateTensorDescriptor(ctypes.byref(desc)), "cudnnCreateTensorDescriptor")
        self.check(self.lib.cudnnSetTensor4dDescriptor(desc, NHWC, FLOAT, n, c, h, w), "cudnnSetTensor4dDescriptor")
        return desc

    def filter(self, k, r, s, c):
        desc = ctypes.c_void_p()
        self.check(self.lib.cudnnCreateFilterDescriptor(ctypes.byref(desc)), "cudnnCreateFilterDescriptor")
        self.check(self.lib.cudnnSetFilter4dDescriptor(desc, FLOAT, NHWC, k, c, r, s), "cudnnSetFilter4dDescriptor")
        return desc

    def convolution(self, pad_h, pad_w):
        desc = ctypes.c_void_p()
        self.check(self.lib.cudnnCreateConvolutionDescriptor(ctypes.byref(desc)), "cudnnCreateConvolutionDescriptor")
        self.check(self.lib.cudnnSetConvolution2dDescriptor(desc, pad_h, pad_w, 1, 1, 1, 1, CROSS_CORRELATION, FLOAT),
                   "cudnnSetConvolution2dDescriptor")
        self.check(self.lib.cudnnSetConvolutionMathType(desc, FMA_MATH), "cudnnSetConvolutionMathType")
        return desc

    def best(self, kind, *descs):
        perf = (AlgoPerf * 8)()
        count = ctypes.c_int()
        name = {"fwd": "cudnnGetConvolutionForwardAlgorithm_v7",
                "bwd_data": "cudnnGetConvolutionBackwardDataAlgorithm_v7",
                "bwd_filter": "cudnnGetConvolutionBackwardFilterAlgorithm_v7"}[kind]
        self.check(getattr(self.lib, name)(self.handle, *descs, 8, ctypes.byref(count), perf), name)
        for p in perf[:count.value]:
            if p.status == 0:
                return p.algo, p.memory
        raise RuntimeError(f"{name}: no algorithm")


def ptr(array):
    return ctypes.c_void_p(array.data.ptr)


def timed(cupy, fn, warmup=5, reps=30):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop))
    times.sort()
    return times[len(times) // 2]


def probe_layer(cudnn, cupy, torch, layer):
    name, n, h, w, ci, co, padding = layer
    pad = 1 if padding == "same" else 0
    ho, wo = h + 2 * pad - 2, w + 2 * pad - 2
    rng = cupy.random.default_rng(0)
    x = rng.standard_normal((n, h, w, ci), dtype=cupy.float32)
    kernel = rng.standard_normal((3, 3, ci, co), dtype=cupy.float32) * 0.1
    dy = rng.standard_normal((n, ho, wo, co), dtype=cupy.float32)
    krsc = cupy.ascontiguousarray(kernel.transpose(3, 0, 1, 2))
    y, dx, dw = (cupy.empty((n, ho, wo, co), cupy.float32), cupy.empty_like(x), cupy.empty_like(krsc))
    xd, yd, wd, cd = cudnn.tensor(n, h, w, ci), cudnn.tensor(n, ho, wo, co), cudnn.filter(co, 3, 3, ci), \
        cudnn.convolution(pad, pad)
    fwd, fwd_ws = cudnn.best("fwd", xd, wd, cd, yd)
    bwd_d, bwd_d_ws = cudnn.best("bwd_data", wd, yd, cd, xd)
    bwd_f, bwd_f_ws = cudnn.best("bwd_filter", xd, yd, cd, wd)
    sizes = {}
    for kind, fn_name, algo, descs in (("fwd", "cudnnGetConvolutionForwardWorkspaceSize", fwd, (xd, wd, cd, yd)),
                                       ("bwd_data", "cudnnGetConvolutionBackwardDataWorkspaceSize", bwd_d,
                                        (wd, yd, cd, xd)),
                                       ("bwd_filter", "cudnnGetConvolutionBackwardFilterWorkspaceSize", bwd_f,
                                        (xd, yd, cd, wd))):
        size = ctypes.c_size_t()
        cudnn.check(getattr(cudnn.lib, fn_name)(cudnn.handle, *descs, algo, ctypes.byref(size)), fn_name)
        sizes[kind] = size.value
    workspace = cupy.empty(max(1, max(sizes.values())), cupy.uint8)
    one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
    lib, handle = cudnn.lib, cudnn.handle

    def run_cudnn():
        cudnn.check(lib.cudnnConvolutionForward(handle, ctypes.byref(one), xd, ptr(x), wd, ptr(krsc), cd, fwd,
                                                ptr(workspace), ctypes.c_size_t(sizes["fwd"]), ctypes.byref(zero),
                                                yd, ptr(y)), "cudnnConvolutionForward")
        cudnn.check(lib.cudnnConvolutionBackwardData(handle, ctypes.byref(one), wd, ptr(krsc), yd, ptr(dy), cd, bwd_d,
                                                     ptr(workspace), ctypes.c_size_t(sizes["bwd_data"]),
                                                     ctypes.byref(zero), xd, ptr(dx)), "cudnnConvolutionBackwardData")
        cudnn.check(lib.cudnnConvolutionBackwardFilter(handle, ctypes.byref(one), xd, ptr(x), yd, ptr(dy), cd, bwd_f,
                                                       ptr(workspace), ctypes.c_size_t(sizes["bwd_filter"]),
                                                       ctypes.byref(zero), wd, ptr(dw)),
                    "cudnnConvolutionBackwardFilter")

    run_cudnn()
    cupy.cuda.get_current_stream().synchronize()
    # float64 reference through PyTorch (NCHW).
    tx = torch.from_dlpack(x).double().permute(0, 3, 1, 2).contiguous().requires_grad_(True)
    tw = torch.from_dlpack(kernel).double().permute(3, 2, 0, 1).contiguous().requires_grad_(True)
    ty = torch.nn.functional.conv2d(tx, tw, padding=pad)
    ty.backward(torch.from_dlpack(dy).double().permute(0, 3, 1, 2))

    def rel(ours, ref):
        ours = torch.from_dlpack(ours).double()
        return float((ours - ref).norm() / ref.norm())

    errors = {"y": rel(y, ty.detach().permute(0, 2, 3, 1)), "dx": rel(dx, tx.grad.permute(0, 2, 3, 1)),
              "dw": rel(dw, tw.grad.permute(0, 2, 3, 1))}
    # PyTorch float32 forward + backward (its default layout, cuDNN inside).
    px = torch.randn(n, ci, h, w, device="cuda", requires_grad=True)
    pw = torch.randn(co, ci, 3, 3, device="cuda", requires_grad=True)
    pdy = torch.randn(n, co, ho, wo, device="cuda")

    def run_torch():
        out = torch.nn.functional.conv2d(px, pw, padding=pad)
        gx, gw = torch.autograd.grad(out, (px, pw), pdy)
        return gx, gw

    # minikeras's Conv op forward + backward.
    import minikeras as mk
    from minikeras.ops.nn.conv import conv_bias_relu

    with mk.device("gpu:0"):
        mx = mk.Tensor(x, requires_grad=True)
        mw = mk.Tensor(kernel, requires_grad=True)
        mdy = mk.Tensor(dy)

        def run_minikeras():
            mx.grad = mw.grad = None
            out = conv_bias_relu(mx, mw, None, False, 2, 1, padding, 1)
            out.backward(mdy)

        ms_im2col = timed(cupy, run_minikeras)  # the default: im2col + cuBLAS
        os.environ["MINIKERAS_CUDNN"] = "1"  # through minikeras/device/cudnn.py
        try:
            ms_minikeras = timed(cupy, run_minikeras)
        finally:
            os.environ.pop("MINIKERAS_CUDNN")
    return {"layer": name, "shape": [n, h, w, ci, co, padding], "algos": [fwd, bwd_d, bwd_f],
            "workspace": sizes, "rel_error": errors, "ms_cudnn": timed(cupy, run_cudnn),
            "ms_torch": timed(cupy, run_torch), "ms_minikeras": ms_minikeras, "ms_minikeras_im2col": ms_im2col}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    try:
        import cupy
        import torch

        if cupy.cuda.runtime.getDeviceCount() < 1 or not torch.cuda.is_available():
            raise RuntimeError("no CUDA device")
    except Exception as error:  # noqa: BLE001
        print(f"skipped: no CUDA device with CuPy and PyTorch ({error!r})")
        return 0
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    lib, where = load_cudnn()
    cudnn = Cudnn(lib, cupy)
    result = {"cudnn": where, "version": lib.cudnnGetVersion(), "layers": []}
    print(f"cuDNN {result['version']} from {where}", flush=True)
    # The statuses minikeras reads as out of memory (device/cuda_errors.py).
    result["statuses"] = {code: lib.cudnnGetErrorString(code).decode() for code in (2, 4003, 4004)}
    print(f"statuses: {result['statuses']}", flush=True)
    print(f"{'layer':<12} {'algos':<10} {'err y/dx/dw':<26} {'cuDNN ms':>9} {'torch ms':>9} {'mk cuDNN ms':>13} "
          f"{'mk im2col ms':>12}")
    for layer in LAYERS:
        try:
            row = probe_layer(cudnn, cupy, torch, layer)
        except Exception as error:  # noqa: BLE001
            row = {"layer": layer[0], "error": repr(error)}
            print(f"{layer[0]:<12} FAILED {error!r}", flush=True)
            result["layers"].append(row)
            continue
        result["layers"].append(row)
        errors = "/".join(f"{row['rel_error'][k]:.1e}" for k in ("y", "dx", "dw"))
        print(f"{row['layer']:<12} {str(row['algos']):<10} {errors:<26} {row['ms_cudnn']:>9.3f} "
              f"{row['ms_torch']:>9.3f} {row['ms_minikeras']:>13.3f} {row['ms_minikeras_im2col']:>12.3f}", flush=True)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(result, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
