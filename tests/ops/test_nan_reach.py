"""Where NaN and inf reach, as Keras 3.15 answers (the Keras-referenced fuzz,
issue 36): a NaN in one row of b stays in the rows of a triangular solve
that depend on it, least squares and slogdet of NaN give NaN instead of
an error or a sign of 1, and the separable interpolations (resize,
conv_transpose) and hsv_to_rgb do not spread a NaN or inf through zero
weights. Keras's answers (TensorFlow; torch agrees) are quoted."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from minikeras.autograd import gradcheck

NAN = numpy.nan


def _upper():
    return numpy.array([[2.0, 1.0, -1.0], [0.0, 3.0, 0.5], [0.0, 0.0, 1.5]], "float32")


def test_a_nan_in_b_reaches_only_the_rows_that_depend_on_it():
    b = numpy.array([[NAN, 1.0], [2.0, 3.0], [1.0, -1.0]], "float32")
    x = ops.solve_triangular(_upper(), b).numpy()  # upper: row 0 depends on rows 1 and 2, not the reverse
    assert numpy.isnan(x[0, 0]) and numpy.isfinite(x[1:]).all() and numpy.isfinite(x[0, 1])  # was NaN in rows 1, 2
    finite = b.copy()
    finite[0, 0] = 0.0
    numpy.testing.assert_allclose(x[1:], numpy.linalg.solve(_upper(), finite)[1:], rtol=1e-6)
    lower = ops.solve_triangular(_upper().T, b, lower=True).numpy()
    assert numpy.isnan(lower[:, 0]).all() and numpy.isfinite(lower[:, 1]).all()  # every row of lower depends on row 0


@pytest.mark.parametrize("lower", [False, True])
def test_the_triangular_solve_reads_one_triangle_and_matches_numpy(lower):
    full = numpy.array([[2.0, 5.0, -1.0], [7.0, 3.0, 0.5], [-4.0, 9.0, 1.5]])
    triangle = numpy.tril(full) if lower else numpy.triu(full)
    b = numpy.array([1.0, -2.0, 0.5])
    numpy.testing.assert_allclose(ops.solve_triangular(full, b, lower=lower).numpy(), numpy.linalg.solve(triangle, b))
    batched = numpy.stack([full, full * 2])
    rhs = numpy.ones((2, 3, 2))
    numpy.testing.assert_allclose(ops.solve_triangular(batched, rhs, lower=lower).numpy(),
                                  numpy.linalg.solve(numpy.tril(batched) if lower else numpy.triu(batched), rhs))


@pytest.mark.parametrize("lower", [False, True])
def test_the_triangular_solve_gradient(lower):
    a = mk.Tensor(numpy.array([[2.0, 0.5, -1.0], [0.3, 3.0, 0.5], [0.2, -0.4, 1.5]]), requires_grad=True)
    b = mk.Tensor(numpy.array([[1.0, 2.0], [-1.0, 0.5], [0.25, 1.0]]), requires_grad=True)
    assert gradcheck(lambda m, v: ops.solve_triangular(m, v, lower=lower), [a, b])
    vector = mk.Tensor(numpy.array([1.0, -1.0, 0.5]), requires_grad=True)
    assert gradcheck(lambda m, v: ops.solve_triangular(m, v, lower=lower), [a, vector])


def test_least_squares_of_nan_is_nan_where_it_reaches():
    a = numpy.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]], "float32")
    b = numpy.array([[NAN, 1.0], [2.0, 3.0], [1.0, 0.0]], "float32")
    x = ops.lstsq(a, b).numpy()  # was refused; TensorFlow: the NaN column NaN, the other solved
    assert numpy.isnan(x[:, 0]).all()
    numpy.testing.assert_allclose(x[:, 1], numpy.linalg.lstsq(a, b[:, 1], rcond=None)[0], rtol=1e-5)
    a[0, 0] = NAN
    assert numpy.isnan(ops.lstsq(a, numpy.ones(3, "float32")).numpy()).all()


def test_the_sign_of_a_nan_determinant_is_nan():
    x = numpy.eye(3, dtype="float32")
    x[0, 1] = NAN
    sign, logabs = ops.slogdet(x)
    assert numpy.isnan(sign.numpy()) and numpy.isnan(logabs.numpy())  # TensorFlow: (nan, nan); was (1, nan)
    sign, _ = ops.slogdet(numpy.array([[0.0, 1.0], [1.0, 0.0]], "float32"))
    assert float(sign.numpy()) == -1.0


def test_a_nan_or_inf_kernel_weight_of_conv_transpose_reaches_only_the_outputs_it_taps():
    x = numpy.linspace(-1.0, 1.0, 24).astype("float32").reshape(2, 3, 4)
    kernel = x.copy()  # (taps 2, out 3, in 4): the fuzz's call, whose Keras answer is quoted
    kernel[0, 0, 0] = NAN  # tap 0 of output channel 0: outputs 0..2 of channel 0, not output 3
    out = ops.conv_transpose(x, kernel).numpy()
    assert numpy.isnan(out[:, :3, 0]).all() and numpy.isfinite(out[:, 3]).all() and numpy.isfinite(out[..., 1:]).all()
    numpy.testing.assert_allclose(out[0, 3], [-0.08317580, -0.32514176, -0.56710774], rtol=1e-5)  # Keras's; was NaN
    kernel = x.copy()
    kernel[1, 2, 3] = numpy.inf  # tap 1 of channel 2: outputs 1..3, never output 0 (0 * inf was NaN there)
    out = ops.conv_transpose(x, kernel).numpy()
    assert not numpy.isnan(out).any() and numpy.isinf(out[:, 1:, 2]).all()
    numpy.testing.assert_allclose(out[0, 0], [3.0623817, 1.8525521, 0.64272207], rtol=1e-5)  # Keras's
