"""Tests for minikeras/ops/nn/pool.py: max_pool2d, avg_pool2d, max_pool1d, avg_pool1d.

The references loop over output windows, with TensorFlow's SAME padding
written out here (max pooling pads with -inf; average pooling divides by the
number of real elements in each window)."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from tests.ops.op_check import check_op


def _pads(size, window, stride, padding):
    if padding == "valid":
        return 0, 0
    total = max((-(-size // stride) - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


def pool2d_reference(x, pool_size, strides=None, padding="valid", kind="max"):
    ph, pw = (pool_size, pool_size) if numpy.isscalar(pool_size) else pool_size
    strides = (ph, pw) if strides is None else strides
    sh, sw = (strides, strides) if numpy.isscalar(strides) else strides
    (top, bottom), (left, right) = _pads(x.shape[1], ph, sh, padding), _pads(x.shape[2], pw, sw, padding)
    padded = numpy.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=numpy.nan)
    out_h, out_w = (padded.shape[1] - ph) // sh + 1, (padded.shape[2] - pw) // sw + 1
    out = numpy.zeros((x.shape[0], out_h, out_w, x.shape[3]))
    for oh in range(out_h):
        for ow in range(out_w):
            window = padded[:, oh * sh : oh * sh + ph, ow * sw : ow * sw + pw]
            out[:, oh, ow] = numpy.nanmax(window, axis=(1, 2)) if kind == "max" else numpy.nanmean(window, axis=(1, 2))
    return out


def pool1d_reference(x, pool_size, strides=None, padding="valid", kind="max"):
    return pool2d_reference(x[:, None], (1, pool_size), (1, strides or pool_size), padding, kind)[:, 0]


def _distinct(rng, shape):
    """Values with no ties (max pooling's gradient is then unambiguous for finite differences)."""
    return rng.permutation(numpy.linspace(-2.0, 2.0, int(numpy.prod(shape)))).reshape(shape)


POOL2D_CASES = [
    # x shape, pool size, strides, padding
    ((2, 4, 6, 3), 2, None, "valid"),  # stride == pool, exact tiling
    ((2, 5, 7, 2), 2, None, "valid"),  # stride == pool, leftover row/column
    ((2, 5, 7, 2), 2, None, "same"),
    ((1, 6, 6, 2), 3, 2, "valid"),  # overlapping windows
    ((1, 6, 7, 2), 3, 2, "same"),
    ((1, 6, 6, 2), 3, 1, "same"),  # stride 1, padding on both sides
    ((1, 7, 7, 2), 2, 3, "valid"),  # stride > pool: some inputs get no gradient
    ((1, 8, 7, 2), 2, 3, "same"),
    ((1, 6, 5, 2), (2, 3), (1, 2), "valid"),
    ((1, 5, 4, 2), (3, 2), (2, 1), "same"),
    ((2, 1, 2, 2), 3, 1, "same"),  # window wider than the input: some offsets are all padding
    ((1, 2, 1, 3), (4, 3), (1, 2), "same"),
]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("x_shape, pool_size, strides, padding", POOL2D_CASES)
def test_pool2d_matches_reference_and_gradients(kind, x_shape, pool_size, strides, padding, rng):
    op = ops.max_pool2d if kind == "max" else ops.avg_pool2d
    check_op(lambda a: op(a, pool_size, strides, padding),
             lambda a: pool2d_reference(a, pool_size, strides, padding, kind), [_distinct(rng, x_shape)])


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("pool_size, strides, padding",
                         [(2, None, "valid"), (3, 2, "same"), (2, 3, "valid"), (3, 1, "same")])
def test_pool1d_matches_reference_and_gradients(kind, pool_size, strides, padding, rng):
    op = ops.max_pool1d if kind == "max" else ops.avg_pool1d
    out = check_op(lambda a: op(a, pool_size, strides, padding),
                   lambda a: pool1d_reference(a, pool_size, strides, padding, kind), [_distinct(rng, (2, 7, 3))])
    assert out.ndim == 3


def test_max_pool_ties_give_the_gradient_to_the_first_maximum():
    x = numpy.zeros((1, 4, 4, 1), numpy.float32)  # every window is a four-way tie (e.g. after ReLU)
    x[0, 3, 3, 0] = -1.0
    x[0, 2, 3, 0] = 0.0
    tensor = mk.Tensor(x, requires_grad=True)
    ops.max_pool2d(tensor, 2).sum().backward()
    expected = numpy.zeros((4, 4), numpy.float32)
    expected[0::2, 0::2] = 1.0  # the top-left element of each 2x2 window
    numpy.testing.assert_array_equal(tensor.grad.numpy()[0, :, :, 0], expected)


def test_max_pool_ties_in_overlapping_windows_are_decided_per_window():
    x = numpy.array([1.0, 3.0, 3.0, 0.0, 2.0], numpy.float32).reshape(1, 5, 1)
    tensor = mk.Tensor(x, requires_grad=True)
    out = ops.max_pool1d(tensor, 3, strides=1)  # windows [1,3,3] [3,3,0] [3,0,2]
    numpy.testing.assert_array_equal(out.numpy().ravel(), [3.0, 3.0, 3.0])
    out.sum().backward()
    # The first 3 (index 1) wins the first two windows, the second 3 (index 2) the third.
    numpy.testing.assert_array_equal(tensor.grad.numpy().ravel(), [0.0, 2.0, 1.0, 0.0, 0.0])


def test_overlapping_max_pool_gradients_accumulate():
    x = numpy.array([0.0, 1.0, 5.0, 1.0, 0.0], numpy.float32).reshape(1, 1, 5, 1)
    tensor = mk.Tensor(x, requires_grad=True)
    ops.max_pool2d(tensor, (1, 3), strides=(1, 1)).sum().backward()
    numpy.testing.assert_array_equal(tensor.grad.numpy().ravel(), [0.0, 0.0, 3.0, 0.0, 0.0])


def test_avg_pool_same_divides_by_real_elements():
    x = numpy.ones((1, 3, 3, 1), numpy.float32)
    out = ops.avg_pool2d(mk.tensor(x), 2, strides=2, padding="same").numpy()
    numpy.testing.assert_array_equal(out, numpy.ones((1, 2, 2, 1)))  # not 0.5 / 0.25 at the border


def test_max_pool_same_padding_never_wins():
    x = -numpy.arange(1.0, 10.0, dtype=numpy.float32).reshape(1, 3, 3, 1)  # all negative
    out = ops.max_pool2d(mk.tensor(x), 2, padding="same").numpy()
    numpy.testing.assert_array_equal(out[0, :, :, 0], [[-1.0, -3.0], [-7.0, -9.0]])


def test_pool_keeps_dtype_and_skips_index_without_grad(rng):
    x = mk.tensor(rng.standard_normal((2, 6, 6, 3)).astype(numpy.float32))
    for op in (ops.max_pool2d, ops.avg_pool2d):
        out = op(x, 2)
        assert out.dtype == numpy.float32 and out.shape == (2, 3, 3, 3)
    with mk.no_grad():
        assert ops.max_pool2d(mk.Tensor(x.numpy(), requires_grad=True), 3, 1, "same").shape == (2, 6, 6, 3)


def test_pool_matches_torch_including_ties(rng):
    torch = pytest.importorskip("torch")
    x = numpy.maximum(rng.standard_normal((2, 7, 6, 3)), 0.0)  # ReLU-like: many tied zeros
    ours = mk.Tensor(x, requires_grad=True)
    out = ops.max_pool2d(ours, 3, 2)
    grad_out = rng.standard_normal(out.shape)
    out.backward(grad_out)
    theirs = torch.tensor(x).permute(0, 3, 1, 2).requires_grad_()
    torch_out = torch.nn.functional.max_pool2d(theirs, 3, 2)
    torch_out.backward(torch.tensor(grad_out).permute(0, 3, 1, 2))
    numpy.testing.assert_allclose(out.numpy(), torch_out.permute(0, 2, 3, 1).detach().numpy())
    numpy.testing.assert_allclose(ours.grad.numpy(), theirs.grad.permute(0, 2, 3, 1).numpy())


@pytest.mark.parametrize("call, message", [
    (lambda: ops.max_pool2d(numpy.ones((4, 4, 3)), 2), r"max_pool2d expects a 4-D input .* \(4, 4, 3\)"),
    (lambda: ops.avg_pool2d(numpy.ones((1, 1, 4, 4, 3)), 2), r"avg_pool2d expects a 4-D input"),
    (lambda: ops.max_pool2d(numpy.ones((1, 2, 4, 3)), 3),
     r"max_pool2d: the 3x3 window is larger than the padded input \(2x4\) for input shape \(1, 2, 4, 3\)"),
    (lambda: ops.max_pool2d(numpy.ones((1, 4, 4, 3)), 0), r"max_pool2d: pool_size must be positive"),
    (lambda: ops.max_pool2d(numpy.ones((1, 4, 4, 3)), 2, strides=(0, 1)), r"max_pool2d: strides must be positive"),
    (lambda: ops.avg_pool2d(numpy.ones((1, 4, 4, 3)), 2, strides=-1), r"avg_pool2d: strides must be positive"),
    (lambda: ops.avg_pool2d(numpy.ones((1, 4, 4, 3)), 2, padding="causal"),
     r"avg_pool2d: padding must be 'valid' or 'same', received 'causal'"),
    (lambda: ops.max_pool2d(numpy.ones((1, 4, 4, 3)), 2.5), r"max_pool2d: pool_size must be an int or a tuple of 2 ints"),
    (lambda: ops.max_pool1d(numpy.ones((1, 4, 4, 3)), 2), r"max_pool1d expects a 3-D input"),
    (lambda: ops.avg_pool1d(numpy.ones((1, 2, 3)), 3), r"avg_pool1d: the 1x3 window is larger"),
    (lambda: ops.max_pool1d(numpy.ones((1, 4, 3)), 2, strides=0), r"max_pool1d: strides must be positive"),
])
def test_bad_arguments_raise_value_error_naming_the_op(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.cpu_only(reason="splits max pooling over the CPU op threads")
@pytest.mark.parametrize("pool_size, strides, padding", [(2, 2, "valid"), (3, 2, "same"), (2, 1, "valid")])
def test_max_pool_in_blocks_over_threads_equals_one_pass(pool_size, strides, padding, monkeypatch):
    from minikeras.backend import threads

    x = numpy.random.default_rng(0).standard_normal((9, 7, 6, 3)).astype(numpy.float32)
    grad = numpy.random.default_rng(1).standard_normal(
        ops.max_pool2d(mk.tensor(x), pool_size, strides, padding).shape).astype(numpy.float32)
    previous = threads.num_threads()
    results = []
    try:
        for count, block in ((1, 1 << 30), (2, 40)):  # one pass; blocks of a sample or two on two threads
            threads.set_num_threads(count)
            monkeypatch.setattr(threads, "BLOCK_ELEMENTS", block)
            tensor = mk.Tensor(x, requires_grad=True)
            out = ops.max_pool2d(tensor, pool_size, strides, padding)
            out.backward(grad)
            results.append((out.numpy(), tensor.grad.numpy()))
    finally:
        threads.set_num_threads(previous)
    for one, two in zip(*results):
        numpy.testing.assert_array_equal(one, two)
