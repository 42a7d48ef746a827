"""Input Keras 3.15 accepts that minikeras refused before the Keras-referenced
fuzz (issue 36) compared them: bool operands where a bool is a number,
bare tensors and numbers in the stacks, batched and boolean bincount, empty
quantile lists, integer arrays for sizes and shifts, NumPy ints for ints,
real input to view_as_real, None dtypes. Keras's answers are quoted."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops


def _array(*shape):
    return numpy.linspace(-1.0, 1.0, int(numpy.prod(shape))).astype("float32").reshape(shape)


def test_a_bool_with_a_number_is_that_number():
    x, flags = _array(2, 3), _array(2, 3) > 0
    out = ops.subtract(flags, x)
    assert out.dtype == numpy.float32
    numpy.testing.assert_allclose(out.numpy(), flags - x)
    with pytest.raises(TypeError, match="subtract does not accept two bool operands"):
        ops.subtract(flags, flags)  # NumPy and Keras refuse bool - bool
    numpy.testing.assert_allclose(ops.matmul(flags, _array(3, 4)).numpy(), flags.astype("float32") @ _array(3, 4))
    numpy.testing.assert_allclose(ops.dot(_array(2, 3), flags.T).numpy(), _array(2, 3) @ flags.T.astype("float32"))
    both = ops.matmul(flags, flags.T)
    assert both.dtype == numpy.bool_ and both.numpy().tolist() == (flags @ flags.T).tolist()
    assert ops.gcd(numpy.array([True, True]), numpy.array([4, 6], "int32")).numpy().tolist() == [1, 1]
    with pytest.raises(TypeError, match="lcm expects integer operands"):
        ops.lcm(numpy.array([True]), numpy.array([4], "int32"))  # Keras refuses bools in lcm (not gcd)


def test_bool_inputs_where_keras_computes_them_as_numbers():
    flags = numpy.array([True, False, True])
    out = ops.tanh(flags)
    assert out.dtype == numpy.float32 and out.numpy()[0] == pytest.approx(numpy.tanh(1.0))
    assert ops.diff(flags).numpy().tolist() == [True, True]  # NumPy's diff of bools: whether neighbours differ
    angle = ops.polar(numpy.ones(3, "float32"), flags).numpy()
    numpy.testing.assert_allclose(angle, numpy.exp(1j * flags.astype("float32")), rtol=1e-6)


def test_stacks_take_a_bare_tensor_of_rows_and_numbers():
    x = _array(2, 3)
    numpy.testing.assert_array_equal(ops.stack(x).numpy(), numpy.stack(x))
    numpy.testing.assert_array_equal(ops.stack(mk.tensor(x), axis=1).numpy(), numpy.stack(x, axis=1))
    numpy.testing.assert_array_equal(ops.vstack(x).numpy(), numpy.vstack(x))
    numpy.testing.assert_array_equal(ops.hstack(x).numpy(), numpy.hstack(x))  # NumPy's (6,)
    numpy.testing.assert_array_equal(ops.dstack(x).numpy(), numpy.dstack(x))
    out = ops.stack([1.0, numpy.float32(2.0)])
    assert out.dtype == numpy.float32 and out.numpy().tolist() == [1.0, 2.0]


def test_the_gradient_flows_through_a_stacked_tensor_of_rows():
    x = mk.Tensor(_array(2, 3), requires_grad=True)
    ops.sum(ops.stack(x, axis=1) * 2.0).backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), numpy.full((2, 3), 2.0))


def test_bincount_of_bools_and_of_a_batch():
    assert ops.bincount(numpy.array([True, True, False])).numpy().tolist() == [1, 2]  # NumPy's
    counts = ops.bincount(numpy.array([[0, 1, 1, 3], [2, 2, 0, 0]], "int32"))  # Keras: one row of counts per row
    assert counts.dtype == numpy.int32 and counts.numpy().tolist() == [[1, 2, 0, 1], [2, 0, 2, 0]]
    weighted = ops.bincount(numpy.array([[0, 1], [1, 1]]), weights=numpy.array([[0.5, 2.0], [1.0, 1.5]], "float32"),
                            minlength=3)
    assert weighted.dtype == numpy.float32 and weighted.numpy().tolist() == [[0.5, 2.0, 0.0], [0.0, 2.5, 0.0]]


@pytest.mark.parametrize("op", [ops.quantile, ops.nanquantile])
def test_an_empty_list_of_quantiles_gives_an_empty_result(op):
    out = op(_array(2, 3), [], axis=1)
    assert out.shape == (0, 2) and out.dtype == numpy.float32  # NumPy's and Keras's
    assert ops.percentile(_array(2, 3), []).shape == (0,)


def test_integer_arrays_are_sizes_shifts_and_pairs():
    x = _array(1, 4, 4, 2)
    numpy.testing.assert_array_equal(ops.adaptive_average_pool(x, numpy.array([2, 2])).numpy(),
                                     ops.adaptive_average_pool(x, (2, 2)).numpy())
    numpy.testing.assert_array_equal(ops.roll(_array(2, 3), numpy.array(1, "int32")).numpy(),
                                     numpy.roll(_array(2, 3), 1))
    blurred = ops.image.gaussian_blur(x, kernel_size=numpy.array([3, 5]), sigma=numpy.array([1.0, 2.0]))
    numpy.testing.assert_array_equal(blurred.numpy(), ops.image.gaussian_blur(x, (3, 5), (1.0, 2.0)).numpy())
    images = _array(1, 4, 4, 2)
    cropped = ops.image.crop_images(images, 1, 1, target_height=numpy.array(3), target_width=2)
    assert cropped.shape == (1, 3, 2, 2)
    patches = ops.unfold(_array(1, 1, 4, 4), numpy.array([2, 3]))
    numpy.testing.assert_array_equal(patches.numpy(), ops.unfold(_array(1, 1, 4, 4), (2, 3)).numpy())


def test_numpy_ints_and_flags_are_taken_as_python_ones():
    grid = numpy.stack([_array(2, 2) + 1, _array(2, 2) + 1])
    numpy.testing.assert_array_equal(ops.image.map_coordinates(_array(3, 3), grid, numpy.int64(1)).numpy(),
                                     ops.image.map_coordinates(_array(3, 3), grid, 1).numpy())
    numpy.testing.assert_array_equal(ops.gelu(_array(2, 3), approximate=1).numpy(),
                                     ops.gelu(_array(2, 3), approximate=True).numpy())
    numpy.testing.assert_array_equal(ops.argpartition(numpy.array([[3, 1], [2, 0]]), 1, axis=None).numpy(),
                                     numpy.argpartition(numpy.array([[3, 1], [2, 0]]), 1, axis=None))


def test_view_as_real_of_real_input_has_zero_imaginary_parts():
    out = ops.view_as_real(numpy.array([1, -2], "int32"))
    assert out.dtype == numpy.int32 and out.numpy().tolist() == [[1, 0], [-2, 0]]  # Keras keeps the dtype
    pairs = ops.view_as_complex(numpy.array([[1, 2], [3, 4]], "int32"))
    assert pairs.dtype == numpy.complex64 and pairs.numpy().tolist() == [1 + 2j, 3 + 4j]


def test_a_none_dtype_is_floatx():
    assert ops.cast(numpy.array([1, 2]), None).dtype == numpy.float32  # Keras's standardize_dtype(None)
    assert ops.saturate_cast(numpy.array([1, 2]), None).dtype == numpy.float32


def test_a_box_computed_with_ops_crops_and_pads():
    # keras.io's CutMix computes its box with ops (clip, cast) and passes the 0-d int Tensors on:
    # Keras takes them as their ints; a float Tensor stays refused.
    images = _array(1, 6, 6, 2)
    top = ops.cast(ops.clip(ops.convert_to_tensor(3.7), 0, 6), "int32")
    size = ops.convert_to_tensor(numpy.int64(2))
    cropped = ops.image.crop_images(images, top_cropping=top, left_cropping=top, target_height=size, target_width=size)
    numpy.testing.assert_array_equal(cropped.numpy(), images[:, 3:5, 3:5])
    padded = ops.image.pad_images(cropped, top_padding=top, left_padding=size, target_height=6, target_width=6)
    assert padded.shape == (1, 6, 6, 2)
    numpy.testing.assert_array_equal(padded.numpy()[:, 3:5, 2:4], images[:, 3:5, 3:5])
    with pytest.raises(TypeError, match="top_cropping must be an int"):
        ops.image.crop_images(images, top_cropping=ops.convert_to_tensor(1.0), left_cropping=0, target_height=2,
                              target_width=2)
