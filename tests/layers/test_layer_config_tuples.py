"""Size, stride, padding and shape arguments come back from ``get_config()`` as
tuples, as Keras 3 gives them (keras.io's ConvMixer picks its layers with
``layer.get_config()["kernel_size"] == (5, 5)``; a list never equals that
tuple, so the check silently matched nothing). The expected values are
Keras 3.15's (TensorFlow backend). A config read back from JSON (lists)
builds a layer whose config is tuples again."""
import json

import pytest

from minikeras import layers

CASES = [
    (lambda: layers.Conv2D(4, [5, 5], strides=[1, 1]), {"kernel_size": (5, 5), "strides": (1, 1),
                                                         "dilation_rate": (1, 1)}),
    (lambda: layers.DepthwiseConv2D(5, padding="same"), {"kernel_size": (5, 5), "strides": (1, 1)}),
    (lambda: layers.Conv1D(4, 3), {"kernel_size": (3,), "strides": (1,), "dilation_rate": (1,)}),
    (lambda: layers.Conv2DTranspose(3, 3, output_padding=[0, 0]), {"kernel_size": (3, 3), "output_padding": (0, 0)}),
    (lambda: layers.SeparableConv2D(4, 3), {"kernel_size": (3, 3), "strides": (1, 1)}),
    (lambda: layers.MaxPooling2D([2, 2]), {"pool_size": (2, 2), "strides": (2, 2)}),
    (lambda: layers.AveragePooling1D(2), {"pool_size": (2,), "strides": (2,)}),
    (lambda: layers.AdaptiveAveragePooling2D(3), {"output_size": (3, 3)}),
    (lambda: layers.UpSampling2D(), {"size": (2, 2)}),
    (lambda: layers.ZeroPadding2D(1), {"padding": ((1, 1), (1, 1))}),
    (lambda: layers.ZeroPadding1D(1), {"padding": (1, 1)}),
    (lambda: layers.ZeroPadding3D(1), {"padding": ((1, 1), (1, 1), (1, 1))}),
    (lambda: layers.Cropping1D([1, 2]), {"cropping": (1, 2)}),
    (lambda: layers.Cropping2D(1), {"cropping": ((1, 1), (1, 1))}),
    (lambda: layers.Cropping3D(1), {"cropping": ((1, 1), (1, 1), (1, 1))}),
    (lambda: layers.Reshape([2, 3]), {"target_shape": (2, 3)}),
    (lambda: layers.Permute([2, 1]), {"dims": (2, 1)}),
    (lambda: layers.Normalization(axis=[1, 2]), {"axis": (1, 2)}),
    (lambda: layers.EinsumDense("ab,bc->ac", [3]), {"output_shape": (3,)}),
    (lambda: layers.RandomRotation([-0.1, 0.2]), {"factor": (-0.1, 0.2)}),
    (lambda: layers.Dropout(0.1, noise_shape=[None, 1]), {"noise_shape": (None, 1)}),
]


@pytest.mark.parametrize("make, expected", CASES)
def test_config_sizes_are_tuples_as_in_keras(make, expected):
    layer = make()
    config = layer.get_config()
    for key, value in expected.items():
        assert config[key] == value and type(config[key]) is tuple, (type(layer).__name__, key, config[key])
    rebuilt = type(layer).from_config(json.loads(json.dumps(config)))  # a saved config holds lists
    assert {key: rebuilt.get_config()[key] for key in expected} == expected
