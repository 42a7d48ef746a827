"""Xception (``applications.xception``), with Keras's layer names (its
unnamed shortcut convolutions and batch norms get Keras's default names in
the same order).

Reference: Chollet, "Xception: Deep Learning with Depthwise Separable
Convolutions" (CVPR 2017).
"""
from minikeras import layers
from minikeras.applications import imagenet_utils
from minikeras.backend.keras_helpers import image_data_format

_BASE = "https://storage.googleapis.com/tensorflow/keras-applications/xception/"
_HASHES = ("0a58e3b7378bc2990ea3b43d5981f1f6", "b0042744bf5b25fce3cb969f33bebb97")


def _axis():
    return 1 if image_data_format() == "channels_first" else -1


def _separable(x, filters, name, activate_first=True):
    """(ReLU), separable 3x3 convolution, batch norm: Xception's unit."""
    if activate_first:
        x = layers.Activation("relu", name=f"{name}_act")(x)
    x = layers.SeparableConv2D(filters, (3, 3), padding="same", use_bias=False, name=name)(x)
    return layers.BatchNormalization(axis=_axis(), name=f"{name}_bn")(x)


def _downsampling_block(x, filters, block, first_activation=True):
    """Two separable units and a strided max pool, plus a strided 1x1 shortcut."""
    residual = layers.Conv2D(filters[1], (1, 1), strides=(2, 2), padding="same", use_bias=False)(x)
    residual = layers.BatchNormalization(axis=_axis())(residual)
    if first_activation:
        x = layers.Activation("relu", name=f"block{block}_sepconv1_act")(x)
    x = layers.SeparableConv2D(filters[0], (3, 3), padding="same", use_bias=False, name=f"block{block}_sepconv1")(x)
    x = layers.BatchNormalization(axis=_axis(), name=f"block{block}_sepconv1_bn")(x)
    x = _separable(x, filters[1], f"block{block}_sepconv2")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="same", name=f"block{block}_pool")(x)
    return layers.add([x, residual])


def Xception(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
             classes=1000, classifier_activation="softmax", name="xception"):
    """Keras's Xception (default input 299x299, at least 71x71); inputs from
    ``applications.xception.preprocess_input``. Arguments as ``ResNet50``'s."""
    from minikeras.models import Functional

    imagenet_utils.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=299, min_size=71,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    image, inputs = imagenet_utils.model_input(input_tensor, input_shape)
    x = layers.Conv2D(32, (3, 3), strides=(2, 2), use_bias=False, name="block1_conv1")(image)
    x = layers.BatchNormalization(axis=_axis(), name="block1_conv1_bn")(x)
    x = layers.Activation("relu", name="block1_conv1_act")(x)
    x = layers.Conv2D(64, (3, 3), use_bias=False, name="block1_conv2")(x)
    x = layers.BatchNormalization(axis=_axis(), name="block1_conv2_bn")(x)
    x = layers.Activation("relu", name="block1_conv2_act")(x)
    x = _downsampling_block(x, (128, 128), 2, first_activation=False)
    x = _downsampling_block(x, (256, 256), 3)
    x = _downsampling_block(x, (728, 728), 4)
    for index in range(8):
        residual = x
        prefix = f"block{index + 5}"
        for unit in (1, 2, 3):
            x = _separable(x, 728, f"{prefix}_sepconv{unit}")
        x = layers.add([x, residual])
    x = _downsampling_block(x, (728, 1024), 13)
    x = layers.SeparableConv2D(1536, (3, 3), padding="same", use_bias=False, name="block14_sepconv1")(x)
    x = layers.BatchNormalization(axis=_axis(), name="block14_sepconv1_bn")(x)
    x = layers.Activation("relu", name="block14_sepconv1_act")(x)
    x = layers.SeparableConv2D(2048, (3, 3), padding="same", use_bias=False, name="block14_sepconv2")(x)
    x = layers.BatchNormalization(axis=_axis(), name="block14_sepconv2_bn")(x)
    x = layers.Activation("relu", name="block14_sepconv2_act")(x)
    x = imagenet_utils.pooled_top(x, include_top, pooling, classes, classifier_activation, weights, named_pools=False)
    model = Functional(inputs, x, name=name)
    file_name = f"xception_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return imagenet_utils.load_weights(model, weights, file_name, _BASE + file_name, _HASHES[0 if include_top else 1])


def preprocess_input(x, data_format=None):
    """Xception inputs: scaled to [-1, 1] ("tf" mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
