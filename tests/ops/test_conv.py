"""Tests for minikeras/ops/nn/conv.py (and conv_transpose.py, conv_depthwise.py,
sliding_window.py): conv1d, conv2d, conv2d_transpose, depthwise_conv2d.

The references are direct loops over output positions, with TensorFlow's
padding rules written out here independently of the library."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from minikeras.backend import tuning
from minikeras.ops.nn import sliding_window
from tests.ops.op_check import check_op


# ----------------------------------------------------------------- references

def _pads(size, kernel, stride, dilation, padding):
    """TensorFlow's padding of one axis: (before, after)."""
    effective = (kernel - 1) * dilation + 1
    if padding == "valid":
        return 0, 0
    if padding == "causal":
        return effective - 1, 0
    out = -(-size // stride)
    total = max((out - 1) * stride + effective - size, 0)
    return total // 2, total - total // 2


def conv2d_reference(x, kernel, strides=1, padding="valid", dilation=1):
    sh, sw = (strides, strides) if numpy.isscalar(strides) else strides
    dh, dw = (dilation, dilation) if numpy.isscalar(dilation) else dilation
    kh, kw = kernel.shape[:2]
    pads = (_pads(x.shape[1], kh, sh, dh, padding), _pads(x.shape[2], kw, sw, dw, padding))
    padded = numpy.pad(x, ((0, 0), pads[0], pads[1], (0, 0)))
    out_h = (padded.shape[1] - (kh - 1) * dh - 1) // sh + 1
    out_w = (padded.shape[2] - (kw - 1) * dw - 1) // sw + 1
    out = numpy.zeros((x.shape[0], out_h, out_w, kernel.shape[3]))
    for oh in range(out_h):
        for ow in range(out_w):
            patch = padded[:, oh * sh : oh * sh + (kh - 1) * dh + 1 : dh, ow * sw : ow * sw + (kw - 1) * dw + 1 : dw]
            out[:, oh, ow] = numpy.tensordot(patch, kernel, axes=3)
    return out


def conv1d_reference(x, kernel, strides=1, padding="valid", dilation=1):
    pads = _pads(x.shape[1], kernel.shape[0], strides, dilation, padding)
    padded = numpy.pad(x, ((0, 0), pads, (0, 0)))
    span = (kernel.shape[0] - 1) * dilation + 1
    out_w = (padded.shape[1] - span) // strides + 1
    out = numpy.zeros((x.shape[0], out_w, kernel.shape[2]))
    for ow in range(out_w):
        patch = padded[:, ow * strides : ow * strides + span : dilation]
        out[:, ow] = numpy.tensordot(patch, kernel, axes=2)
    return out


def _transpose_length(size, kernel, stride, dilation, padding, output_padding):
    effective = (kernel - 1) * dilation + 1
    if output_padding is None:
        return size * stride + max(effective - stride, 0) if padding == "valid" else size * stride
    pad = effective // 2 if padding == "same" else 0
    return (size - 1) * stride + effective - 2 * pad + output_padding


def conv2d_transpose_reference(x, kernel, strides=1, padding="valid", output_padding=None, dilation=1):
    """Scatter every input pixel times the kernel into the (padded) output."""
    s, d = strides, dilation
    kh, kw, cout, _ = kernel.shape
    out_h = _transpose_length(x.shape[1], kh, s, d, padding, output_padding)
    out_w = _transpose_length(x.shape[2], kw, s, d, padding, output_padding)
    (top, bottom), (left, right) = _pads(out_h, kh, s, d, padding), _pads(out_w, kw, s, d, padding)
    full = numpy.zeros((x.shape[0], out_h + top + bottom + s * kh * d, out_w + left + right + s * kw * d, cout))
    for ih in range(x.shape[1]):
        for iw in range(x.shape[2]):
            for i in range(kh):
                for j in range(kw):
                    full[:, ih * s + i * d, iw * s + j * d] += x[:, ih, iw] @ kernel[i, j].T
    return full[:, top : top + out_h, left : left + out_w]


def depthwise_reference(x, kernel, strides=1, padding="valid", dilation=1):
    channels, multiplier = kernel.shape[2:]
    outs = [conv2d_reference(x[..., c : c + 1], kernel[:, :, c : c + 1, :], strides, padding, dilation)
            for c in range(channels)]
    return numpy.concatenate(outs, axis=-1)  # channel c's multiplier block stays together: c * dm + m


# ----------------------------------------------------------------------- conv2d

CONV2D_CASES = [
    # x shape, kernel shape, strides, padding, dilation
    ((2, 5, 5, 3), (3, 3, 3, 2), 1, "valid", 1),
    ((2, 5, 6, 3), (3, 3, 3, 2), 1, "same", 1),
    ((1, 6, 6, 2), (3, 3, 2, 3), 2, "same", 1),  # even size: SAME pads 0 top, 1 bottom
    ((1, 7, 5, 2), (3, 2, 2, 2), 2, "same", 1),  # odd size, even kernel width
    ((2, 7, 7, 2), (3, 3, 2, 2), 2, "valid", 1),
    ((1, 7, 8, 2), (3, 3, 2, 2), 1, "valid", 2),
    ((1, 7, 6, 2), (2, 3, 2, 2), 1, "same", 2),
    ((1, 6, 7, 2), (2, 2, 2, 3), (2, 1), "same", 1),
    ((2, 4, 4, 3), (1, 1, 3, 4), 1, "valid", 1),  # 1x1: the plain-matmul path
    ((1, 5, 5, 2), (1, 1, 2, 2), 2, "same", 1),  # 1x1 with a stride: im2col path
    ((1, 3, 3, 2), (3, 3, 2, 2), 1, "valid", 1),  # kernel covers the input: 1x1 output
    ((2, 1, 2, 2), (3, 3, 2, 2), 1, "same", 1),  # kernel larger than the input: offsets all padding
    ((1, 3, 2, 2), (4, 4, 2, 3), 2, "same", 1),
]


@pytest.mark.parametrize("x_shape, kernel_shape, strides, padding, dilation", CONV2D_CASES)
def test_conv2d_matches_reference_and_gradients(x_shape, kernel_shape, strides, padding, dilation, rng):
    x, kernel = rng.standard_normal(x_shape), rng.standard_normal(kernel_shape)
    check_op(lambda a, k: ops.conv2d(a, k, strides, padding, dilation),
             lambda a, k: conv2d_reference(a, k, strides, padding, dilation), [x, kernel])


def test_conv2d_same_padding_is_asymmetric_like_tensorflow(rng):
    # Height 4, stride 2, kernel 3: total pad 1, all of it at the bottom, so
    # output row 0 reads input rows 0..2 (no padding row above).
    x = numpy.arange(16, dtype=numpy.float32).reshape(1, 4, 4, 1)
    kernel = numpy.zeros((3, 3, 1, 1), numpy.float32)
    kernel[0, 0] = 1.0  # picks the window's top-left element
    out = ops.conv2d(mk.tensor(x), mk.tensor(kernel), strides=2, padding="same").numpy()
    numpy.testing.assert_array_equal(out[0, :, :, 0], [[0.0, 2.0], [8.0, 10.0]])


def test_conv2d_blocks_cover_the_batch(rng, monkeypatch):
    # Force several samples per block, the last one partial, on the im2col path.
    x, kernel = rng.standard_normal((7, 6, 6, 3)), rng.standard_normal((3, 3, 3, 4))
    expected = conv2d_reference(x, kernel, 2, "same")
    grad_out = rng.standard_normal(expected.shape)
    results = []
    for chunk_bytes in (tuning.CHUNK_BYTES, 1, 3 * 9 * 27 * 8):
        monkeypatch.setattr(tuning, "CHUNK_BYTES", chunk_bytes)
        xt, kt = mk.Tensor(x, requires_grad=True), mk.Tensor(kernel, requires_grad=True)
        out = ops.conv2d(xt, kt, strides=2, padding="same")
        out.backward(grad_out)
        numpy.testing.assert_allclose(out.numpy(), expected, atol=1e-12)
        results.append((xt.grad.numpy(), kt.grad.numpy()))
    for grad_x, grad_kernel in results[1:]:
        numpy.testing.assert_allclose(grad_x, results[0][0], atol=1e-12)
        numpy.testing.assert_allclose(grad_kernel, results[0][1], atol=1e-12)


@pytest.mark.parametrize("full_correlation", [True, False])
@pytest.mark.parametrize("padding, dilation", [("valid", 1), ("same", 1), ("same", 2), ("valid", 2)])
def test_both_col2im_methods_give_the_input_gradient(full_correlation, padding, dilation, rng, monkeypatch):
    # col2im picks a full correlation or scatter-adds by a cost estimate; both must be exact.
    monkeypatch.setattr(sliding_window, "_full_correlation_is_cheaper", lambda xp, geometry, features: full_correlation)
    x, kernel = rng.standard_normal((2, 6, 7, 3)), rng.standard_normal((3, 2, 3, 4))
    check_op(lambda a, k: ops.conv2d(a, k, 1, padding, dilation),
             lambda a, k: conv2d_reference(a, k, 1, padding, dilation), [x, kernel])
    y = rng.standard_normal((2, 4, 5, 4))
    check_op(lambda a, k: ops.conv2d_transpose(a, k, 1, padding, None, dilation),
             lambda a, k: conv2d_transpose_reference(a, k, 1, padding, None, dilation), [y, kernel])


def test_conv2d_skips_gradients_not_needed(rng):
    x = mk.tensor(rng.standard_normal((2, 5, 5, 3)).astype(numpy.float32))
    kernel = mk.Tensor(rng.standard_normal((3, 3, 3, 2)).astype(numpy.float32), requires_grad=True)
    out = ops.conv2d(x, kernel, padding="same")
    out.sum().backward()
    assert x.grad is None and kernel.grad.shape == (3, 3, 3, 2) and kernel.grad.dtype == numpy.float32


def test_conv2d_empty_batch(rng):
    x = mk.tensor(numpy.zeros((0, 5, 5, 3), numpy.float32))
    out = ops.conv2d(x, mk.tensor(numpy.ones((3, 3, 3, 2), numpy.float32)))
    assert out.shape == (0, 3, 3, 2)


def test_conv2d_matches_torch(rng):
    torch = pytest.importorskip("torch")
    x, kernel = rng.standard_normal((2, 9, 8, 3)), rng.standard_normal((3, 3, 3, 4))
    for strides, dilation in ((1, 1), (2, 1), (1, 2)):
        ours = ops.conv2d(mk.tensor(x), mk.tensor(kernel), strides, "valid", dilation).numpy()
        nchw, oihw = torch.tensor(x).permute(0, 3, 1, 2), torch.tensor(kernel).permute(3, 2, 0, 1)
        theirs = torch.nn.functional.conv2d(nchw, oihw, stride=strides, dilation=dilation).permute(0, 2, 3, 1).numpy()
        numpy.testing.assert_allclose(ours, theirs, atol=1e-10)


# ------------------------------------------------------- conv + bias + relu

from minikeras.ops.nn.conv import conv_bias_relu  # noqa: E402


@pytest.mark.parametrize("x_shape, kernel_shape, padding, chunk_bytes", [
    ((3, 6, 6, 8), (3, 3, 8, 5), "same", None),     # patch matrix rebuilt in backward: mask and sum per block
    ((3, 6, 6, 8), (3, 3, 8, 5), "valid", 1),       # ... one sample per block
    ((3, 6, 6, 2), (3, 3, 2, 4), "same", 1),        # few channels: patch matrix kept, mask in one pass
    ((3, 4, 4, 3), (1, 1, 3, 4), "valid", None),    # 1x1: plain matmul path
])
@pytest.mark.parametrize("relu", [True, False])
def test_conv_bias_relu_matches_reference_and_gradients(x_shape, kernel_shape, padding, chunk_bytes, relu, rng,
                                                        monkeypatch):
    if chunk_bytes is not None:
        monkeypatch.setattr(tuning, "CHUNK_BYTES", chunk_bytes)
    x, kernel = rng.standard_normal(x_shape), rng.standard_normal(kernel_shape)
    bias = rng.standard_normal(kernel_shape[-1])

    def reference(a, k, b):
        out = conv2d_reference(a, k, 1, padding) + b
        return numpy.maximum(out, 0) if relu else out

    check_op(lambda a, k, b: conv_bias_relu(a, k, b, relu, 2, 1, padding, 1), reference, [x, kernel, bias])


def test_conv_bias_relu_one_dimensional_and_without_bias(rng):
    x, kernel = rng.standard_normal((2, 9, 4)), rng.standard_normal((3, 4, 3))
    check_op(lambda a, k: conv_bias_relu(a, k, None, True, 1, 2, "causal", 1),
             lambda a, k: numpy.maximum(conv1d_reference(a, k, 2, "causal"), 0), [x, kernel])


@pytest.mark.parametrize("wants", [(False, True, True), (True, False, True), (False, False, True),
                                   (True, True, False)])
def test_conv_bias_relu_gradients_of_any_subset_of_inputs(wants, rng):
    x, kernel = rng.standard_normal((4, 7, 7, 16)), rng.standard_normal((3, 3, 16, 6))
    bias = rng.standard_normal(6)
    grad_out = rng.standard_normal((4, 7, 7, 6))
    full = [mk.Tensor(a, requires_grad=True) for a in (x, kernel, bias)]
    conv_bias_relu(*full, relu=True, padding="same").backward(grad_out)
    some = [mk.Tensor(a, requires_grad=w) for a, w in zip((x, kernel, bias), wants)]
    conv_bias_relu(*some, relu=True, padding="same").backward(grad_out)
    for tensor, reference, w in zip(some, full, wants):
        if w:
            numpy.testing.assert_allclose(tensor.grad.numpy(), reference.grad.numpy(), atol=1e-12)
        else:
            assert tensor.grad is None


def test_conv_bias_relu_rejects_a_bias_of_the_wrong_size(rng):
    x, kernel = mk.tensor(numpy.zeros((1, 5, 5, 2))), mk.tensor(numpy.zeros((3, 3, 2, 4)))
    with pytest.raises(ValueError, match=r"conv2d: the bias must have shape \(4,\).*received \(3,\)"):
        conv_bias_relu(x, kernel, mk.tensor(numpy.zeros(3)), True)


# ----------------------------------------------------------------------- conv1d

@pytest.mark.parametrize("strides, padding, dilation", [
    (1, "valid", 1), (2, "valid", 1), (1, "same", 1), (2, "same", 1), (1, "causal", 1), (1, "causal", 2),
    (2, "causal", 1), (1, "valid", 2),
])
def test_conv1d_matches_reference_and_gradients(strides, padding, dilation, rng):
    x, kernel = rng.standard_normal((2, 7, 3)), rng.standard_normal((3, 3, 2))
    check_op(lambda a, k: ops.conv1d(a, k, strides, padding, dilation),
             lambda a, k: conv1d_reference(a, k, strides, padding, dilation), [x, kernel])


def test_conv1d_causal_output_never_sees_the_future(rng):
    x = rng.standard_normal((1, 6, 1)).astype(numpy.float32)
    kernel = rng.standard_normal((3, 1, 1)).astype(numpy.float32)
    base = ops.conv1d(mk.tensor(x), mk.tensor(kernel), padding="causal", dilation_rate=2).numpy()
    changed = x.copy()
    changed[0, 4] += 10.0
    after = ops.conv1d(mk.tensor(changed), mk.tensor(kernel), padding="causal", dilation_rate=2).numpy()
    assert base.shape == (1, 6, 1)
    numpy.testing.assert_array_equal(base[0, :4], after[0, :4])
    assert not numpy.allclose(base[0, 4], after[0, 4])


# ------------------------------------------------------------- conv2d_transpose

TRANSPOSE_CASES = [
    # x shape, kernel shape (kh, kw, out, in), strides, padding, output_padding, dilation, expected out hw
    ((2, 3, 3, 2), (3, 3, 3, 2), 1, "valid", None, 1, (5, 5)),
    ((1, 3, 4, 2), (3, 3, 2, 2), 2, "valid", None, 1, (7, 9)),
    ((1, 3, 3, 2), (3, 3, 2, 2), 2, "same", None, 1, (6, 6)),
    ((1, 3, 2, 2), (2, 2, 2, 1 + 1), 3, "valid", None, 1, (9, 6)),  # kernel smaller than stride
    ((1, 3, 3, 2), (3, 3, 2, 2), 2, "valid", 1, 1, (8, 8)),
    ((1, 3, 3, 2), (3, 3, 2, 2), 2, "same", 1, 1, (6, 6)),
    ((1, 3, 3, 2), (4, 4, 2, 2), 2, "same", None, 1, (6, 6)),
    ((1, 3, 3, 2), (3, 3, 2, 2), 1, "same", None, 2, (3, 3)),
    ((1, 3, 3, 2), (2, 3, 2, 2), 1, "valid", None, 2, (5, 7)),
]


@pytest.mark.parametrize("x_shape, kernel_shape, strides, padding, output_padding, dilation, out_hw", TRANSPOSE_CASES)
def test_conv2d_transpose_matches_reference_and_gradients(x_shape, kernel_shape, strides, padding, output_padding,
                                                          dilation, out_hw, rng):
    x, kernel = rng.standard_normal(x_shape), rng.standard_normal(kernel_shape)
    out = check_op(
        lambda a, k: ops.conv2d_transpose(a, k, strides, padding, output_padding, dilation),
        lambda a, k: conv2d_transpose_reference(a, k, strides, padding, output_padding, dilation),
        [x, kernel],
    )
    assert out.shape == (x_shape[0],) + out_hw + (kernel_shape[2],)


@pytest.mark.parametrize("strides, padding", [(1, "valid"), (2, "valid"), (2, "same"), (3, "same")])
def test_conv2d_transpose_is_the_adjoint_of_conv2d(strides, padding, rng):
    # <conv2d(y, k), x> == <y, conv2d_transpose(x, k)>: the defining property.
    kernel = rng.standard_normal((3, 3, 2, 4))
    y = rng.standard_normal((2, 9, 8, 2))
    conv = ops.conv2d(mk.tensor(y), mk.tensor(kernel), strides, padding).numpy()
    x = rng.standard_normal(conv.shape)
    transposed = ops.conv2d_transpose(mk.tensor(x), mk.tensor(kernel), strides, padding,
                                      output_padding=_output_padding_for(y.shape, strides, padding)).numpy()
    assert transposed.shape == y.shape
    numpy.testing.assert_allclose((conv * x).sum(), (y * transposed).sum(), rtol=1e-10)


def _output_padding_for(shape, strides, padding):
    """The output_padding that makes conv2d_transpose give back ``shape``'s height and width."""
    if padding == "valid":
        return tuple((size - 3) % strides for size in shape[1:3])
    return tuple((size - 1) % strides for size in shape[1:3])


def test_conv2d_transpose_matches_torch(rng):
    torch = pytest.importorskip("torch")
    x, kernel = rng.standard_normal((2, 4, 5, 3)), rng.standard_normal((3, 3, 2, 3))
    ours = ops.conv2d_transpose(mk.tensor(x), mk.tensor(kernel), strides=2, output_padding=1).numpy()
    theirs = torch.nn.functional.conv_transpose2d(
        torch.tensor(x).permute(0, 3, 1, 2), torch.tensor(kernel).permute(3, 2, 0, 1), stride=2, output_padding=1)
    numpy.testing.assert_allclose(ours, theirs.permute(0, 2, 3, 1).numpy(), atol=1e-10)



@pytest.mark.parametrize("strides, output_padding", [(1, 0), (2, 1), (2, (0,))])
def test_one_dimensional_conv_transpose_takes_an_output_padding_for_its_one_axis(strides, output_padding, rng):
    # The 1-D call runs as a 2-D one of height 1, whose height takes no output padding (output_padding=0
    # was refused as (1, 0)); Keras 3 answers, and torch's conv_transpose1d gives the same numbers.
    x, kernel = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    ours = ops.conv_transpose(x, kernel, strides=strides, output_padding=output_padding).numpy()
    padding = output_padding[0] if isinstance(output_padding, tuple) else output_padding
    numpy.testing.assert_allclose(ours, _conv_transpose_1d(x, kernel, strides, padding), atol=1e-10)


def _conv_transpose_1d(x, kernel, stride, output_padding):
    """A plain scatter-add: each input step adds kernel[tap] @ x to output step ``step * stride + tap``."""
    taps, steps = kernel.shape[0], x.shape[1]
    out = numpy.zeros((x.shape[0], (steps - 1) * stride + taps + output_padding, kernel.shape[1]))
    for step in range(steps):
        for tap in range(taps):
            out[:, step * stride + tap] += x[:, step] @ kernel[tap].T
    return out

# ------------------------------------------------------------ depthwise_conv2d

@pytest.mark.parametrize("strides, padding, dilation, multiplier", [
    (1, "valid", 1, 1), (1, "same", 1, 2), (2, "same", 1, 2), (2, "valid", 1, 1), (1, "valid", 2, 2), (1, "same", 2, 1),
])
def test_depthwise_conv2d_matches_reference_and_gradients(strides, padding, dilation, multiplier, rng):
    x, kernel = rng.standard_normal((2, 6, 5, 3)), rng.standard_normal((3, 3, 3, multiplier))
    out = check_op(lambda a, k: ops.depthwise_conv2d(a, k, strides, padding, dilation),
                   lambda a, k: depthwise_reference(a, k, strides, padding, dilation), [x, kernel])
    assert out.shape[-1] == 3 * multiplier


def test_depthwise_channel_order_is_channel_major(rng):
    # Output channel c * multiplier + m comes from input channel c.
    x = numpy.zeros((1, 3, 3, 2), numpy.float32)
    x[..., 1] = 1.0
    kernel = numpy.ones((3, 3, 2, 2), numpy.float32)
    out = ops.depthwise_conv2d(mk.tensor(x), mk.tensor(kernel)).numpy()
    numpy.testing.assert_array_equal(out.reshape(4), [0.0, 0.0, 9.0, 9.0])


# --------------------------------------------------------------------- errors

def _ones(*shape):
    return numpy.ones(shape)


X, K = _ones(1, 5, 5, 3), _ones(3, 3, 3, 2)  # a valid conv2d input and kernel


@pytest.mark.parametrize("call, message", [
    (lambda: ops.conv2d(_ones(5, 5, 3), K), r"conv2d expects a 4-D input .* \(5, 5, 3\)"),
    (lambda: ops.conv2d(X, _ones(3, 3, 2)), r"conv2d expects a 4-D kernel.*\(3, 3, 2\)"),
    (lambda: ops.conv2d(X, _ones(3, 3, 4, 2)), r"conv2d: the input has 3 channels .*\(3, 3, 4, 2\)"),
    (lambda: ops.conv2d(_ones(1, 2, 5, 3), K), r"conv2d: the 3x3 window is larger than the padded input \(2x5\)"),
    (lambda: ops.conv2d(_ones(1, 4, 4, 1), _ones(3, 3, 1, 1), dilation_rate=2), r"conv2d: .*dilated to 5x5"),
    (lambda: ops.conv2d(X, K, strides=0), r"conv2d: strides must be positive"),
    (lambda: ops.conv2d(X, K, strides=(1, -1)), r"conv2d: strides must be positive"),
    (lambda: ops.conv2d(X, K, strides=(1, 2, 3)), r"conv2d: strides must be an int or a tuple of 2 ints"),
    (lambda: ops.conv2d(X, K, dilation_rate=0), r"conv2d: dilation_rate must be positive"),
    (lambda: ops.conv2d(X, K, padding="full"), r"conv2d: padding must be 'valid' or 'same', received 'full'"),
    (lambda: ops.conv2d(X, K, padding="causal"), r"conv2d: padding must be"),
    (lambda: ops.conv1d(X, _ones(3, 3, 2)), r"conv1d expects a 3-D input .* \(1, 5, 5, 3\)"),
    (lambda: ops.conv1d(_ones(1, 5, 3), _ones(3, 2, 2)), r"conv1d: the input has 3 channels"),
    (lambda: ops.conv1d(_ones(1, 2, 3), _ones(3, 3, 2)), r"conv1d: the 1x3 window is larger"),
    (lambda: ops.conv1d(_ones(1, 5, 3), _ones(3, 3, 2), padding="full"), r"'valid' or 'same' or 'causal'"),
    (lambda: ops.conv2d_transpose(X, _ones(3, 3, 2, 4)), r"conv2d_transpose: the input has 3 channels"),
    (lambda: ops.conv2d_transpose(_ones(5, 5, 3), _ones(3, 3, 2, 3)), r"conv2d_transpose expects a 4-D input"),
    (lambda: ops.conv2d_transpose(X, _ones(3, 3, 2, 3), strides=2, output_padding=2),
     r"conv2d_transpose: output_padding must be .* smaller than the strides \(2, 2\), received 2"),
    (lambda: ops.conv2d_transpose(X, _ones(3, 3, 2, 3), padding="causal"), r"conv2d_transpose: padding must be"),
    (lambda: ops.conv2d_transpose(_ones(1, 3, 3, 1), _ones(2, 2, 1, 1), strides=2, padding="same", output_padding=0),
     r"conv2d_transpose: output_padding 0 gives an output of shape \(1, 4, 4, 1\)"),
    (lambda: ops.depthwise_conv2d(X, _ones(3, 3, 2, 1)), r"depthwise_conv2d: the input has 3 channels"),
    (lambda: ops.depthwise_conv2d(X, _ones(3, 3, 3)), r"depthwise_conv2d expects a 4-D kernel"),
])
def test_bad_arguments_raise_value_error_naming_the_op(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_old_module_name_is_the_sliding_window_module():
    from minikeras.ops.nn import _im2col
    from minikeras.ops.nn._im2col import WindowGeometry

    assert _im2col is sliding_window and WindowGeometry is sliding_window.WindowGeometry


def test_bias_gradient_row_sum_matches_numpy_sum(rng):
    # The CPU sums gradient rows with a matrix-vector product; other dtypes and devices use sum().
    from minikeras.device import default_device
    from minikeras.ops.nn import bias_relu

    device = default_device()
    for dtype in (numpy.float32, numpy.float64, numpy.float16):
        host = rng.standard_normal((517, 7)).astype(dtype)
        with device.activate():
            total = device.to_host(bias_relu.sum_rows(device, device.asarray(host)))
        assert total.dtype == dtype and total.shape == (7,)
        expected = host.astype(numpy.float64).sum(axis=0)
        numpy.testing.assert_allclose(total, expected, rtol={numpy.float16: 1e-2}.get(dtype, 1e-5))


def test_window_geometry_is_kept_per_arguments_and_failures_raise_each_time():
    from minikeras.ops.nn.sliding_window import WindowGeometry, window_geometry

    one = window_geometry("conv2d", (8, 13, 13, 32), (3, 3), (1, 1), (1, 1), "same", "note")
    assert window_geometry("conv2d", (8, 13, 13, 32), (3, 3), (1, 1), (1, 1), "same", "note") is one
    fresh = WindowGeometry("conv2d", (8, 13, 13, 32), (3, 3), (1, 1), (1, 1), "same", "note")
    assert (one.out_h, one.out_w, one.pads, one.offsets) == (fresh.out_h, fresh.out_w, fresh.pads, fresh.offsets)
    other = window_geometry("conv2d", (4, 13, 13, 32), (3, 3), (1, 1), (1, 1), "same", "note")
    assert other is not one and other.batch == 4
    explicit = ((1, 1), (1, 1))
    assert window_geometry("conv2d", (8, 13, 13, 32), (3, 3), (1, 1), (1, 1), explicit).pads == explicit
    for _ in range(2):
        with pytest.raises(ValueError, match="larger than the padded input"):
            window_geometry("conv2d", (8, 2, 2, 32), (3, 3), (1, 1), (1, 1), "valid", "tiny")
