"""Ops run in float32 on 16-bit inputs (autograd/function.py, in_float32): 16-bit
outputs and input gradients equal to the float32 op's on the same values
(rounded), and what they keep for backward stored in 16 bits."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from minikeras.ops.nn.conv import conv_bias_relu


def _conv(x, kernel, bias):
    return conv_bias_relu(x, kernel, bias, relu=True, padding="same")


def _lstm(x, kernel, recurrent_kernel, bias):
    return ops.lstm_sequence(x, kernel, recurrent_kernel, bias, ops.zeros((2, 3)), None, return_sequences=True)[0]


CASES = {
    "conv": (_conv, [(2, 5, 5, 3), (3, 3, 3, 4), (4,)]),
    "lstm": (_lstm, [(2, 4, 5), (5, 12), (3, 12), (12,)]),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_16_bit_inputs_give_16_bit_results_and_gradients(case, dtype):
    function, shapes = CASES[case]
    rng = numpy.random.default_rng(5)
    values = [mk.tensor(rng.normal(0, 0.5, size=shape).astype("float32")).astype(dtype) for shape in shapes]
    half = [mk.Tensor(v.numpy(), requires_grad=True) for v in values]
    full = [mk.Tensor(v.numpy().astype("float32"), requires_grad=True) for v in values]
    out_half, out_full = function(*half), function(*full)
    assert out_half.dtype.name == dtype
    assert {a.dtype.name for a in out_half._node.saved if a is not None and a.dtype.kind in "fV"} <= {dtype}
    step = 2.0 ** -10 if dtype == "float16" else 2.0 ** -7
    numpy.testing.assert_allclose(out_half.numpy().astype("float32"), out_full.numpy(), atol=4 * step)
    weights = rng.normal(size=out_full.shape).astype("float32")
    (ops.cast(out_half, "float32") * weights).sum().backward()
    (out_full * weights).sum().backward()
    for tensor_half, tensor_full in zip(half, full):
        assert tensor_half.grad.dtype.name == dtype
        got, want = tensor_half.grad.numpy().astype("float32"), tensor_full.grad.numpy()
        assert numpy.abs(got - want).max() <= 8 * step * max(1.0, numpy.abs(want).max())
