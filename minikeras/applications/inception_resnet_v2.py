"""InceptionResNetV2 (``applications.inception_resnet_v2``), with Keras's
layer names, including its ``CustomScaleLayer`` (``x + scale * residual``).

Reference: Szegedy et al., "Inception-v4, Inception-ResNet and the Impact of
Residual Connections on Learning" (AAAI 2017).
"""
from minikeras import layers
from minikeras.applications import imagenet_utils
from minikeras.backend.keras_helpers import image_data_format

_BASE = "https://storage.googleapis.com/tensorflow/keras-applications/inception_resnet_v2/"
_HASHES = ("e693bd0210a403b3192acc6073ad2e96", "d19885ff4a710c122648d3b5c3b684e4")


def _axis():
    return 1 if image_data_format() == "channels_first" else -1


class CustomScaleLayer(layers.Layer):
    """``inputs[0] + inputs[1] * scale``: the scaled residual sum (Keras's layer of that name)."""

    def __init__(self, scale, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale

    def call(self, inputs):
        return inputs[0] + inputs[1] * self.scale

    def get_config(self):
        return {**super().get_config(), "scale": self.scale}


def conv2d_bn(x, filters, kernel_size, strides=1, padding="same", activation="relu", use_bias=False, name=None):
    """Convolution, batch norm without scale (when there is no bias), activation."""
    x = layers.Conv2D(filters, kernel_size, strides=strides, padding=padding, use_bias=use_bias, name=name)(x)
    if not use_bias:
        x = layers.BatchNormalization(axis=_axis(), scale=False, name=None if name is None else f"{name}_bn")(x)
    if activation is not None:
        x = layers.Activation(activation, name=None if name is None else f"{name}_ac")(x)
    return x


def inception_resnet_block(x, scale, block_type, block_idx, activation="relu"):
    """An Inception-ResNet block (``block35``, ``block17`` or ``block8``)."""
    if block_type == "block35":
        branches = [conv2d_bn(x, 32, 1), conv2d_bn(conv2d_bn(x, 32, 1), 32, 3),
                    conv2d_bn(conv2d_bn(conv2d_bn(x, 32, 1), 48, 3), 64, 3)]
    elif block_type == "block17":
        branches = [conv2d_bn(x, 192, 1), conv2d_bn(conv2d_bn(conv2d_bn(x, 128, 1), 160, [1, 7]), 192, [7, 1])]
    elif block_type == "block8":
        branches = [conv2d_bn(x, 192, 1), conv2d_bn(conv2d_bn(conv2d_bn(x, 192, 1), 224, [1, 3]), 256, [3, 1])]
    else:
        raise ValueError("Unknown Inception-ResNet block type. Expects 'block35', 'block17' or 'block8', but got: "
                         f"{block_type}")
    name = f"{block_type}_{block_idx}"
    mixed = layers.Concatenate(axis=_axis(), name=f"{name}_mixed")(branches)
    up = conv2d_bn(mixed, x.shape[_axis()], 1, activation=None, use_bias=True, name=f"{name}_conv")
    x = CustomScaleLayer(scale)([x, up])
    if activation is not None:
        x = layers.Activation(activation, name=f"{name}_ac")(x)
    return x


def InceptionResNetV2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                      classes=1000, classifier_activation="softmax", name="inception_resnet_v2"):
    """Keras's InceptionResNetV2 (default input 299x299, at least 75x75); inputs
    from ``applications.inception_resnet_v2.preprocess_input``."""
    from minikeras.models import Functional

    imagenet_utils.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=299, min_size=75,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    image, inputs = imagenet_utils.model_input(input_tensor, input_shape)
    x = conv2d_bn(image, 32, 3, strides=2, padding="valid")
    x = conv2d_bn(x, 32, 3, padding="valid")
    x = conv2d_bn(x, 64, 3)
    x = layers.MaxPooling2D(3, strides=2)(x)
    x = conv2d_bn(x, 80, 1, padding="valid")
    x = conv2d_bn(x, 192, 3, padding="valid")
    x = layers.MaxPooling2D(3, strides=2)(x)
    branches = [conv2d_bn(x, 96, 1), conv2d_bn(conv2d_bn(x, 48, 1), 64, 5),
                conv2d_bn(conv2d_bn(conv2d_bn(x, 64, 1), 96, 3), 96, 3)]
    branches.append(conv2d_bn(layers.AveragePooling2D(3, strides=1, padding="same")(x), 64, 1))
    x = layers.Concatenate(axis=_axis(), name="mixed_5b")(branches)
    for index in range(1, 11):
        x = inception_resnet_block(x, scale=0.17, block_type="block35", block_idx=index)
    branches = [conv2d_bn(x, 384, 3, strides=2, padding="valid"),
                conv2d_bn(conv2d_bn(conv2d_bn(x, 256, 1), 256, 3), 384, 3, strides=2, padding="valid"),
                layers.MaxPooling2D(3, strides=2, padding="valid")(x)]
    x = layers.Concatenate(axis=_axis(), name="mixed_6a")(branches)
    for index in range(1, 21):
        x = inception_resnet_block(x, scale=0.1, block_type="block17", block_idx=index)
    branches = [conv2d_bn(conv2d_bn(x, 256, 1), 384, 3, strides=2, padding="valid"),
                conv2d_bn(conv2d_bn(x, 256, 1), 288, 3, strides=2, padding="valid"),
                conv2d_bn(conv2d_bn(conv2d_bn(x, 256, 1), 288, 3), 320, 3, strides=2, padding="valid"),
                layers.MaxPooling2D(3, strides=2, padding="valid")(x)]
    x = layers.Concatenate(axis=_axis(), name="mixed_7a")(branches)
    for index in range(1, 10):
        x = inception_resnet_block(x, scale=0.2, block_type="block8", block_idx=index)
    x = inception_resnet_block(x, scale=1.0, activation=None, block_type="block8", block_idx=10)
    x = conv2d_bn(x, 1536, 1, name="conv_7b")
    x = imagenet_utils.pooled_top(x, include_top, pooling, classes, classifier_activation, weights, named_pools=False)
    model = Functional(inputs, x, name=name)
    file_name = f"inception_resnet_v2_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return imagenet_utils.load_weights(model, weights, file_name, _BASE + file_name, _HASHES[0 if include_top else 1])


def preprocess_input(x, data_format=None):
    """InceptionResNetV2 inputs: scaled to [-1, 1] ("tf" mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
