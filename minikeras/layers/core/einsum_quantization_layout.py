"""Where EinsumDense's quantization scales live (Keras 3's ``_analyze_quantization_info``).

An einsum layer's kernel is quantized over its contracted axes (those of
its labels missing from the output), and its inputs likewise at each call.
The scale of each, computed with the reduced axes kept (size 1), must be
rearranged to broadcast against the output: transposed into the output's
label order, with the reduced axes standing in for output labels the
tensor lacks, size-1 axes added for the missing labels left over, and
reduced axes with no place squeezed out. This module reproduces Keras's
rules exactly, since the kernel scale's stored shape depends on them (files
move both ways); ``...`` is written out as fresh labels first.
"""
import re
import string

import numpy

__all__ = ["QuantizationLayout", "quantization_layout"]


def _explicit_specs(equation, input_rank):
    """``(input, kernel, output)`` label strings with ``...`` replaced by
    unused letters (uppercase first, as Keras's sorted choice)."""
    text = re.sub(r"\.\.\.", "0", equation)
    for pattern, side in (("([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)", None),
                          ("0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)", "left"),
                          ("([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0", "right")):
        match = re.fullmatch(pattern, text)
        if match is None:
            continue
        inputs, kernel, outputs = match.groups()
        if side is not None:
            fresh = sorted(set(string.ascii_letters) - set(inputs) - set(kernel) - set(outputs))
            for index in range(input_rank - len(inputs)):
                inputs = fresh[index] + inputs if side == "left" else inputs + fresh[index]
                outputs = fresh[index] + outputs if side == "left" else outputs + fresh[index]
        return inputs, kernel, outputs
    raise ValueError(f"Invalid einsum equation '{equation}'. Equations must be in the form [X],[Y]->[Z], "
                     "...[X],[Y]->...[Z], or [X]...,[Y]->[Z]....")


class _Placement:
    """How one operand's scale is rearranged against the output.

    Each reduced axis takes the next output position the operand lacks; when
    none is left it is marked to squeeze and inserted at the position used
    last (Keras's loop reuses a stale variable there: ``index``, carried
    from one operand to the next, starts as the output position of the
    kernel's last label, -1 when absent). Layouts that rely on it rarely
    broadcast; :meth:`QuantizationLayout.check` refuses those that do not.
    """

    def __init__(self, labels, output, index):
        self.reduced = [i for i, label in enumerate(labels) if label not in output]
        self.expand = [i for i, label in enumerate(output) if label not in labels]
        self.transpose = [labels.index(label) for label in output if label in labels]
        self.squeeze = []
        for axis in self.reduced:
            if self.expand:
                index = self.expand.pop(0)
            else:
                self.squeeze.append(axis)
            self.transpose.insert(index, axis)
        self.last_index = index

    def for_output(self, ops, scale):
        """A scale computed with the reduced axes kept, laid out against the output."""
        if self.transpose:
            scale = ops.transpose(scale, self.transpose)
        if self.expand:
            scale = ops.expand_dims(scale, self.expand)
        if self.squeeze:
            scale = ops.squeeze(scale, self.squeeze)
        return scale

    def for_operand(self, xp, scale):
        """The inverse of :meth:`for_output` on an array (the kernel scale, to
        dequantize the kernel)."""
        if self.squeeze:
            scale = xp.expand_dims(scale, tuple(self.squeeze))
        if self.expand:
            scale = xp.squeeze(scale, tuple(self.expand))
        if self.transpose:
            scale = xp.transpose(scale, [int(axis) for axis in numpy.argsort(self.transpose)])
        return scale


class QuantizationLayout:
    """The scales' layout for one equation and input rank.

    Attributes:
        equation: the equation with explicit labels (no ``...``).
        gradient_equation: ``"<output>,<kernel>-><inputs>"``, the inputs' gradient.
        inputs, kernel: the :class:`_Placement` of each operand's scale.
    """

    def __init__(self, equation, input_rank):
        inputs, kernel, outputs = _explicit_specs(equation, input_rank)
        self.equation = f"{inputs},{kernel}->{outputs}"
        self.gradient_equation = f"{outputs},{kernel}->{inputs}"
        self.source = equation
        self.inputs = _Placement(inputs, outputs, outputs.find(kernel[-1]))
        self.kernel = _Placement(kernel, outputs, self.inputs.last_index)

    def check(self):
        """Raise ValueError unless both scales, laid out, broadcast against the
        output (Keras fails inside the call for such equations). Each label
        stands for a distinct prime size, so that no axis broadcasts by chance."""
        from minikeras import ops

        labels = sorted(set(self.equation) - set(",->"))
        size = dict(zip(labels, (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71)))
        specs = self.equation.replace("->", ",").split(",")
        output = tuple(size[label] for label in specs[2])
        try:
            for placement, spec in ((self.inputs, specs[0]), (self.kernel, specs[1])):
                kept = [1 if axis in placement.reduced else size[label] for axis, label in enumerate(spec)]
                laid_out = placement.for_output(ops, ops.zeros(kept))
                numpy.broadcast_shapes(tuple(laid_out.shape), output)
        except ValueError:
            raise ValueError(f"EinsumDense cannot be quantized with equation '{self.source}': its contracted axes "
                             "have no place among the output's axes, so the quantization scales cannot be laid out "
                             "against the output (Keras 3.15 fails on it too).") from None

    def kernel_scale_shape(self, kernel_shape):
        """The per-channel kernel scale's stored shape (Keras's ``_get_kernel_scale_shape``)."""
        shape = numpy.array(kernel_shape)
        shape[self.kernel.reduced] = 1
        shape = shape[self.kernel.transpose].tolist()
        for axis in sorted(self.kernel.expand):
            shape.insert(axis, 1)
        for axis in sorted(self.kernel.squeeze, reverse=True):
            shape.pop(axis)
        return tuple(int(size) for size in shape)

    def flat_kernel_shape(self, kernel_shape):
        """``(rows, columns)``: the sizes of the reduced and the other kernel
        axes (Keras reshapes the kernel to it for int4, whatever the axes' order)."""
        rows = int(numpy.prod([kernel_shape[i] for i in self.kernel.reduced])) if self.kernel.reduced else 1
        return rows, int(numpy.prod(kernel_shape)) // max(rows, 1)


def quantization_layout(equation, input_rank):
    """The :class:`QuantizationLayout` of ``equation`` for inputs of rank ``input_rank``."""
    return QuantizationLayout(equation, input_rank)
