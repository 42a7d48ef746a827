"""Image ops where the Keras-referenced fuzz (issue 36) found answers unlike
Keras 3.15's: integer images keep their dtype, NaN and inf pixels reach only
the outputs that weigh them, NaN transforms warp to NaN, NaN scales weigh
nothing, bool parameters are 0 and 1, an infinite HSV value stays infinite.
Keras's answers (TensorFlow; torch agrees unless said) are quoted."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from minikeras.autograd import gradcheck
from minikeras.ops.image.resizing import resize_matrix

NAN = numpy.nan


def _images(*shape):
    return numpy.linspace(-1.0, 1.0, int(numpy.prod(shape))).astype("float32").reshape(shape)


def test_resizing_integer_images_rounds_back_to_their_dtype():
    images = numpy.round(_images(1, 4, 4, 2) * 3).astype("int32")
    out = ops.image.resize(images, (3, 3))
    assert out.dtype == numpy.int32  # Keras rounds and saturate_casts; was float32
    assert out.numpy().ravel()[:12].tolist() == [-3, -3, -2, -2, -2, -2, 0, 0, 0, 0, 0, 0]


@pytest.mark.parametrize("where", [0, -1])
def test_a_nan_or_inf_pixel_reaches_only_the_outputs_that_weigh_it(where):
    images = _images(1, 4, 4, 2)
    images.flat[where] = NAN if where == 0 else numpy.inf
    out = ops.image.resize(images, (3, 3)).numpy()
    assert (~numpy.isfinite(out)).sum() == 1  # was a whole row of them (0 * NaN in a dense product)
    assert not numpy.isfinite(out.flat[where])


@pytest.mark.parametrize("interpolation, antialias", [("bilinear", False), ("bicubic", False), ("area", False),
                                                      ("lanczos3", False), ("bilinear", True), ("nearest", False)])
def test_resizing_finite_images_is_the_separable_weighted_sum(interpolation, antialias):
    images = numpy.random.default_rng(0).normal(size=(2, 7, 5, 3)).astype("float32")
    for size in ((3, 4), (11, 9)):
        rows = resize_matrix(size[0], 7, interpolation, antialias)
        columns = resize_matrix(size[1], 5, interpolation, antialias)
        expected = numpy.einsum("ph,nhwc,qw->npqc", rows, images.astype("float64"), columns)
        out = ops.image.resize(images, size, interpolation=interpolation, antialias=antialias).numpy()
        numpy.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_the_resize_gradient_follows_the_gathered_taps():
    images = mk.Tensor(numpy.random.default_rng(1).normal(size=(1, 4, 3, 2)), requires_grad=True)
    assert gradcheck(lambda x: ops.image.resize(x, (3, 5)), [images])
    assert gradcheck(lambda x: ops.image.resize(x, (2, 2), interpolation="bicubic", antialias=True), [images])


def test_patches_of_integer_images_are_integers():
    images = numpy.arange(32, dtype="int32").reshape(1, 4, 4, 2) - 16
    out = ops.image.extract_patches(images, 2)
    assert out.dtype == numpy.int32  # Keras: an identity-kernel convolution in the images' dtype; was float32
    assert out.numpy()[0, 0, 0].tolist() == [-16, -15, -14, -13, -8, -7, -6, -5]


def test_warping_integer_images_rounds_back_to_their_dtype():
    images = numpy.round(_images(1, 4, 4, 2) * 3).astype("int32")
    shift = numpy.array([[1, 0, 0.5, 0, 1, 0, 0, 0]], "float32")  # half a pixel right: averages of neighbours
    out = ops.image.affine_transform(images, shift)
    assert out.dtype == numpy.int32  # Keras keeps the dtype; was float32
    as_float = ops.image.affine_transform(images.astype("float32"), shift).numpy()
    numpy.testing.assert_array_equal(out.numpy(), numpy.round(as_float))


def test_a_nan_transform_warps_its_image_to_nan():
    images = _images(2, 4, 4, 2)
    transforms = numpy.array([[NAN, 0, 0, 0, 1, 0, 0, 0], [1, 0, 0, 0, 1, 0, 0, 0]], "float32")
    out = ops.image.affine_transform(images, transforms).numpy()  # was refused; Keras: all NaN
    assert numpy.isnan(out[0]).all()
    numpy.testing.assert_array_equal(out[1], images[1])
    points = numpy.array([[0, 0], [3, 0], [0, 3], [3, 3]], "float32")
    nan_points = points.copy()
    nan_points[0, 0] = NAN
    assert numpy.isnan(ops.image.perspective_transform(images[:1], nan_points, points).numpy()).all()
    with pytest.raises(ValueError, match="affine_transform: the transform must not hold inf"):
        ops.image.affine_transform(images, numpy.array([1, 0, 0, 0, 1, 0, 0, numpy.inf], "float32"))


def test_bool_warp_parameters_are_zero_and_one():
    images = _images(1, 4, 4, 2)
    flags = numpy.array([[True, False, False, False, True, False, False, False]])
    numpy.testing.assert_array_equal(ops.image.affine_transform(images, flags).numpy(), images)
    scale = ops.image.scale_and_translate(images, (1, 6, 6, 2), numpy.array([True, True]), numpy.zeros(2, "float32"),
                                          (1, 2), "bilinear")
    numpy.testing.assert_array_equal(scale.numpy(), ops.image.scale_and_translate(
        images, (1, 6, 6, 2), numpy.ones(2, "float32"), numpy.zeros(2, "float32"), (1, 2), "bilinear").numpy())


def test_a_nan_scale_or_translation_weighs_nothing():
    images = _images(1, 4, 4, 2)
    for scale, translation in (([NAN, 1.5], [0.0, 0.0]), ([1.5, 1.5], [NAN, NAN])):
        out = ops.image.scale_and_translate(images, (1, 6, 6, 2), numpy.array(scale, "float32"),
                                            numpy.array(translation, "float32"), (1, 2), "bilinear")
        numpy.testing.assert_array_equal(out.numpy(), 0.0)  # JAX's and Keras's zeros; was refused


def test_an_infinite_hsv_value_gives_infinite_rgb():
    hsv = numpy.array([[[[0.3, 0.5, numpy.inf], [0.3, 0.5, 0.8]]]], "float32")
    rgb = ops.image.hsv_to_rgb(hsv).numpy()
    assert numpy.isposinf(rgb[0, 0, 0]).all()  # Keras: inf; was NaN (value - value * saturation)
    numpy.testing.assert_allclose(rgb[0, 0, 1], [0.48, 0.8, 0.4], rtol=1e-5)  # colorsys.hsv_to_rgb
