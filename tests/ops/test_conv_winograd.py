"""Tests for the CPU's Winograd F(2x2, 3x3) convolutions (ops/nn/winograd.py)
and the choice between them and im2col (ops/nn/conv_algorithm.py).

Every gradient check forces the algorithm (``tuning.CONV_ALGORITHM``) and
asserts that the op really took it, so a silent fall-back to im2col fails.
The references are test_conv.py's direct loops; PyTorch is a second one."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from minikeras.backend import threads, tuning
from minikeras.device import default_device
from minikeras.ops.nn import conv_algorithm, winograd
from minikeras.ops.nn.conv import Conv, conv_bias_relu
from minikeras.ops.nn.sliding_window import WindowGeometry
from tests.ops.op_check import check_op
from tests.ops.test_conv import conv2d_reference


def _on_cpu():
    return default_device().host_kernels


@pytest.fixture
def algorithm_used(monkeypatch):
    """Records the algorithm of every Conv forward: ``used`` lists them."""
    used = []
    original = Conv.forward

    def forward(self, *arrays):
        out = original(self, *arrays)
        used.append("winograd" if getattr(self, "tiling", None) is not None else "im2col")
        return out

    monkeypatch.setattr(Conv, "forward", forward)
    return used


@pytest.fixture
def forced(monkeypatch, algorithm_used):
    """Winograd forced wherever it applies, one sample per block (many blocks, a partial last one)."""
    monkeypatch.setattr(tuning, "CONV_ALGORITHM", "winograd")
    monkeypatch.setattr(tuning, "WINOGRAD_BLOCK_BYTES", 1)
    monkeypatch.setattr(tuning, "WINOGRAD_MIN_ROWS", 1)
    return algorithm_used


def _expect(used, algorithm="winograd"):
    """Winograd ran on the CPU (a GPU keeps im2col + cuBLAS or cuDNN)."""
    assert used and set(used) == {algorithm if _on_cpu() else "im2col"}


WINOGRAD_CASES = [
    # x shape, filters, padding: even and odd outputs, H != W, tiles hanging over the edge
    ((2, 6, 6, 3), 2, "valid"),    # 4x4 output: whole tiles
    ((3, 7, 5, 2), 3, "valid"),    # 5x3: odd, the last tile half outside
    ((2, 5, 6, 4), 2, "same"),     # padding on every side
    ((1, 3, 3, 2), 2, "valid"),    # a single output pixel
    ((2, 1, 2, 2), 3, "same"),     # fewer rows than the window: rows of padding only
    ((4, 4, 9, 3), 5, "same"),
]


@pytest.mark.parametrize("x_shape, filters, padding", WINOGRAD_CASES)
def test_winograd_conv2d_matches_reference_and_gradients(x_shape, filters, padding, forced, rng):
    x, kernel = rng.standard_normal(x_shape), rng.standard_normal((3, 3, x_shape[-1], filters))
    check_op(lambda a, k: ops.conv2d(a, k, 1, padding), lambda a, k: conv2d_reference(a, k, 1, padding), [x, kernel])
    _expect(forced)


@pytest.mark.parametrize("relu", [True, False])
@pytest.mark.parametrize("padding", ["valid", "same"])
def test_winograd_conv_bias_relu_matches_reference_and_gradients(relu, padding, forced, rng):
    x, kernel, bias = rng.standard_normal((3, 7, 6, 4)), rng.standard_normal((3, 3, 4, 5)), rng.standard_normal(5)

    def reference(a, k, b):
        out = conv2d_reference(a, k, 1, padding) + b
        return numpy.maximum(out, 0) if relu else out

    check_op(lambda a, k, b: conv_bias_relu(a, k, b, relu, 2, 1, padding, 1), reference, [x, kernel, bias])
    _expect(forced)


@pytest.mark.parametrize("wants", [(False, True, True), (True, False, True), (True, True, False),
                                   (False, False, True)])
def test_winograd_gradients_of_any_subset_of_inputs(wants, forced, rng):
    check_gradient_subset(wants, rng)
    _expect(forced)


def check_gradient_subset(wants, rng):
    """Conv+bias+ReLU's gradients of the inputs in ``wants`` equal those of a run that wants all three,
    and the others get none."""
    x, kernel, bias = rng.standard_normal((3, 6, 6, 4)), rng.standard_normal((3, 3, 4, 3)), rng.standard_normal(3)
    grad_out = rng.standard_normal((3, 6, 6, 3))
    full = [mk.Tensor(a, requires_grad=True) for a in (x, kernel, bias)]
    conv_bias_relu(*full, relu=True, padding="same").backward(grad_out)
    some = [mk.Tensor(a, requires_grad=w) for a, w in zip((x, kernel, bias), wants)]
    conv_bias_relu(*some, relu=True, padding="same").backward(grad_out)
    for tensor, reference, wanted in zip(some, full, wants):
        if wanted:
            numpy.testing.assert_allclose(tensor.grad.numpy(), reference.grad.numpy(), rtol=1e-12, atol=1e-12)
        else:
            assert tensor.grad is None


def test_winograd_matches_torch_forward_and_gradients(forced, rng):
    torch = pytest.importorskip("torch")
    x, kernel, grad_out = rng.standard_normal((3, 9, 8, 5)), rng.standard_normal((3, 3, 5, 4)), None
    for padding in ("valid", "same"):
        xt, kt = mk.Tensor(x, requires_grad=True), mk.Tensor(kernel, requires_grad=True)
        out = ops.conv2d(xt, kt, 1, padding)
        grad_out = rng.standard_normal(out.shape)
        out.backward(grad_out)
        tx = torch.tensor(x).permute(0, 3, 1, 2).requires_grad_()
        tk = torch.tensor(kernel).permute(3, 2, 0, 1).requires_grad_()
        theirs = torch.nn.functional.conv2d(tx, tk, padding=1 if padding == "same" else 0)
        theirs.backward(torch.tensor(grad_out).permute(0, 3, 1, 2))
        numpy.testing.assert_allclose(out.numpy(), theirs.permute(0, 2, 3, 1).detach().numpy(), atol=1e-10)
        numpy.testing.assert_allclose(xt.grad.numpy(), tx.grad.permute(0, 2, 3, 1).numpy(), atol=1e-10)
        numpy.testing.assert_allclose(kt.grad.numpy(), tk.grad.permute(2, 3, 1, 0).numpy(), atol=1e-10)
    _expect(forced)


def test_winograd_float32_at_a_users_size_is_as_accurate_as_im2col(monkeypatch, rng):
    # CIFAR's second convolution at batch 8: float32 results against float64,
    # for both algorithms; Winograd's error stays within 2x im2col's.
    x = rng.standard_normal((8, 32, 32, 32))
    kernel = rng.standard_normal((3, 3, 32, 32)) / numpy.sqrt(9 * 32)
    bias = rng.standard_normal(32)
    grad_out = rng.standard_normal((8, 30, 30, 32))
    exact = _conv_and_gradients(x, kernel, bias, grad_out)
    errors = {}
    for algorithm in ("im2col", "winograd"):
        monkeypatch.setattr(tuning, "CONV_ALGORITHM", algorithm)
        results = _conv_and_gradients(*(a.astype(numpy.float32) for a in (x, kernel, bias, grad_out)))
        errors[algorithm] = [numpy.abs(r - e).max() / numpy.abs(e).max() for r, e in zip(results, exact)]
    for winograd_error, im2col_error in zip(errors["winograd"], errors["im2col"]):
        assert winograd_error < 1e-5 and winograd_error <= 2 * im2col_error + 1e-7


def _conv_and_gradients(x, kernel, bias, grad_out):
    tensors = [mk.Tensor(a, requires_grad=True) for a in (x, kernel, bias)]
    out = conv_bias_relu(*tensors, relu=True)
    out.backward(grad_out)
    return [out.numpy()] + [t.grad.numpy() for t in tensors]


@pytest.mark.cpu_only(reason="op threads are the CPU's")
def test_winograd_same_bits_for_any_thread_count(forced, rng):
    x = rng.standard_normal((9, 10, 10, 8)).astype(numpy.float32)
    kernel = rng.standard_normal((3, 3, 8, 6)).astype(numpy.float32)
    bias = rng.standard_normal(6).astype(numpy.float32)
    grad_out = rng.standard_normal((9, 10, 10, 6)).astype(numpy.float32)
    before = threads.num_threads()
    results = []
    try:
        for count in (1, 2, 3):
            threads.set_num_threads(count)
            results.append(_conv_and_gradients_same(x, kernel, bias, grad_out))
    finally:
        threads.set_num_threads(before)
    for other in results[1:]:
        for a, b in zip(results[0], other):
            numpy.testing.assert_array_equal(a, b)
    _expect(forced)


def _conv_and_gradients_same(x, kernel, bias, grad_out):
    tensors = [mk.Tensor(a, requires_grad=True) for a in (x, kernel, bias)]
    out = conv_bias_relu(*tensors, relu=True, padding="same")
    out.backward(grad_out)
    return [out.numpy()] + [t.grad.numpy() for t in tensors]


def test_winograd_model_trains_like_im2col(monkeypatch, rng):
    # The same Conv2D model, a few steps each way: the same losses to float32 rounding.
    # Odd outputs (9x9), so the scratch blocks kept across steps must keep
    # the tiles' parts outside the output out of the gradients.
    x = rng.random((16, 11, 11, 8)).astype(numpy.float32)
    y = rng.integers(0, 3, size=16)
    losses = {}
    for algorithm in ("im2col", "winograd"):
        monkeypatch.setattr(tuning, "CONV_ALGORITHM", algorithm)
        mk.random.seed(0)
        model = mk.Sequential([mk.layers.Input((11, 11, 8)), mk.layers.Conv2D(8, 3, activation="relu"),
                               mk.layers.Conv2D(8, 3, padding="same", activation="relu"), mk.layers.Flatten(),
                               mk.layers.Dense(3)])
        model.compile(optimizer="adam", loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
        losses[algorithm] = [float(model.train_on_batch(x, y)) for _ in range(4)]
    numpy.testing.assert_allclose(losses["winograd"], losses["im2col"], rtol=1e-5)
    assert losses["winograd"][-1] < losses["winograd"][0]


# ------------------------------------------------------------------ the choice

def _geometry(shape, padding="valid", strides=(1, 1), dilation=(1, 1), window=(3, 3)):
    return WindowGeometry("conv2d", shape, window, strides, dilation, padding)


@pytest.mark.parametrize("geometry", [
    _geometry((2, 9, 9, 32), strides=(2, 2)),
    _geometry((2, 9, 9, 32), dilation=(2, 2)),
    _geometry((2, 9, 9, 32), window=(5, 5)),
    _geometry((2, 9, 9, 32), window=(1, 3)),
])
def test_winograd_applies_only_to_3x3_stride_1_windows(geometry, monkeypatch):
    monkeypatch.setattr(tuning, "CONV_ALGORITHM", "winograd")
    assert conv_algorithm.choose(default_device(), geometry, 8, numpy.float32) == conv_algorithm.ALL_IM2COL


def test_forced_winograd_keeps_other_convolutions_on_im2col(forced, rng):
    x, kernel = rng.standard_normal((2, 7, 7, 3)), rng.standard_normal((3, 3, 3, 2))
    check_op(lambda a, k: ops.conv2d(a, k, 2, "same"), lambda a, k: conv2d_reference(a, k, 2, "same"), [x, kernel])
    assert set(forced) == {"im2col"}


def test_inference_costs_only_the_forward_pass():
    geometry = _geometry((128, 32, 32, 32))
    for algorithm in ("im2col", "winograd"):
        forward = conv_algorithm.forward_cost(algorithm, geometry, 32)
        assert 0 < forward < conv_algorithm.backward_cost(algorithm, algorithm, geometry, 32)


def test_blocks_hold_enough_tiles_for_a_fast_gemm(monkeypatch):
    monkeypatch.setattr(tuning, "WINOGRAD_BLOCK_BYTES", 1)
    geometry = _geometry((64, 8, 8, 256), "same")  # 16 tiles per sample
    assert conv_algorithm.winograd_samples_per_block(geometry, 256) == -(-tuning.WINOGRAD_MIN_ROWS // 16)


# --------------------------------------------------------------- the transforms

def test_kernel_transform_and_its_adjoint_are_transposes(rng):
    # <G g G^T, dU> == <g, G^T dU G> for every kernel and transformed gradient.
    kernel, grad = rng.standard_normal((3, 3, 2, 4)), rng.standard_normal((16, 2, 4))
    forward = (winograd.kernel_transform(kernel) * grad).sum()
    adjoint = (kernel * winograd.kernel_transform_adjoint(grad, numpy.float64)).sum()
    numpy.testing.assert_allclose(forward, adjoint, rtol=1e-12)


@pytest.mark.cpu_only(reason="the Winograd code is the CPU's")
def test_tiling_spans_cover_every_input_pixel_once():
    for shape, padding in [((1, 7, 5, 1), "valid"), ((1, 6, 9, 1), "same"), ((1, 1, 2, 1), "same")]:
        tiling = winograd.Tiling(_geometry(shape, padding))
        for spans, size in ((tiling.row_spans, shape[1]), (tiling.col_spans, shape[2])):
            covered = sorted(index for span in spans if span is not None
                             for index in range(span[2], span[2] + 2 * (span[1] - span[0]), 2))
            assert covered == list(range(size))
