"""Checking analytic gradients against central finite differences."""
import numpy

from minikeras.autograd.grad_mode import enable_grad


def numerical_grad(fn, inputs, index, eps=1e-6, output_grad=None):
    """Central finite-difference gradient of ``sum(fn(*inputs) * output_grad)``
    with respect to ``inputs[index]`` (host float64 arrays)."""
    from minikeras.autograd.tensor import Tensor

    base = inputs[index]
    values = numpy.array(base.numpy(), dtype=numpy.float64, order="C")  # reshape(-1) must be a view
    grad = numpy.zeros_like(values)
    flat = values.reshape(-1)
    for i in range(flat.size):
        original = flat[i]
        totals = []
        for step in (eps, -eps):
            flat[i] = original + step
            trial = list(inputs)
            trial[index] = Tensor(values.copy(), device=base.device)
            out = fn(*trial)
            out_host = out.numpy().astype(numpy.float64)
            weights = numpy.ones_like(out_host) if output_grad is None else output_grad
            totals.append(float((out_host * weights).sum()))
        flat[i] = original
        grad.reshape(-1)[i] = (totals[0] - totals[1]) / (2 * eps)
    return grad


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-4, raise_exception=True, seed=0):
    """Compare the gradients backward() gives with finite differences.

    ``fn`` maps Tensors to a Tensor. Every floating input that requires grad
    is checked, in float64 (inputs are converted). A random weighting of the
    output is used, so that errors in one output element cannot cancel.

    Args:
        fn: the function to check.
        inputs: Tensors or arrays; floating ones are made float64 and
            require grad.
        eps: finite-difference step.
        atol, rtol: tolerances of the comparison.
        raise_exception: raise AssertionError on a mismatch (else return False).

    Returns:
        True when every gradient matches.
    """
    from minikeras.autograd.tensor import Tensor

    tensors = []
    for value in inputs:
        if isinstance(value, Tensor):
            array, device, wants = value.numpy(), value.device, value.requires_grad or value.dtype.kind == "f"
        else:
            array, device, wants = numpy.asarray(value), None, numpy.asarray(value).dtype.kind == "f"
        if array.dtype.kind == "f":
            array = array.astype(numpy.float64)
        tensors.append(Tensor(array, requires_grad=wants, device=device))
    with enable_grad():
        out = fn(*tensors)
    rng = numpy.random.default_rng(seed)
    output_grad = rng.uniform(0.5, 1.5, size=out.shape)
    out.backward(output_grad)
    for index, tensor in enumerate(tensors):
        if not tensor.requires_grad:
            continue
        analytic = numpy.zeros(tensor.shape) if tensor.grad is None else tensor.grad.numpy()
        detached = [Tensor(t.numpy(), device=t.device) for t in tensors]
        numeric = numerical_grad(fn, detached, index, eps, output_grad)
        if not numpy.allclose(analytic, numeric, atol=atol, rtol=rtol):
            if raise_exception:
                worst = numpy.unravel_index(numpy.argmax(numpy.abs(analytic - numeric)), analytic.shape) if analytic.size else ()
                raise AssertionError(
                    f"gradcheck failed for input {index} (shape {tensor.shape}): max abs difference "
                    f"{numpy.max(numpy.abs(analytic - numeric)):.3g} at {worst}.\nanalytic:\n{analytic}\nnumeric:\n{numeric}"
                )
            return False
    return True
