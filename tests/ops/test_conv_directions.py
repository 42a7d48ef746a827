"""Per-direction algorithms of CPU convolutions (ops/nn/conv_algorithm.py):
the forward pass, the input's gradient and the kernel's gradient each run
im2col or Winograd F(2x2, 3x3), chosen separately per layer.

Every combination of the three is forced (``tuning.CONV_ALGORITHM`` =
``forward,input,kernel``) and checked against the direct loops of
test_conv.py with float64 finite differences, against PyTorch, for every
subset of gradients and for the same bits with any thread count; each test
asserts that the op really ran the forced combination (a GPU keeps im2col
in every direction)."""
import itertools

import numpy
import pytest

import minikeras as mk
from minikeras import ops
from minikeras.backend import threads, tuning
from minikeras.device import default_device
from minikeras.ops.nn import conv_algorithm
from minikeras.ops.nn.conv import Conv, conv_bias_relu
from minikeras.ops.nn.conv_algorithm import ALL_IM2COL, Algorithms
from minikeras.ops.nn.sliding_window import WindowGeometry
from tests.ops.op_check import check_op
from tests.ops.test_conv import conv2d_reference
from tests.ops.test_conv_winograd import check_gradient_subset

COMBINATIONS = [Algorithms(*names) for names in itertools.product(("im2col", "winograd"), repeat=3)]
MIXED = [combination for combination in COMBINATIONS if len(set(combination)) == 2]


@pytest.fixture
def force(monkeypatch):
    """``force(combination)`` sets it, with one sample per Winograd block (many
    blocks, a partial last one); returns the list of the Algorithms each Conv ran."""
    used = []
    original = Conv.forward

    def forward(self, *arrays):
        out = original(self, *arrays)
        used.append(getattr(self, "algorithms", None))
        return out

    monkeypatch.setattr(Conv, "forward", forward)
    monkeypatch.setattr(tuning, "WINOGRAD_BLOCK_BYTES", 1)
    monkeypatch.setattr(tuning, "WINOGRAD_MIN_ROWS", 1)

    def set_combination(combination):
        monkeypatch.setattr(tuning, "CONV_ALGORITHM", ",".join(combination))
        return used

    return set_combination


def _expect(used, combination):
    """The op ran ``combination`` on the CPU; a GPU runs im2col (or cuDNN) in every direction."""
    expected = combination if default_device().host_kernels else ALL_IM2COL
    assert used and set(used) == {expected}


def _name(combination):
    return "-".join(combination)


@pytest.mark.parametrize("combination", COMBINATIONS, ids=_name)
@pytest.mark.parametrize("x_shape, filters, padding", [
    ((3, 7, 6, 4), 5, "valid"),  # 5x4 output: an odd side, the last tiles half outside
    ((2, 5, 6, 4), 3, "same"),   # padding on every side
])
def test_every_combination_matches_reference_and_gradients(combination, x_shape, filters, padding, force, rng):
    used = force(combination)
    x, kernel = rng.standard_normal(x_shape), rng.standard_normal((3, 3, x_shape[-1], filters))
    bias = rng.standard_normal(filters)

    def reference(a, k, b):
        return numpy.maximum(conv2d_reference(a, k, 1, padding) + b, 0)

    check_op(lambda a, k, b: conv_bias_relu(a, k, b, True, 2, 1, padding, 1), reference, [x, kernel, bias])
    _expect(used, combination)


@pytest.mark.parametrize("combination", COMBINATIONS, ids=_name)
def test_every_combination_without_bias_or_relu(combination, force, rng):
    used = force(combination)
    x, kernel = rng.standard_normal((2, 6, 5, 3)), rng.standard_normal((3, 3, 3, 2))
    check_op(lambda a, k: ops.conv2d(a, k, 1, "same"), lambda a, k: conv2d_reference(a, k, 1, "same"), [x, kernel])
    _expect(used, combination)


@pytest.mark.parametrize("combination", MIXED, ids=_name)
@pytest.mark.parametrize("wants", [(False, True, True), (True, False, True), (True, True, False),
                                   (False, False, True)])
def test_every_combination_gives_any_subset_of_gradients(combination, wants, force, rng):
    used = force(combination)
    check_gradient_subset(wants, rng)
    assert used[0] == (combination if default_device().host_kernels else ALL_IM2COL)


@pytest.mark.parametrize("combination", COMBINATIONS, ids=_name)
def test_every_combination_matches_torch(combination, force, rng):
    torch = pytest.importorskip("torch")
    used = force(combination)
    x, kernel, bias = rng.standard_normal((3, 9, 8, 5)), rng.standard_normal((3, 3, 5, 4)), rng.standard_normal(4)
    for padding in ("valid", "same"):
        tensors = [mk.Tensor(a, requires_grad=True) for a in (x, kernel, bias)]
        out = conv_bias_relu(*tensors, relu=True, padding=padding)
        grad_out = rng.standard_normal(out.shape)
        out.backward(grad_out)
        tx = torch.tensor(x).permute(0, 3, 1, 2).requires_grad_()
        tk = torch.tensor(kernel).permute(3, 2, 0, 1).requires_grad_()
        tb = torch.tensor(bias).requires_grad_()
        theirs = torch.relu(torch.nn.functional.conv2d(tx, tk, tb, padding=1 if padding == "same" else 0))
        theirs.backward(torch.tensor(grad_out).permute(0, 3, 1, 2))
        numpy.testing.assert_allclose(out.numpy(), theirs.permute(0, 2, 3, 1).detach().numpy(), atol=1e-10)
        numpy.testing.assert_allclose(tensors[0].grad.numpy(), tx.grad.permute(0, 2, 3, 1).numpy(), atol=1e-10)
        numpy.testing.assert_allclose(tensors[1].grad.numpy(), tk.grad.permute(2, 3, 1, 0).numpy(), atol=1e-10)
        numpy.testing.assert_allclose(tensors[2].grad.numpy(), tb.grad.numpy(), atol=1e-10)
    _expect(used, combination)


@pytest.mark.cpu_only(reason="op threads are the CPU's")
@pytest.mark.parametrize("combination", MIXED, ids=_name)
def test_every_combination_same_bits_for_any_thread_count(combination, force, rng):
    used = force(combination)
    x = rng.standard_normal((9, 10, 10, 8)).astype(numpy.float32)
    kernel = rng.standard_normal((3, 3, 8, 6)).astype(numpy.float32)
    bias = rng.standard_normal(6).astype(numpy.float32)
    grad_out = rng.standard_normal((9, 10, 10, 6)).astype(numpy.float32)
    before = threads.num_threads()
    results = []
    try:
        for count in (1, 2, 3):
            threads.set_num_threads(count)
            tensors = [mk.Tensor(a, requires_grad=True) for a in (x, kernel, bias)]
            out = conv_bias_relu(*tensors, relu=True, padding="same")
            out.backward(grad_out)
            results.append([out.numpy()] + [t.grad.numpy() for t in tensors])
    finally:
        threads.set_num_threads(before)
    for other in results[1:]:
        for a, b in zip(results[0], other):
            numpy.testing.assert_array_equal(a, b)
    _expect(used, combination)


def test_mixed_combination_trains_like_im2col(monkeypatch, rng):
    # Fashion-MNIST's choice (im2col forward, Winograd backward) in a model with
    # odd outputs: the same losses as im2col to float32 rounding.
    x = rng.random((16, 11, 11, 8)).astype(numpy.float32)
    y = rng.integers(0, 3, size=16)
    losses = {}
    for setting in ("im2col", "im2col,winograd,winograd", "winograd,im2col,winograd"):
        monkeypatch.setattr(tuning, "CONV_ALGORITHM", setting)
        mk.random.seed(0)
        model = mk.Sequential([mk.layers.Input((11, 11, 8)), mk.layers.Conv2D(8, 3, activation="relu"),
                               mk.layers.Conv2D(8, 3, padding="same", activation="relu"), mk.layers.Flatten(),
                               mk.layers.Dense(3)])
        model.compile(optimizer="adam", loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
        losses[setting] = [float(model.train_on_batch(x, y)) for _ in range(4)]
    for setting in ("im2col,winograd,winograd", "winograd,im2col,winograd"):
        numpy.testing.assert_allclose(losses[setting], losses["im2col"], rtol=1e-5)


# ------------------------------------------------------------------ the choice

def _geometry(shape, padding="valid"):
    return WindowGeometry("conv2d", shape, (3, 3), (1, 1), (1, 1), padding)


@pytest.mark.cpu_only(reason="the choice is the CPU's")
@pytest.mark.parametrize("shape, filters, padding, expected", [
    # Measured per direction (benchmarks/NOTES.md, "per direction").
    ((128, 32, 32, 3), 32, "same", ("im2col", "im2col", "im2col")),         # CIFAR conv1: RGB
    ((128, 28, 28, 1), 32, "valid", ("im2col", "im2col", "im2col")),        # Fashion-MNIST conv1: grayscale
    ((128, 32, 32, 32), 32, "valid", ("winograd", "winograd", "winograd")),  # CIFAR conv2
    ((128, 15, 15, 32), 64, "same", ("winograd", "winograd", "winograd")),   # CIFAR conv3
    ((128, 15, 15, 64), 64, "valid", ("winograd", "winograd", "winograd")),  # CIFAR conv4
    ((128, 13, 13, 32), 64, "valid", ("im2col", "winograd", "winograd")),    # Fashion-MNIST conv2
    ((128, 16, 16, 8), 8, "same", ("im2col", "winograd", "winograd")),       # few channels: forward im2col
])
def test_cost_model_picks_the_measured_winner_per_direction(shape, filters, padding, expected):
    chosen = conv_algorithm.choose(default_device(), _geometry(shape, padding), filters, numpy.float32, True,
                                   shape[-1] > 3)
    assert chosen == Algorithms(*expected)


@pytest.mark.cpu_only(reason="the choice is the CPU's")
def test_inference_chooses_the_forward_pass_alone():
    geometry = _geometry((128, 13, 13, 32))
    assert conv_algorithm.choose(default_device(), geometry, 64, numpy.float32, training=False).forward == "im2col"
    geometry = _geometry((128, 32, 32, 32))
    assert conv_algorithm.choose(default_device(), geometry, 32, numpy.float32, training=False).forward == "winograd"


def test_backward_pair_is_costed_together():
    # The output gradient's mask and transform are shared: two Winograd gradients
    # cost less than the sum of each one's extra cost over the mixed pairs.
    geometry = _geometry((128, 15, 15, 64))
    cost = {(a, b): conv_algorithm.backward_cost(a, b, geometry, 64) for a in ("im2col", "winograd")
            for b in ("im2col", "winograd")}
    both = cost["winograd", "winograd"]
    assert both < cost["im2col", "winograd"] and both < cost["winograd", "im2col"] < cost["im2col", "im2col"]
    without_input = conv_algorithm.backward_cost("winograd", "winograd", geometry, 64, input_gradient=False)
    assert without_input < both


@pytest.mark.parametrize("value, expected", [
    ("im2col,Winograd, winograd", "im2col,winograd,winograd"), ("winograd", "winograd"), ("AUTO", "auto")])
def test_conv_algorithm_setting_reads_one_or_three_algorithms(value, expected, monkeypatch):
    monkeypatch.setenv("MINIKERAS_CONV_ALGORITHM", value)
    assert tuning._read_algorithms("CONV_ALGORITHM", "auto") == expected


@pytest.mark.parametrize("value", ["im2col,winograd", "fft", "im2col,winograd,direct", "auto,auto,auto"])
def test_conv_algorithm_setting_rejects_anything_else(value, monkeypatch):
    monkeypatch.setenv("MINIKERAS_CONV_ALGORITHM", value)
    with pytest.raises(ValueError, match="MINIKERAS_CONV_ALGORITHM must be auto, im2col, winograd or three"):
        tuning._read_algorithms("CONV_ALGORITHM", "auto")
