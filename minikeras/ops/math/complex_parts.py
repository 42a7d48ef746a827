"""Complex numbers: real, imag, conj/conjugate, angle, polar, view_as_real,
view_as_complex.

minikeras differentiates real-valued graphs: ``real`` and ``conj`` pass
gradients through (on real inputs they are the identity); ``imag``,
``angle``, ``polar`` and the views return no gradient.
"""

__all__ = ["real", "imag", "conj", "conjugate", "angle", "polar", "view_as_real", "view_as_complex"]

import numpy

from minikeras.ops.math._elementwise import binary, call_without_gradient, unary
from minikeras._support.argument_validation import validate_tensor_input

real = unary("real", lambda xp, x: xp.real(x), lambda xp, x, out: 1,
             "The real part (the input itself for real dtypes).", floats=False)
conjugate = unary("conjugate", lambda xp, x: xp.conj(x), lambda xp, x, out: 1,
                  "The complex conjugate (the input itself for real dtypes).", floats=False)
conj = conjugate
imag = unary("imag", lambda xp, x: xp.imag(x) if x.dtype.kind == "c" else xp.zeros_like(x), None,
             "The imaginary part (zeros for real dtypes); no gradient.", floats=False)
angle = unary("angle", lambda xp, x: xp.angle(x), None,
              "The argument of each complex number (0 or pi for reals; float32 for integers); no gradient.")


def _polar(xp, magnitude, phase):
    return magnitude * xp.cos(phase) + 1j * (magnitude * xp.sin(phase))


_polar_binary = binary("polar", _polar, None, "")


def polar(abs_, angle):
    """``abs_ * exp(1j * angle)`` as a complex tensor (no gradient); a bool magnitude is refused, a bool
    angle is 0 or 1 radian (as Keras)."""
    validate_tensor_input("polar", abs_, allow_bool=False, allow_complex=False, allow_sequence=True)
    validate_tensor_input("polar", angle, allow_complex=False, allow_sequence=True)
    if getattr(angle, "dtype", None) == numpy.bool_:
        angle = angle.astype("float32")
    return _polar_binary(abs_, angle)


def view_as_real(x):
    """A tensor as real pairs ``(real, imag)``: shape ``x.shape + (2,)``; a real tensor keeps its dtype,
    its imaginary parts 0 (Keras stacks ``real(x)`` and ``imag(x)``)."""
    def compute(xp, a):
        if a.dtype.kind != "c":
            return xp.stack([a, xp.zeros_like(a)], axis=-1)
        return xp.stack([xp.real(a), xp.imag(a)], axis=-1)

    return call_without_gradient("view_as_real", compute, x)


def view_as_complex(x):
    """Real pairs (last axis of size 2) as a complex tensor (ints and bools as float32, as Keras)."""
    def compute(xp, a):
        if a.ndim == 0 or a.shape[-1] != 2 or a.dtype.kind not in "biuf":
            raise ValueError(f"view_as_complex expects a real tensor whose last axis is 2, received "
                             f"shape {tuple(a.shape)} of dtype {a.dtype}.")
        if a.dtype.kind != "f":
            a = a.astype("float32")
        return a[..., 0] + 1j * a[..., 1]

    return call_without_gradient("view_as_complex", compute, x)
