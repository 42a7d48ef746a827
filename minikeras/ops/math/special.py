"""The error function: ``erf`` and the array kernels behind it, which the
exact GELU (``ops/nn/activations.py``) also uses through
:func:`_normal_cdf_array`.
"""

__all__ = ["erf"]

import math

from minikeras.autograd import Function
from minikeras.ops.math._operands import _as_tensor, _float_array


# W. J. Cody's rational Chebyshev approximations of erf and erfc (Math. Comp.
# 23, 1969; the coefficients of SPECFUN's CALERF), good to about 1e-16
# relative in float64. NumPy has no erf and SciPy is no dependency.
_ERF_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
          3.20937758913846947e03, 1.85777706184603153e-1)
_ERF_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
          2.84423683343917062e03)
_ERFC_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
           2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
           2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_ERFC_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
           1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
           3.43936767414372164e03, 1.23033935480374942e03)
_ERFC_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
           1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_ERFC_Q = (2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1,
           6.05183413124413191e-2, 2.33520497626869185e-3)
_ERF_SMALL = 0.46875  # below it erf itself is approximated, above it erfc
# For float32 (and float16) a single rational function on [-4, 4] (Eigen's
# and XLA's erf for float) is good to 5e-7, a few float32 ulps: 16 array
# passes instead of Cody's ~60.
_ERF32_ALPHA = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
                -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02)
_ERF32_BETA = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
               -1.42647390514189e-02)
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# The evaluations below work in place on fresh arrays and blend the pieces
# with masks instead of ``xp.where``: on the CPU, a where() over a random
# mask costs ~10 ns an element (branch mispredictions), ten times a multiply.
# Every piece is evaluated on clamped arguments, so all are finite and a
# mask-weighted blend is exact.


def _erf_small(x):
    """erf(x), accurate for |x| <= 0.46875 (any sign)."""
    z = x * x
    numerator = z * _ERF_A[4]
    denominator = z + _ERF_B[0]
    for i in range(3):
        numerator += _ERF_A[i]
        numerator *= z
        denominator *= z
        denominator += _ERF_B[i + 1]
    numerator += _ERF_A[3]
    numerator *= x
    numerator /= denominator
    return numerator


def _erfc_large(xp, y):
    """erfc(y) for y >= 0.46875 (values below are computed but meaningless)."""
    middle = xp.minimum(y, 4.0)
    scaled = middle * _ERFC_C[8]
    denominator = middle + _ERFC_D[0]
    for i in range(7):
        scaled += _ERFC_C[i]
        scaled *= middle
        denominator *= middle
        denominator += _ERFC_D[i + 1]
    scaled += _ERFC_C[7]
    scaled /= denominator  # erfcx(y) = exp(y^2) erfc(y) on [0.46875, 4]
    tail = xp.maximum(y, 4.0)
    z = 1.0 / (tail * tail)
    correction = z * _ERFC_P[5]
    denominator = z + _ERFC_Q[0]
    for i in range(4):
        correction += _ERFC_P[i]
        correction *= z
        denominator *= z
        denominator += _ERFC_Q[i + 1]
    correction += _ERFC_P[4]
    correction *= z
    correction /= denominator
    correction -= _INV_SQRT_PI
    correction /= tail  # -erfcx(y) beyond 4
    # Keep each piece on its own side (one of the two products is exactly 0).
    beyond = y > 4.0
    correction *= beyond
    scaled *= ~beyond
    scaled -= correction  # erfcx(y) from whichever piece applies
    # exp underflows to 0 for huge y, as erfc does.
    result = xp.exp(-(y * y))
    result *= scaled
    return result


def _blend(inside, outside, mask):
    """``inside`` where ``mask`` holds, else ``outside`` (both finite; the
    arrays are reused)."""
    inside *= mask
    outside *= ~mask
    inside += outside
    return inside


def _erf_float32(xp, x):
    """erf for float32 and narrower inputs (absolute error below 5e-7)."""
    narrow = x.dtype.itemsize < 4
    clamped = xp.clip(x.astype("float32") if narrow else x, -4.0, 4.0)
    z = clamped * clamped
    numerator = z * _ERF32_ALPHA[0]
    for coefficient in _ERF32_ALPHA[1:-1]:
        numerator += coefficient
        numerator *= z
    numerator += _ERF32_ALPHA[-1]
    numerator *= clamped
    denominator = z * _ERF32_BETA[0]
    for coefficient in _ERF32_BETA[1:-1]:
        denominator += coefficient
        denominator *= z
    denominator += _ERF32_BETA[-1]
    numerator /= denominator
    numerator = xp.clip(numerator, -1.0, 1.0)  # the rational overshoots 1 by an ulp near |x| = 4
    return numerator.astype(x.dtype) if narrow else numerator


def _erf_array(xp, x):
    """erf of a floating array: float64 error about 1e-16, float32 below 5e-7."""
    if x.dtype.itemsize <= 4:
        return _erf_float32(xp, x)
    y = xp.abs(x)
    large = _erfc_large(xp, y)
    large -= 1.0
    large = xp.copysign(large, x)  # sign(x) * (1 - erfc(|x|)): only the magnitude of large counts
    return _blend(_erf_small(xp.clip(x, -_ERF_SMALL, _ERF_SMALL)), large, y <= _ERF_SMALL)


def _normal_cdf_array(xp, x):
    """P(X <= x) for a standard normal X, with relative accuracy in the left
    tail too in float64 (computed from erfc there, not as 1 - erf)."""
    z = x * (1.0 / math.sqrt(2.0))
    if x.dtype.itemsize <= 4:
        # float32 has the absolute accuracy the rest of a float32 model has.
        cdf = _erf_float32(xp, z)
        cdf *= 0.5
        cdf += 0.5
        return cdf
    y = xp.abs(z)
    half_tail = _erfc_large(xp, y)
    half_tail *= 0.5
    # half_tail for z < 0, 1 - half_tail for z >= 0
    large = half_tail * -2.0
    large += 1.0
    large *= z >= 0
    large += half_tail  # exact where z < 0: half_tail + 0
    small = _erf_small(xp.clip(z, -_ERF_SMALL, _ERF_SMALL))
    small *= 0.5
    small += 0.5
    return _blend(small, large, y <= _ERF_SMALL)



class Erf(Function):
    def forward(self, x):
        x = _float_array(x)
        if self.needs_input_grad[0]:
            self.save_for_backward(x)
        return _erf_array(self.device.xp, x)

    def backward(self, grad):
        (x,) = self.saved
        return grad * (self.device.xp.exp(-(x * x)) * _TWO_OVER_SQRT_PI)


def erf(x):
    """Elementwise error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``.

    Computed with W. J. Cody's rational approximations in float64 (error
    about 1e-16) and one rational function in float32 (error below 5e-7), so
    no SciPy is needed.
    """
    return Erf().apply(_as_tensor("erf", x, allow_complex=False))
