"""Convolutions through cuDNN (minikeras/device/cudnn.py) against the im2col
path, on every device: float32 forward and gradients (cuDNN's forward pass
and input gradient; the kernel's gradient cuDNN's atomic engine's by
default, im2col's with op determinism), taken by cuDNN where
the device has it (a real GPU; on the simulated CuPy, device/cudnn.py's
ctypes calls against its cuDNN double, sim_cupy/libs/cudnn.py), against the
float64 im2col path of the same device
(cuDNN takes float32 only). On the CPU both are im2col, and cuDNN is never
asked. cuDNN is opt-in (``MINIKERAS_CUDNN=1``, set here)."""
import numpy
import pytest

import minikeras as mk
from minikeras.device import cudnn, default_device, determinism
from minikeras.ops.nn.conv import conv_bias_relu


@pytest.fixture(autouse=True)
def _cudnn_asked_for(monkeypatch):
    monkeypatch.setenv("MINIKERAS_CUDNN", "1")


class _Counting:
    """A device's Convolutions that counts its calls."""

    def __init__(self, inner):
        self.inner, self.calls = inner, []

    def usable(self, xp, spec):
        return self.inner.usable(xp, spec)

    def filter_gradient_usable(self, xp, spec):
        return self.inner.filter_gradient_usable(xp, spec)

    def __getattr__(self, name):
        method = getattr(self.inner, name)

        def call(*args):
            self.calls.append(name)
            return method(*args)

        return call


def _run(x, kernel, bias, relu, rank, strides, padding, dilation, dtype):
    tensors = [mk.Tensor(a.astype(dtype), requires_grad=True) for a in (x, kernel, bias)]
    out = conv_bias_relu(*tensors, relu=relu, rank=rank, strides=strides, padding=padding, dilation_rate=dilation)
    seed = numpy.random.default_rng(1).standard_normal(out.shape)
    out.backward(mk.tensor(seed.astype(dtype)))
    return [out.numpy()] + [t.grad.numpy() for t in tensors]


@pytest.mark.parametrize("deterministic", [False, True])
@pytest.mark.parametrize("x_shape, kernel_shape, strides, padding, dilation, relu, symmetric", [
    ((2, 9, 9, 3), (3, 3, 3, 4), 1, "valid", 1, True, True),
    ((2, 8, 8, 5), (3, 3, 5, 6), 1, "same", 1, False, True),
    ((2, 9, 9, 3), (3, 3, 3, 4), 2, "same", 1, True, True),       # total padding 2: one on each side
    ((2, 8, 8, 3), (3, 3, 3, 4), 2, "same", 1, True, False),      # total padding 1: TensorFlow pads bottom/right
    ((2, 9, 11, 2), (3, 2, 2, 3), (2, 1), "valid", 1, False, True),
    ((2, 10, 10, 2), (3, 3, 2, 3), 1, "same", 2, True, True),     # dilated
    ((3, 12, 4), (3, 4, 5), 1, "same", 1, True, True),            # conv1d: height 1
    ((3, 12, 4), (3, 4, 5), 1, "causal", 1, True, False),         # causal padding is one-sided
])
def test_cudnn_convolution_matches_the_im2col_path(x_shape, kernel_shape, strides, padding, dilation, relu,
                                                   symmetric, deterministic, rng, monkeypatch):
    monkeypatch.setattr(determinism, "_state", {"enabled": deterministic})
    device = default_device()
    counting = None if device.convolutions() is None else _Counting(device.convolutions())
    assert counting is not None or device.kind == "cpu" or not cudnn.enabled()
    monkeypatch.setattr(device, "convolutions", lambda: counting)
    x, kernel = rng.standard_normal(x_shape), rng.standard_normal(kernel_shape) * 0.3
    bias = rng.standard_normal(kernel_shape[-1])
    rank = len(x_shape) - 2
    fast = _run(x, kernel, bias, relu, rank, strides, padding, dilation, "float32")
    exact = _run(x, kernel, bias, relu, rank, strides, padding, dilation, "float64")
    for name, got, want in zip(("output", "grad x", "grad kernel", "grad bias"), fast, exact):
        assert got.dtype == numpy.float32
        numpy.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4, err_msg=name)
    if counting is not None:  # a GPU: cuDNN took the float32 convolution, and only it
        # The kernel's gradient is cuDNN's atomic engine's unless determinism is on (then im2col).
        expected = (["forward", "backward_data"] if deterministic else ["forward", "backward_filter", "backward_data"]
                    ) if symmetric else []
        assert counting.calls == expected


def test_an_empty_batch_skips_cudnn(rng, monkeypatch):
    """cuDNN's descriptors refuse a zero dimension (CUDNN_STATUS_BAD_PARAM, on an H200)."""
    device = default_device()
    asked = []
    monkeypatch.setattr(device, "convolutions", lambda: asked.append(1))
    out = _run(numpy.zeros((0, 5, 5, 3)), rng.standard_normal((3, 3, 3, 2)), rng.standard_normal(2), True, 2, 1,
               "same", 1, "float32")
    assert out[0].shape == (0, 5, 5, 2) and not asked


def test_cudnn_is_not_asked_for_1x1_convolutions_or_float64(rng, monkeypatch):
    device = default_device()
    asked = []
    monkeypatch.setattr(device, "convolutions", lambda: asked.append(1))
    for dtype, window in (("float32", (1, 1)), ("float64", (3, 3))):
        _run(rng.standard_normal((2, 5, 5, 3)), rng.standard_normal(window + (3, 2)), rng.standard_normal(2),
             True, 2, 1, "same", 1, dtype)
    assert len(asked) == 1  # the float64 one asked, and went to im2col (float32 only)


def test_a_spec_keeps_only_padding_cudnn_can_express():
    from minikeras.ops.nn.sliding_window import WindowGeometry

    same_odd = WindowGeometry("conv2d", (1, 9, 9, 3), (3, 3), (2, 2), (1, 1), "same")  # pads (1, 1)
    same_even = WindowGeometry("conv2d", (1, 8, 8, 3), (3, 3), (2, 2), (1, 1), "same")  # pads (0, 1)
    spec = cudnn.spec_for(same_odd, 4)
    assert spec.pads == (1, 1) and spec.out == (5, 5) and spec.filters == 4
    assert cudnn.spec_for(same_even, 4) is None
    explicit = WindowGeometry("conv2d", (1, 8, 8, 3), (3, 3), (1, 1), (1, 1), ((2, 2), (0, 0)))
    assert cudnn.spec_for(explicit, 4).pads == (2, 0)


def test_cudnn_is_opt_in(monkeypatch):
    monkeypatch.delenv("MINIKERAS_CUDNN")
    assert cudnn.for_device(default_device().xp, 0) is None and not cudnn.enabled()
    assert default_device().convolutions() is None
    monkeypatch.setenv("MINIKERAS_CUDNN", "0")
    assert not cudnn.enabled()
