"""resize and affine_transform: against outputs recorded from Keras 3's
``keras.ops.image`` (TensorFlow backend), resize's gradient by finite
differences, and the error paths."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from minikeras.autograd import gradcheck
from minikeras.ops.nn.resize import interpolation_matrix
from tests.ops.keras_image_cases import FILL_MODES, FIXTURE, IMAGES, INTERPOLATIONS, SIZES, TRANSFORMS


@pytest.fixture(scope="module")
def recorded():
    with numpy.load(FIXTURE) as data:
        return {key: data[key] for key in data.files}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("interpolation", INTERPOLATIONS)
def test_resize_matches_keras(size, interpolation, recorded):
    out = ops.resize(IMAGES, size, interpolation=interpolation)
    assert out.dtype == numpy.float32 and out.shape == (2,) + size + (3,)
    expected = recorded[f"resize/{size[0]}x{size[1]}/{interpolation}"]
    numpy.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_resize_rows_are_convex_weights():
    for out_size, in_size in ((3, 7), (9, 4), (5, 5)):
        matrix = interpolation_matrix(out_size, in_size, "bilinear")
        numpy.testing.assert_allclose(matrix.sum(axis=1), 1.0)
        assert (matrix >= 0).all()
    numpy.testing.assert_array_equal(interpolation_matrix(4, 4, "bilinear"), numpy.eye(4))


@pytest.mark.parametrize("interpolation", INTERPOLATIONS)
def test_resize_gradient(interpolation, rng):
    x = mk.Tensor(rng.normal(size=(2, 4, 3, 2)), requires_grad=True)
    assert gradcheck(lambda t: ops.resize(t, (5, 2), interpolation=interpolation), [x])


def test_resize_errors():
    with pytest.raises(ValueError, match="batch, height, width, channels"):
        ops.resize(numpy.zeros((4, 4, 3), "float32"), (2, 2))
    with pytest.raises(ValueError, match="two positive ints"):
        ops.resize(IMAGES, (0, 2))
    with pytest.raises(ValueError, match="interpolation"):
        ops.resize(IMAGES, (2, 2), interpolation="lanczos5")


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
@pytest.mark.parametrize("fill_mode", FILL_MODES)
@pytest.mark.parametrize("interpolation", INTERPOLATIONS)
def test_affine_transform_matches_keras(name, fill_mode, interpolation, recorded):
    out = ops.affine_transform(IMAGES, TRANSFORMS[name], interpolation=interpolation, fill_mode=fill_mode,
                               fill_value=0.5)
    assert out.dtype == numpy.float32 and not out.requires_grad
    expected = recorded[f"affine/{name}/{fill_mode}/{interpolation}"]
    numpy.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_affine_identity_and_errors():
    identity = [1, 0, 0, 0, 1, 0, 0, 0]
    numpy.testing.assert_array_equal(ops.affine_transform(IMAGES, identity).numpy(), IMAGES)
    with pytest.raises(ValueError, match="fill_mode"):
        ops.affine_transform(IMAGES, identity, fill_mode="mirror")
    with pytest.raises(ValueError, match="interpolation"):
        ops.affine_transform(IMAGES, identity, interpolation="cubic")
    with pytest.raises(ValueError, match=r"\(8,\) or \(batch=2, 8\)"):
        ops.affine_transform(IMAGES, [[1, 0, 0, 0, 1, 0, 0, 0]] * 3)
    with pytest.raises(ValueError, match="batch, height, width, channels"):
        ops.affine_transform(IMAGES[0], identity)
