"""InceptionV3 (``applications.inception_v3``), with Keras's layer names
(its unnamed convolutions, batch norms and activations take Keras's default
names in Keras's creation order, which the weight files rely on).

Reference: Szegedy et al., "Rethinking the Inception Architecture for
Computer Vision" (CVPR 2016).
"""
from minikeras import layers
from minikeras.applications import imagenet_utils
from minikeras.backend.keras_helpers import image_data_format

_BASE = "https://storage.googleapis.com/tensorflow/keras-applications/inception_v3/"
_HASHES = ("9a0d58056eeedaa3f26cb7ebd46da564", "bcbd6486424b2319ff4ef7d526e38f63")


def _axis():
    return 1 if image_data_format() == "channels_first" else -1


def conv2d_bn(x, filters, num_row, num_col, padding="same", strides=(1, 1), name=None):
    """Convolution (no bias), batch norm without scale, ReLU."""
    x = layers.Conv2D(filters, (num_row, num_col), strides=strides, padding=padding, use_bias=False,
                      name=None if name is None else f"{name}_conv")(x)
    x = layers.BatchNormalization(axis=_axis(), scale=False, name=None if name is None else f"{name}_bn")(x)
    return layers.Activation("relu", name=name)(x)


def _average_pool_branch(x, filters):
    pooled = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same")(x)
    return conv2d_bn(pooled, filters, 1, 1)


def _block_35(x, pool_filters, name):
    """The 35x35 module: 1x1, 5x5, double 3x3 and pooled branches."""
    branch1x1 = conv2d_bn(x, 64, 1, 1)
    branch5x5 = conv2d_bn(conv2d_bn(x, 48, 1, 1), 64, 5, 5)
    branch3x3dbl = conv2d_bn(conv2d_bn(conv2d_bn(x, 64, 1, 1), 96, 3, 3), 96, 3, 3)
    branch_pool = _average_pool_branch(x, pool_filters)
    return layers.concatenate([branch1x1, branch5x5, branch3x3dbl, branch_pool], axis=_axis(), name=name)


def _block_17(x, width, name):
    """The 17x17 module: factorised 7x7 branches of ``width`` channels."""
    branch1x1 = conv2d_bn(x, 192, 1, 1)
    branch7x7 = conv2d_bn(conv2d_bn(conv2d_bn(x, width, 1, 1), width, 1, 7), 192, 7, 1)
    branch7x7dbl = conv2d_bn(x, width, 1, 1)
    for filters, (rows, cols) in ((width, (7, 1)), (width, (1, 7)), (width, (7, 1)), (192, (1, 7))):
        branch7x7dbl = conv2d_bn(branch7x7dbl, filters, rows, cols)
    branch_pool = _average_pool_branch(x, 192)
    return layers.concatenate([branch1x1, branch7x7, branch7x7dbl, branch_pool], axis=_axis(), name=name)


def _block_8(x, index):
    """The 8x8 module with split 1x3/3x1 branches."""
    branch1x1 = conv2d_bn(x, 320, 1, 1)
    branch3x3 = conv2d_bn(x, 384, 1, 1)
    branch3x3 = layers.concatenate([conv2d_bn(branch3x3, 384, 1, 3), conv2d_bn(branch3x3, 384, 3, 1)], axis=_axis(),
                                   name=f"mixed9_{index}")
    branch3x3dbl = conv2d_bn(conv2d_bn(x, 448, 1, 1), 384, 3, 3)
    branch3x3dbl = layers.concatenate([conv2d_bn(branch3x3dbl, 384, 1, 3), conv2d_bn(branch3x3dbl, 384, 3, 1)],
                                      axis=_axis())
    branch_pool = _average_pool_branch(x, 192)
    return layers.concatenate([branch1x1, branch3x3, branch3x3dbl, branch_pool], axis=_axis(),
                              name=f"mixed{9 + index}")


def InceptionV3(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                classes=1000, classifier_activation="softmax", name="inception_v3"):
    """Keras's InceptionV3 (default input 299x299, at least 75x75); inputs from
    ``applications.inception_v3.preprocess_input``. Arguments as ``ResNet50``'s."""
    from minikeras.models import Functional

    imagenet_utils.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=299, min_size=75,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    image, inputs = imagenet_utils.model_input(input_tensor, input_shape)
    x = conv2d_bn(image, 32, 3, 3, strides=(2, 2), padding="valid")
    x = conv2d_bn(x, 32, 3, 3, padding="valid")
    x = conv2d_bn(x, 64, 3, 3)
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = conv2d_bn(x, 80, 1, 1, padding="valid")
    x = conv2d_bn(x, 192, 3, 3, padding="valid")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = _block_35(x, 32, "mixed0")
    x = _block_35(x, 64, "mixed1")
    x = _block_35(x, 64, "mixed2")
    branch3x3 = conv2d_bn(x, 384, 3, 3, strides=(2, 2), padding="valid")
    branch3x3dbl = conv2d_bn(conv2d_bn(x, 64, 1, 1), 96, 3, 3)
    branch3x3dbl = conv2d_bn(branch3x3dbl, 96, 3, 3, strides=(2, 2), padding="valid")
    branch_pool = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = layers.concatenate([branch3x3, branch3x3dbl, branch_pool], axis=_axis(), name="mixed3")
    x = _block_17(x, 128, "mixed4")
    x = _block_17(x, 160, "mixed5")
    x = _block_17(x, 160, "mixed6")
    x = _block_17(x, 192, "mixed7")
    branch3x3 = conv2d_bn(conv2d_bn(x, 192, 1, 1), 320, 3, 3, strides=(2, 2), padding="valid")
    branch7x7x3 = conv2d_bn(conv2d_bn(conv2d_bn(x, 192, 1, 1), 192, 1, 7), 192, 7, 1)
    branch7x7x3 = conv2d_bn(branch7x7x3, 192, 3, 3, strides=(2, 2), padding="valid")
    branch_pool = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = layers.concatenate([branch3x3, branch7x7x3, branch_pool], axis=_axis(), name="mixed8")
    x = _block_8(x, 0)
    x = _block_8(x, 1)
    x = imagenet_utils.pooled_top(x, include_top, pooling, classes, classifier_activation, weights, named_pools=False)
    model = Functional(inputs, x, name=name)
    file_name = f"inception_v3_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return imagenet_utils.load_weights(model, weights, file_name, _BASE + file_name, _HASHES[0 if include_top else 1])


def preprocess_input(x, data_format=None):
    """InceptionV3 inputs: scaled to [-1, 1] ("tf" mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
