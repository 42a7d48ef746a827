"""The op test base: an op test supplies inputs and a NumPy reference; this
checks the forward value, dtype and device, and the gradient by finite
differences in float64."""
import numpy

import minikeras as mk
from minikeras.device import default_device
from minikeras.autograd import gradcheck


def check_op(op, reference, inputs, grad=True, atol=1e-5, rtol=1e-4, grad_inputs=None, dtype_kept=True,
             check_16_bit=True):
    """Check ``op(*tensors)`` against ``reference(*arrays)``.

    Args:
        op: a function of Tensors returning a Tensor.
        reference: the same function written with NumPy.
        inputs: numpy arrays (float ones are tested as float64 for gradients
            and as float32 for the forward value and dtype).
        grad: run gradcheck.
        grad_inputs: indices of inputs to differentiate (default: float ones).
        check_16_bit: also run the forward on float16 and bfloat16 inputs
            (dtype kept, value near the reference on the rounded inputs).
    """
    inputs = [numpy.asarray(a) for a in inputs]
    # Forward in float32: value, dtype and device.
    as32 = [a.astype(numpy.float32) if a.dtype.kind == "f" else a for a in inputs]
    out = op(*[mk.tensor(a) for a in as32])
    expected = reference(*[a.astype(numpy.float64) if a.dtype.kind == "f" else a for a in inputs])
    numpy.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-5)
    if dtype_kept and any(a.dtype.kind == "f" for a in inputs) and out.dtype.kind == "f":
        assert out.dtype == numpy.float32, f"float32 inputs gave {out.dtype}"
    assert out.device is default_device()
    if check_16_bit:
        _check_16_bit_forward(op, reference, inputs, dtype_kept)
    # Forward in float64 matches the reference tightly.
    out64 = op(*[mk.tensor(a) for a in inputs])
    numpy.testing.assert_allclose(out64.numpy(), expected, rtol=1e-10, atol=1e-12)
    if grad:
        tensors = []
        for i, a in enumerate(inputs):
            wants = a.dtype.kind == "f" if grad_inputs is None else i in grad_inputs
            tensors.append(mk.Tensor(a, requires_grad=wants))
        assert gradcheck(op, tensors, atol=atol, rtol=rtol)
    return out


# Largest error of a 16-bit forward, relative to max(1, max |reference|): a few
# steps of the type (float16's is 2**-10, bfloat16's 2**-7).
_16_BIT = {"float16": 1e-2, "bfloat16": 6e-2}


def _check_16_bit_forward(op, reference, inputs, dtype_kept):
    """The op on float16 and bfloat16 inputs keeps the dtype and is near the
    reference evaluated on the same (rounded) inputs in float64."""
    if not any(a.dtype.kind == "f" for a in inputs):
        return
    for name, tolerance in _16_BIT.items():
        rounded = [mk.tensor(a).astype(name) if a.dtype.kind == "f" else mk.tensor(a) for a in inputs]
        out = op(*rounded)
        as64 = [t.numpy().astype(numpy.float64) if t.dtype.name == name else t.numpy() for t in rounded]
        expected = numpy.asarray(reference(*as64))
        if dtype_kept and out.dtype.kind in "fV" and expected.dtype.kind == "f":
            assert out.dtype.name == name, f"{name} inputs gave {out.dtype}"
        got = out.numpy()
        if expected.dtype.kind == "f" and expected.size:
            got = got.astype(numpy.float64)
            finite = numpy.isfinite(expected)
            scale = max(1.0, float(numpy.abs(expected[finite]).max(initial=0.0)))
            numpy.testing.assert_allclose(got[finite], expected[finite], rtol=tolerance, atol=tolerance * scale,
                                          err_msg=f"{name} forward")
