"""CUDA pieces the kernels share, and structures passed to a kernel by value.

- :data:`DIVIDER_SOURCE`: ``n / d`` for 32-bit ``n`` by a divisor known only
  at run time, as one multiply-high, an add and a shift (Granlund and
  Montgomery's method, as PyTorch's ``IntDivider``), where ``/`` would cost
  ~20 instructions and a 64-bit ``/`` ~70. The host computes the constants
  once (:func:`divider`).
- :data:`PACK_SOURCE`: ``Pack<V>``, V consecutive ``scalar_t`` loaded and
  stored as one 8- or 16-byte access (``ld.global.v4.f32``) where aligned.
- :data:`EXACT_SOURCE`: ``add_rn``/``sub_rn``/``mul_rn``, each one IEEE
  operation rounded to nearest that the compiler never fuses into an FMA
  (NVRTC contracts ``a * b + c`` by default): a kernel written with them
  rounds exactly as its NumPy reference, operation by operation.
- :class:`ByValue`: a C struct a kernel takes by value, declared once for
  both sides: its NumPy dtype (CuPy passes a size-1 NumPy array by value,
  copying ``sizeof(param)`` bytes from its data) and its C declaration,
  whose ``static_assert``s make NVRTC refuse a layout the dtype disagrees with.
"""
import numpy

DIVIDER_SOURCE = r"""
/* n / divisor for 0 <= n < 2^31, divisor >= 1: (umulhi(n, multiplier) + n) >> shift. */
__device__ __forceinline__ unsigned int divide(unsigned int n, Divider d) {
    return (__umulhi(n, d.multiplier) + n) >> d.shift;
}
"""

PACK_SOURCE = r"""
/* V consecutive scalars, one aligned vector access (V * sizeof(scalar_t) <= 16 bytes). */
template <int V> struct alignas(sizeof(scalar_t) * V) Pack { scalar_t v[V]; };
"""

EXACT_SOURCE = r"""
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
"""

INDEX_LIMIT = 2**31 - 1  # a kernel's 32-bit index math covers at most this many items per launch

_NUMPY_TYPES = {"int": numpy.int32, "unsigned int": numpy.uint32, "long long": numpy.int64,
                "unsigned long long": numpy.uint64, "unsigned char": numpy.uint8, "unsigned short": numpy.uint16}
_STRUCTS = {}


class ByValue:
    """A C struct that kernels take by value.

    Args:
        name: the C type name (unique among ByValue structs).
        fields: ``[(field, c_type, count)]`` in order; ``c_type`` is one of
            int, unsigned int, long long, unsigned long long, unsigned char,
            unsigned short, or the name of another ByValue struct; ``count``
            is an int (a 1-D array) or a tuple (a 2-D array), 1 for a scalar.

    Attributes:
        dtype: the NumPy dtype with C's layout (natural alignment, padded
            to the largest member's alignment).
        declaration: ``struct name {...};`` and the ``static_assert``s that
            check its size and every offset against ``dtype``.
    """

    def __init__(self, name, fields):
        if name in _STRUCTS:
            raise ValueError(f"a by-value struct named {name!r} is already declared.")
        self.name, self.fields = name, tuple(fields)
        specs, members = [], []
        for field, c_type, count in self.fields:
            base = _STRUCTS[c_type].dtype if c_type in _STRUCTS else numpy.dtype(_NUMPY_TYPES[c_type])
            shape = count if isinstance(count, tuple) else ((count,) if count != 1 else ())
            specs.append((field, base, shape) if shape else (field, base))
            members.append(f"    {c_type} {field}{''.join(f'[{n}]' for n in shape)};\n")
        self.dtype = numpy.dtype(specs, align=True)
        checks = [f'static_assert(sizeof({name}) == {self.dtype.itemsize}, "{name}: size differs from its NumPy dtype");\n']
        checks += [f'static_assert(__builtin_offsetof({name}, {field}) == {self.dtype.fields[field][1]}, '
                   f'"{name}.{field}: offset differs from its NumPy dtype");\n' for field, _, _ in self.fields]
        self.declaration = f"struct {name} {{\n{''.join(members)}}};\n{''.join(checks)}"
        _STRUCTS[name] = self

    def new(self):
        """A zeroed value: a size-1 NumPy array, which CuPy passes by value."""
        return numpy.zeros(1, self.dtype)

    def __repr__(self):
        return f"ByValue({self.name!r}, {self.dtype.itemsize} bytes)"


def by_value_structs():
    """Every ByValue struct, by C name (the launch-argument check reads it)."""
    return dict(_STRUCTS)


DIVIDER = ByValue("Divider", [("divisor", "unsigned int", 1), ("multiplier", "unsigned int", 1),
                              ("shift", "unsigned int", 1)])


def divider(divisor):
    """``(divisor, multiplier, shift)`` for :data:`DIVIDER_SOURCE`'s ``divide``:
    ``shift`` is the least s with ``2**s >= divisor`` and ``multiplier`` is
    ``floor(2**32 * (2**s - divisor) / divisor) + 1``; exact for every
    ``0 <= n < 2**31`` (tests/kernels/test_cuda_common.py checks it)."""
    divisor = int(divisor)
    if not 1 <= divisor <= INDEX_LIMIT:
        raise ValueError(f"a 32-bit divider takes a divisor in [1, {INDEX_LIMIT}], received {divisor}.")
    shift = (divisor - 1).bit_length()
    multiplier = ((1 << 32) * ((1 << shift) - divisor)) // divisor + 1
    return divisor, multiplier, shift


def set_divider(value, divisor):
    """Write :func:`divider` ``(divisor)`` into a Divider field of a ByValue value."""
    value["divisor"], value["multiplier"], value["shift"] = divider(divisor)


def vector_width(channels, itemsize, *addresses):
    """The widest V (16, 8 or 4 bytes per access, or 1 scalar) with ``channels % V == 0``
    and every address aligned to ``V * itemsize``."""
    for width in (4, 2):
        if width * itemsize <= 16 and channels % width == 0 and all(a % (width * itemsize) == 0 for a in addresses):
            return width
    return 1
