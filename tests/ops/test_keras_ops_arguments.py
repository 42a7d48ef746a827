"""Behaviour at the edges the argument fuzz reached (issue 27): values that
are valid but unusual give NumPy's answer, bad ones the library's error."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops


def test_no_segments_gives_an_empty_result_and_a_zero_gradient():
    data = mk.tensor(numpy.arange(12, dtype="float32").reshape(4, 3), requires_grad=True)
    out = ops.segment_sum(data, numpy.array([0, 0, 1, 1], "int32"), num_segments=0)
    assert out.shape == (0, 3)
    out.sum().backward()
    numpy.testing.assert_array_equal(data.grad.numpy(), numpy.zeros((4, 3), "float32"))
    assert ops.segment_max(data, numpy.array([0, 0, 1, 1], "int32"), num_segments=0).shape == (0, 3)


def test_diff_past_the_axis_length_is_empty_as_numpy():
    x = numpy.arange(5, dtype="float32")
    for n in (4, 5, 10**12):
        assert ops.diff(mk.tensor(x), n).shape == numpy.diff(x, min(n, 6)).shape


def test_out_of_range_ids_are_named_errors():
    with pytest.raises(IndexError, match=r"^take_along_axis: indices must be in \[-3, 3\)"):
        ops.take_along_axis(numpy.ones((2, 3), "float32"), numpy.array([[0, 3]]), axis=1)
    with pytest.raises(IndexError, match=r"^scatter: indices must address the first 1 axes of shape \(2,\)"):
        ops.scatter(numpy.array([[5]]), numpy.ones(1, "float32"), (2,))
    with pytest.raises(ValueError, match=r"^unravel_index: indices must be in \[0, 6\) for shape \(2, 3\)"):
        ops.unravel_index(numpy.array([1, 6]), (2, 3))


def test_integer_ops_refuse_floats_and_ints_their_dtype_cannot_hold():
    x = numpy.array([5, 3], "int32")
    with pytest.raises(TypeError, match="^bitwise_and expects integer or bool operands, received float 1.5"):
        ops.bitwise_and(x, 1.5)
    with pytest.raises(ValueError, match=r"^left_shift: the second operand \(1000000000000\) does not fit .* int32"):
        ops.left_shift(x, 10**12)
    numpy.testing.assert_array_equal(ops.bitwise_and(x, 1).numpy(), [1, 1])
    assert ops.bitwise_and(x, 1).dtype == numpy.int32


def test_flags_are_bools_not_truthy_values():
    x = numpy.array([3.0, 1.0, 3.0], "float32")
    with pytest.raises(TypeError, match="^unique: sorted must be a bool, received int 2"):
        ops.unique(x, sorted=2)
    with pytest.raises(TypeError, match="^linspace: endpoint must be a bool, received float 0.5"):
        ops.linspace(0.0, 1.0, 5, endpoint=0.5)
    numpy.testing.assert_array_equal(ops.unique(x, sorted=False).numpy(), [1.0, 3.0])  # the order is free
    with pytest.raises(TypeError, match="^svd: full_matrices must be a bool"):
        ops.svd(numpy.eye(2, dtype="float32"), full_matrices="no")


def test_stft_framing_arguments_are_checked_before_any_work():
    signal = numpy.ones((2, 16), "float32")
    with pytest.raises(ValueError, match="^stft: fft_length must be at least sequence_length, received fft_length=4"):
        ops.stft(signal, 8, 4, 4)
    with pytest.raises(ValueError, match="^istft: sequence_stride must be positive, received 0"):
        ops.istft((numpy.ones((2, 5, 5), "float32"),) * 2, 8, 0, 8)
