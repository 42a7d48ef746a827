"""Answers at the edges where the newer ops disagreed with Keras 3 (issue 36,
item 13): all-NaN slices, NaN in quantiles, the dtype of ``full_like`` of a
Python number, complex fill values and inputs, and the axis of the spaced
ranges. Keras 3.15's answers (TensorFlow backend) are quoted beside each."""
import math

import numpy
import pytest

import minikeras as mk
from minikeras import ops

NAN = math.nan


def _rows_with_an_all_nan_one():
    return numpy.array([[NAN, NAN, NAN], [1.0, NAN, 3.0]], "float32")


@pytest.mark.parametrize("op, expected", [("nanmax", [NAN, 3.0]), ("nanmin", [NAN, 1.0])])
def test_nan_extremes_of_an_all_nan_slice_are_nan(op, expected):
    x = _rows_with_an_all_nan_one()
    numpy.testing.assert_array_equal(getattr(ops, op)(x, axis=1).numpy(), numpy.array(expected, "float32"))
    assert math.isnan(float(getattr(ops, op)(numpy.full(4, NAN, "float32")).numpy()))  # Keras: nan (was -inf/inf)
    kept = getattr(ops, op)(x, axis=1, keepdims=True)
    assert kept.shape == (2, 1) and math.isnan(float(kept.numpy()[0, 0]))
    assert getattr(ops, op)(numpy.array([3, 1], "int32")).dtype == numpy.int32  # no NaN to skip


def test_nan_extremes_keep_their_gradient_off_the_nans():
    x = mk.tensor(numpy.array([[NAN, 2.0, 5.0], [NAN, NAN, NAN]], "float32"), requires_grad=True)
    out = ops.nanmax(x, axis=1)
    ops.nansum(out).backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [[0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])


@pytest.mark.parametrize("op, expected", [("nanargmax", [-1, 2]), ("nanargmin", [-1, 0])])
def test_nan_arg_extremes_of_an_all_nan_slice_are_minus_one(op, expected):
    # Keras's TensorFlow and JAX backends give -1 there (NumPy raises ValueError): Keras is the contract.
    result = getattr(ops, op)(_rows_with_an_all_nan_one(), axis=1)
    assert result.dtype == numpy.int32
    numpy.testing.assert_array_equal(result.numpy(), expected)
    assert int(getattr(ops, op)(numpy.full((2, 2), NAN, "float32")).numpy()) == -1


def test_a_nan_makes_the_quantiles_of_its_slice_nan():
    assert math.isnan(float(ops.percentile(numpy.array([1.0, NAN, 3.0], "float32"), 50).numpy()))  # was 3.0
    x = numpy.array([[1.0, NAN, 3.0], [1.0, 2.0, 4.0]], "float32")
    result = ops.quantile(x, [0.25, 0.5], axis=1).numpy()
    assert numpy.isnan(result[:, 0]).all()
    numpy.testing.assert_allclose(result[:, 1], numpy.quantile(x[1], [0.25, 0.5]))
    assert math.isnan(float(ops.median(x).numpy()))
    numpy.testing.assert_allclose(ops.nanpercentile(x, 50, axis=1).numpy(), [2.0, 2.0])  # the nan variant skips it


def test_full_like_of_a_python_number_takes_its_keras_dtype():
    result = ops.full_like(0, 1.5)  # Keras: the int32 1 (was the float32 1.5)
    assert result.dtype == numpy.int32 and int(result.numpy()) == 1
    assert ops.full_like(0.5, 2).dtype == numpy.float32
    assert ops.full_like(True, 2).dtype == numpy.bool_
    assert ops.full_like(numpy.ones(2, "int8"), 3.7).dtype == numpy.int8


def test_a_complex_fill_value_needs_a_complex_dtype():
    with pytest.raises(TypeError, match=r"^full: fill_value \(1\+2j\) is complex but the dtype is float32"):
        ops.full((2,), 1 + 2j)  # was [1, 1]; Keras raises TypeError
    with pytest.raises(TypeError, match=r"^full_like: .*fill_value \(1\+2j\) is complex but the dtype is int32"):
        ops.full_like(numpy.ones(2, "int32"), 1 + 2j)
    numpy.testing.assert_array_equal(ops.full((2,), 1 + 2j, dtype="complex64").numpy(), [1 + 2j, 1 + 2j])
    with pytest.raises(ValueError, match=r"^full: fill_value nan cannot be held by dtype int32"):
        ops.full((2,), NAN, dtype="int32")  # Keras's TensorFlow gives INT_MIN; NumPy raises deep inside


COMPLEX = numpy.array([[1 + 2j, 3 + 1j], [-1 - 1j, 0.5j]], "complex64")


@pytest.mark.parametrize("call", [
    lambda x: ops.glu(x), lambda x: ops.hard_shrink(x), lambda x: ops.sparse_plus(x), lambda x: ops.tanh_shrink(x),
    lambda x: ops.layer_normalization(x), lambda x: ops.moments(x, axes=[1]), lambda x: ops.rms_normalization(x),
    lambda x: ops.soft_shrink(x), lambda x: ops.sparsemax(x),
], ids=["glu", "hard_shrink", "sparse_plus", "tanh_shrink", "layer_normalization", "moments", "rms_normalization",
        "soft_shrink", "sparsemax"])
def test_complex_input_is_refused_not_cast_to_its_real_part(call):
    # These are real functions (the activations' rule); the cast to float dropped the imaginary part.
    with pytest.raises(TypeError, match="does not support complex inputs, received dtype complex64"):
        call(COMPLEX)
    assert call(COMPLEX.real.copy()) is not None


@pytest.mark.parametrize("op, args", [("linspace", (0.0, 1.0, 3)), ("logspace", (0.0, 1.0, 3)),
                                      ("geomspace", (1.0, 2.0, 3))])
def test_spaced_ranges_check_their_axis(op, args):
    function = getattr(ops, op)
    for axis in (1, 5, -2):  # the result has one axis: Keras raises (was ignored)
        with pytest.raises(ValueError, match=f"^{op}: axis {axis} is out of range for a tensor with 1 dimensions"):
            function(*args, axis=axis)
    with pytest.raises(TypeError, match=f"^{op}: axis must be an int"):
        function(*args, axis=1.5)
    numpy.testing.assert_allclose(function(*args, axis=-1).numpy(), function(*args).numpy())
    grid = function(numpy.array([1.0, 2.0], "float32"), numpy.array([2.0, 4.0], "float32"), 3, axis=1)
    assert grid.shape == (2, 3)
    with pytest.raises(ValueError, match=f"^{op}: axis 2 is out of range for a tensor with 2 dimensions"):
        function(numpy.array([1.0, 2.0], "float32"), numpy.array([2.0, 4.0], "float32"), 3, axis=2)


@pytest.mark.parametrize("op", [ops.layer_normalization, ops.rms_normalization])
def test_normalising_over_an_empty_axis_gives_an_empty_tensor(op):
    x = numpy.zeros((2, 0), "float32")
    out = op(x)
    assert out.shape == (2, 0) and out.dtype == numpy.float32  # Keras: an empty (2, 0) float32; was refused
    assert op(numpy.zeros((0, 3), "float16")).shape == (0, 3)
    with pytest.raises(ValueError, match=op.__name__):
        op(x, axis=2)  # the axis is still checked


def test_corrcoef_of_a_scalar_is_one_variable_with_one_observation():
    with numpy.errstate(all="ignore"):
        out = ops.corrcoef(numpy.array(1.0, "float32"))  # Keras and NumPy: nan (0 / 0); was refused
    assert out.shape == () and out.dtype == numpy.float32 and math.isnan(float(out.numpy()))
    with pytest.raises(ValueError, match=r"corrcoef expects a 0-D, 1-D or 2-D tensor .* received shape \(1, 2, 4\)"):
        ops.corrcoef(numpy.ones((1, 2, 4), "float32"))  # NumPy refuses; Keras's TensorFlow gives a (1, 2, 2, 2)
