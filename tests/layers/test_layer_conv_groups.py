"""Grouped convolutions (``Conv1D/2D/3D(groups=...)``), as Keras's: the
kernel is ``(spatial..., in_channels // groups, filters)`` and filter group g
sees only input group g. Checked against a per-group NumPy reference, by
finite differences, and through the shared layer check (config and save
round trips, 16-bit policies, every device)."""
import numpy
import pytest

from minikeras import layers
from tests.layers.layer_check import run_layer_test
from tests.layers.test_layer_conv import reference_conv2d


def _reference_grouped(x, kernel, groups, strides=(1, 1), padding="valid"):
    per_group, filters_per_group = kernel.shape[2], kernel.shape[3] // groups
    pieces = [reference_conv2d(x[..., g * per_group:(g + 1) * per_group],
                               kernel[..., g * filters_per_group:(g + 1) * filters_per_group], strides, padding)
              for g in range(groups)]
    return numpy.concatenate(pieces, axis=-1)


@pytest.mark.parametrize("groups, filters, strides, padding", [
    (6, 6, (1, 1), "same"),     # ConvNeXt's depthwise case: one channel per group
    (6, 12, (2, 2), "same"),    # one channel per group, two filters each
    (2, 4, (1, 1), "valid"),    # three channels per group
    (3, 9, (2, 1), "same"),
])
def test_grouped_conv2d_matches_the_per_group_reference(rng, groups, filters, strides, padding):
    layer = layers.Conv2D(filters, 3, strides=strides, padding=padding, groups=groups)
    x = rng.standard_normal((2, 7, 6, 6)).astype("float32")
    out = layer(x)
    kernel, bias = layer.get_weights()
    assert kernel.shape == (3, 3, 6 // groups, filters)
    expected = _reference_grouped(x, kernel, groups, strides, padding) + bias
    assert out.shape == expected.shape == layer.compute_output_shape(x.shape)
    numpy.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("groups", [4, 2])
def test_grouped_conv2d_layer_check(rng, tmp_path, groups):
    x = rng.standard_normal((2, 5, 5, 4))
    layer = run_layer_test(lambda **kw: layers.Conv2D(4, 3, padding="same", groups=groups, activation="tanh", **kw),
                           x, expected_output_shape=(2, 5, 5, 4), tmp_path=tmp_path)
    assert layer.get_config()["groups"] == groups and layer.kernel.shape == (3, 3, 4 // groups, 4)


def test_grouped_conv1d_and_conv3d(rng, tmp_path):
    run_layer_test(lambda **kw: layers.Conv1D(4, 3, padding="causal", groups=2, **kw), rng.standard_normal((2, 6, 4)),
                   expected_output_shape=(2, 6, 4), tmp_path=tmp_path)
    x = rng.standard_normal((1, 3, 4, 4, 4)).astype("float32")
    grouped = layers.Conv3D(2, 2, groups=2)
    out = grouped(x).numpy()
    kernel, bias = grouped.get_weights()
    # Each output channel of a groups=2 Conv3D is an ordinary Conv3D of its own two input channels.
    for g in range(2):
        single = layers.Conv3D(1, 2)
        single(x[..., 2 * g:2 * g + 2])
        single.set_weights([kernel[..., g:g + 1], bias[g:g + 1]])
        numpy.testing.assert_allclose(out[..., g], single(x[..., 2 * g:2 * g + 2]).numpy()[..., 0], atol=1e-5)


def test_input_channels_must_split_into_the_groups():
    with pytest.raises(ValueError, match=r"input channels must be evenly divisible .* groups=2, but the input has 3"):
        layers.Conv2D(4, 3, groups=2)(numpy.zeros((1, 5, 5, 3), "float32"))


@pytest.mark.parametrize("kernel_shape", [(3, 3, 2, 6), (3, 3, 1, 4)])
def test_ops_conv_infers_the_groups_from_the_kernel_and_its_gradients_are_right(rng, kernel_shape):
    from minikeras import ops
    from minikeras.autograd import gradcheck

    x = rng.standard_normal((2, 5, 5, 4))
    kernel = rng.standard_normal(kernel_shape)
    groups = 4 // kernel_shape[2]
    out = ops.conv(x.astype("float32"), kernel.astype("float32"), padding="same")
    expected = _reference_grouped(x, kernel, groups, padding="same")
    numpy.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)
    assert gradcheck(lambda a, b: ops.conv(a, b, strides=2, padding="same"), [x, kernel])
