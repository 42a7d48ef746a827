"""Tensor products: einsum, tensordot, dot, inner, outer, vdot, kron, cross.

``einsum`` is one Function: its forward is ``xp.einsum`` (with the
contraction order NumPy/CuPy choose, ``optimize=True`` for three or more
operands) and the gradient of each operand is itself one einsum of the
output gradient with the other operands. Subscripts are first written out
explicitly (``...`` becomes letters), so the backward sees every axis by
name; an axis that appears in only one operand and not in the output is
summed in forward and broadcast back in backward. Repeating a letter within
one operand (a diagonal, ``"ii->i"``) has no gradient here: the backward
raises a clear error. The other products are einsums or compositions.
"""

__all__ = ["einsum", "tensordot", "dot", "inner", "outer", "vdot", "kron", "cross"]

import string

from minikeras.autograd import Function
from minikeras.ops.array.indexing import getitem
from minikeras.ops.array.joining import stack
from minikeras.ops.array.reshaping import moveaxis, reshape
from minikeras.ops.math._elementwise import operand
from minikeras.ops.math._operands import _as_tensor
from minikeras.ops.math.matmul import matmul
from minikeras.ops._promotion import result_type
from minikeras.ops.reduce import sum as _sum
from minikeras._support.argument_validation import validate_axis, validate_int


def _explicit(subscripts, shapes):
    """``subscripts`` with ``...`` replaced by fresh letters and the output written out."""
    text = subscripts.replace(" ", "")
    if "->" in text:
        inputs_text, output = text.split("->")
    else:
        inputs_text, output = text, None
    inputs = inputs_text.split(",")
    if len(inputs) != len(shapes):
        raise ValueError(f"einsum: subscripts {subscripts!r} name {len(inputs)} operands, received {len(shapes)}.")
    used = set(text) - set(".,->")
    fresh = [letter for letter in string.ascii_letters if letter not in used]
    ellipsis_rank = 0
    for term, shape in zip(inputs, shapes):
        letters = len(term.replace("...", ""))
        if "..." in term:
            ellipsis_rank = max(ellipsis_rank, len(shape) - letters)
        elif letters != len(shape):
            raise ValueError(f"einsum: subscript {term!r} has {letters} letters for an operand of shape {shape}.")
    ellipsis_letters = "".join(fresh[:ellipsis_rank])
    expanded = []
    for term, shape in zip(inputs, shapes):
        if "..." in term:
            rank = len(shape) - len(term.replace("...", ""))
            term = term.replace("...", ellipsis_letters[ellipsis_rank - rank:] if rank else "")
        expanded.append(term)
    if output is None:
        counts = {}
        for term in expanded:
            for letter in term:
                counts[letter] = counts.get(letter, 0) + 1
        named = sorted(letter for letter, count in counts.items() if count == 1 and letter not in ellipsis_letters)
        output = ellipsis_letters + "".join(named)
    else:
        output = output.replace("...", ellipsis_letters)
    return expanded, output


class Einsum(Function):
    half_in_float32 = True  # einsum takes no 16-bit floats (NumPy: no bfloat16)

    def __init__(self, inputs, output):
        self.inputs, self.output = inputs, output

    def forward(self, *arrays):
        xp = self.device.xp
        self.shapes = [array.shape for array in arrays]
        if any(self.needs_input_grad):
            self.save_for_backward(*arrays)
        spec = ",".join(self.inputs) + "->" + self.output
        # optimize=True lets NumPy/CuPy contract through BLAS (tensordot/matmul) rather than loop.
        return xp.einsum(spec, *arrays, optimize=True)

    def backward(self, grad):
        arrays = self.saved
        xp = self.device.xp
        grads = []
        for index, term in enumerate(self.inputs):
            if not self.needs_input_grad[index]:
                grads.append(None)
                continue
            if len(set(term)) != len(term):
                raise NotImplementedError(
                    f"einsum: no gradient for operand {index} with a repeated subscript ({term!r}); "
                    "take the diagonal with ops.diagonal first.")
            others = [(t, a) for i, (t, a) in enumerate(zip(self.inputs, arrays)) if i != index]
            available = set(self.output).union(*[set(t) for t, _ in others])
            target = "".join(letter for letter in term if letter in available)
            spec = ",".join([self.output] + [t for t, _ in others]) + "->" + target
            partial = xp.einsum(spec, grad, *[a for _, a in others], optimize=True)
            if target != term:  # axes summed away in forward alone: broadcast back
                shape = self.shapes[index]
                partial = partial.reshape(tuple(shape[i] if letter in available else 1
                                                for i, letter in enumerate(term)))
                partial = xp.broadcast_to(partial, shape)
            grads.append(partial)
        return tuple(grads)


def einsum(subscripts, *operands, **kwargs):
    """Einstein summation over ``operands`` (``numpy.einsum``'s subscripts, ``...`` included).

    Operands of different dtypes compute in Keras's promoted dtype (int8
    operands give int32, as Keras).

    Raises:
        ValueError: the subscripts do not match the operands.
    """
    if kwargs:
        raise TypeError(f"einsum: unexpected keyword arguments {sorted(kwargs)}.")
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts must be a string, received {type(subscripts).__name__}.")
    tensors = [_as_tensor("einsum", operand("einsum", value)) for value in operands]
    dtype = result_type(*tensors)
    if dtype.kind in "iu" and dtype.itemsize < 4:
        dtype = result_type(dtype, "int32")
    elif dtype.kind == "b":
        dtype = result_type("int32")
    tensors = [tensor if tensor.dtype == dtype else tensor.astype(dtype) for tensor in tensors]
    inputs, output = _explicit(subscripts, [tensor.shape for tensor in tensors])
    sizes = {}
    for term, tensor in zip(inputs, tensors):
        for letter, size in zip(term, tensor.shape):
            known = sizes.setdefault(letter, size)
            if known != size and 1 not in (known, size):
                raise ValueError(f"einsum: subscript {letter!r} has sizes {known} and {size} in "
                                 f"{subscripts!r} (operand shapes {[t.shape for t in tensors]}).")
    return Einsum(inputs, output).apply(*tensors)


def tensordot(x1, x2, axes=2):
    """Sum products over ``axes`` (an int: the last/first that many; or two lists of axes)."""
    a, b = _as_tensor("tensordot", operand("tensordot", x1)), _as_tensor("tensordot", operand("tensordot", x2))
    if not isinstance(axes, (tuple, list)):
        axes = validate_int("tensordot", "axes", axes, minimum=0, maximum=min(a.ndim, b.ndim))
        axes_a, axes_b = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        if len(axes) != 2:
            raise ValueError(f"tensordot: axes must be an int or two lists of axes (of x1 and x2), received "
                             f"{axes!r}.")
        axes_a, axes_b = ([side] if not isinstance(side, (tuple, list)) else list(side) for side in axes)
        if len(axes_a) != len(axes_b):
            raise ValueError(f"tensordot: axes must pair up, received {axes!r}.")
        axes_a = [validate_axis("tensordot", axis, a.ndim, "axes of x1") for axis in axes_a]
        axes_b = [validate_axis("tensordot", axis, b.ndim, "axes of x2") for axis in axes_b]
        if len(set(axes_a)) != len(axes_a) or len(set(axes_b)) != len(axes_b):
            raise ValueError(f"tensordot: repeated axis in {axes!r}.")
    letters = iter(string.ascii_letters)
    term_a = [next(letters) for _ in range(a.ndim)]
    term_b = [next(letters) for _ in range(b.ndim)]
    for axis_a, axis_b in zip(axes_a, axes_b):
        if a.shape[axis_a] != b.shape[axis_b]:
            raise ValueError(f"tensordot: axis {axis_a} of x1 (size {a.shape[axis_a]}) and axis {axis_b} of x2 "
                             f"(size {b.shape[axis_b]}) differ.")
        term_b[axis_b] = term_a[axis_a]
    output = [letter for i, letter in enumerate(term_a) if i not in axes_a]
    output += [letter for i, letter in enumerate(term_b) if i not in axes_b]
    return einsum("".join(term_a) + "," + "".join(term_b) + "->" + "".join(output), a, b)


def dot(x1, x2):
    """``numpy.dot``: products of scalars, inner products of vectors, matmul of matrices,
    and for N-D the sum over the last axis of ``x1`` and the second-to-last of ``x2``."""
    a, b = _as_tensor("dot", operand("dot", x1)), _as_tensor("dot", operand("dot", x2))
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if b.ndim == 1:
        return tensordot(a, b, ([-1], [0]))
    if a.ndim <= 2 and b.ndim == 2:
        return matmul(a, b)
    return tensordot(a, b, ([-1], [-2]))


def inner(x1, x2):
    """Sum of products over the last axes of both (``numpy.inner``)."""
    a, b = _as_tensor("inner", operand("inner", x1)), _as_tensor("inner", operand("inner", x2))
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return tensordot(a, b, ([-1], [-1]))


def outer(x1, x2):
    """Outer product of the flattened inputs: ``out[i, j] = x1[i] * x2[j]``."""
    a, b = _as_tensor("outer", operand("outer", x1)), _as_tensor("outer", operand("outer", x2))
    return reshape(a, (-1, 1)) * reshape(b, (1, -1))


def vdot(x1, x2):
    """Dot product of the flattened inputs (the first conjugated, as ``numpy.vdot``)."""
    from minikeras.ops.math.complex_parts import conj

    a, b = _as_tensor("vdot", operand("vdot", x1)), _as_tensor("vdot", operand("vdot", x2))
    if a.size != b.size:
        raise ValueError(f"vdot: the inputs must have as many elements, received shapes {a.shape} and {b.shape}.")
    a = conj(a) if a.dtype.kind == "c" else a
    return _sum(reshape(a, (-1,)) * reshape(b, (-1,)))


def kron(x1, x2):
    """Kronecker product: blocks ``x1[i, j] * x2`` (inputs padded to the same rank with leading 1s)."""
    a, b = _as_tensor("kron", operand("kron", x1)), _as_tensor("kron", operand("kron", x2))
    ndim = max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (ndim - a.ndim) + a.shape)
    b = reshape(b, (1,) * (ndim - b.ndim) + b.shape)
    interleaved_a = reshape(a, tuple(s for size in a.shape for s in (size, 1)))
    interleaved_b = reshape(b, tuple(s for size in b.shape for s in (1, size)))
    return reshape(interleaved_a * interleaved_b, tuple(p * q for p, q in zip(a.shape, b.shape)))


def cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (or 2-vectors: the z component) along the given axes."""
    a, b = _as_tensor("cross", operand("cross", x1)), _as_tensor("cross", operand("cross", x2))
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(f"cross: the vector axes must have size 2 or 3, received {a.shape[-1]} and {b.shape[-1]}.")

    def component(v, i):
        return getitem(v, (Ellipsis, i)) if i < v.shape[-1] else None

    a0, a1, a2 = (component(a, i) for i in range(3))
    b0, b1, b2 = (component(b, i) for i in range(3))
    if a2 is None and b2 is None:
        return a0 * b1 - a1 * b0
    zero_a = a2 if a2 is not None else 0
    zero_b = b2 if b2 is not None else 0
    c0 = a1 * zero_b - zero_a * b1
    c1 = zero_a * b0 - a0 * zero_b
    c2 = a0 * b1 - a1 * b0
    return moveaxis(stack([c0, c1, c2], -1), -1, axisc)
