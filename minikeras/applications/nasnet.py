"""NASNetMobile and NASNetLarge (``applications.nasnet``), NASNet-A with
Keras's layer names.

A NASNet is a stem, two reduction cells, then three stacks of ``num_blocks``
normal cells separated by reduction cells. Each cell reads the two previous
cells' outputs (``ip`` and ``p``): ``p`` is first adjusted to ``ip``'s size
and channels (a factorised reduction when the sizes differ, a 1x1 projection
when only the channels do), and the cell's branches (separable convolutions,
poolings, identities) are added in pairs and concatenated. Inputs are
scaled to [-1, 1] (``preprocess_input``).

Reference: Zoph et al., "Learning Transferable Architectures for Scalable
Image Recognition" (CVPR 2018).
"""
from minikeras import layers
from minikeras.applications import imagenet_utils
from minikeras.backend.keras_helpers import image_data_format

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/nasnet/"
# Keras's published files by default size: (with the top, without it), each (file name, origin name, MD5).
_WEIGHT_FILES = {
    224: (("nasnet_mobile.h5", "NASNet-mobile.h5", "020fb642bf7360b370c678b08e0adf61"),
          ("nasnet_mobile_no_top.h5", "NASNet-mobile-no-top.h5", "1ed92395b5b598bdda52abe5c0dbfd63")),
    331: (("nasnet_large.h5", "NASNet-large.h5", "11577c9a518f0070763c2b964a382f17"),
          ("nasnet_large_no_top.h5", "NASNet-large-no-top.h5", "d81d89dc07e6e56530c4e77faddd61b5")),
}


def _batch_norm(x, name):
    return layers.BatchNormalization(axis=-1, momentum=0.9997, epsilon=1e-3, name=name)(x)


def _conv1x1(x, filters, name):
    return layers.Conv2D(filters, (1, 1), strides=(1, 1), padding="same", use_bias=False, name=name,
                         kernel_initializer="he_normal")(x)


def _separable_conv_block(ip, filters, kernel_size=(3, 3), strides=(1, 1), block_id=None):
    """Two rounds of ReLU, separable convolution and batch norm (the first
    one strided, after Keras's padding, when ``strides`` is 2)."""
    x = layers.Activation("relu")(ip)
    padding = "same"
    if strides == (2, 2):
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size),
                                 name=f"separable_conv_1_pad_{block_id}")(x)
        padding = "valid"
    x = layers.SeparableConv2D(filters, kernel_size, strides=strides, name=f"separable_conv_1_{block_id}",
                               padding=padding, use_bias=False)(x)
    x = _batch_norm(x, f"separable_conv_1_bn_{block_id}")
    x = layers.Activation("relu")(x)
    x = layers.SeparableConv2D(filters, kernel_size, name=f"separable_conv_2_{block_id}", padding="same",
                               use_bias=False)(x)
    return _batch_norm(x, f"separable_conv_2_bn_{block_id}")


def _adjust_block(p, ip, filters, block_id=None):
    """The previous path ``p`` brought to ``ip``'s spatial size and ``filters`` channels."""
    if p is None:
        return ip
    if p.shape[-2] != ip.shape[-2]:
        # Factorised reduction: two 1x1 convolutions on strided samples offset by one pixel.
        p = layers.Activation("relu", name=f"adjust_relu_1_{block_id}")(p)
        p1 = layers.AveragePooling2D((1, 1), strides=(2, 2), padding="valid", name=f"adjust_avg_pool_1_{block_id}")(p)
        p1 = _conv1x1(p1, filters // 2, f"adjust_conv_1_{block_id}")
        p2 = layers.ZeroPadding2D(padding=((0, 1), (0, 1)))(p)
        p2 = layers.Cropping2D(cropping=((1, 0), (1, 0)))(p2)
        p2 = layers.AveragePooling2D((1, 1), strides=(2, 2), padding="valid", name=f"adjust_avg_pool_2_{block_id}")(p2)
        p2 = _conv1x1(p2, filters // 2, f"adjust_conv_2_{block_id}")
        p = layers.concatenate([p1, p2], axis=-1)
        return _batch_norm(p, f"adjust_bn_{block_id}")
    if p.shape[-1] != filters:
        p = layers.Activation("relu")(p)
        p = _conv1x1(p, filters, f"adjust_conv_projection_{block_id}")
        return _batch_norm(p, f"adjust_bn_{block_id}")
    return p


def _average_pool(x, strides, padding, name):
    return layers.AveragePooling2D((3, 3), strides=strides, padding=padding, name=name)(x)


def _normal_a_cell(ip, p, filters, block_id=None):
    """A NASNet-A normal cell; returns ``(output, ip)`` (the next cell's ``p``)."""
    p = _adjust_block(p, ip, filters, block_id)
    h = layers.Activation("relu")(ip)
    h = _batch_norm(_conv1x1(h, filters, f"normal_conv_1_{block_id}"), f"normal_bn_1_{block_id}")
    x1 = layers.add([_separable_conv_block(h, filters, (5, 5), block_id=f"normal_left1_{block_id}"),
                     _separable_conv_block(p, filters, block_id=f"normal_right1_{block_id}")],
                    name=f"normal_add_1_{block_id}")
    x2 = layers.add([_separable_conv_block(p, filters, (5, 5), block_id=f"normal_left2_{block_id}"),
                     _separable_conv_block(p, filters, (3, 3), block_id=f"normal_right2_{block_id}")],
                    name=f"normal_add_2_{block_id}")
    x3 = layers.add([_average_pool(h, (1, 1), "same", f"normal_left3_{block_id}"), p], name=f"normal_add_3_{block_id}")
    x4 = layers.add([_average_pool(p, (1, 1), "same", f"normal_left4_{block_id}"),
                     _average_pool(p, (1, 1), "same", f"normal_right4_{block_id}")], name=f"normal_add_4_{block_id}")
    x5 = layers.add([_separable_conv_block(h, filters, block_id=f"normal_left5_{block_id}"), h],
                    name=f"normal_add_5_{block_id}")
    x = layers.concatenate([p, x1, x2, x3, x4, x5], axis=-1, name=f"normal_concat_{block_id}")
    return x, ip


def _reduction_a_cell(ip, p, filters, block_id=None):
    """A NASNet-A reduction cell (halves the size); returns ``(output, ip)``."""
    p = _adjust_block(p, ip, filters, block_id)
    h = layers.Activation("relu")(ip)
    h = _batch_norm(_conv1x1(h, filters, f"reduction_conv_1_{block_id}"), f"reduction_bn_1_{block_id}")
    h3 = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(h, 3), name=f"reduction_pad_1_{block_id}")(h)
    x1 = layers.add([_separable_conv_block(h, filters, (5, 5), (2, 2), block_id=f"reduction_left1_{block_id}"),
                     _separable_conv_block(p, filters, (7, 7), (2, 2), block_id=f"reduction_right1_{block_id}")],
                    name=f"reduction_add_1_{block_id}")
    x2 = layers.add([layers.MaxPooling2D((3, 3), strides=(2, 2), padding="valid",
                                         name=f"reduction_left2_{block_id}")(h3),
                     _separable_conv_block(p, filters, (7, 7), (2, 2), block_id=f"reduction_right2_{block_id}")],
                    name=f"reduction_add_2_{block_id}")
    x3 = layers.add([_average_pool(h3, (2, 2), "valid", f"reduction_left3_{block_id}"),
                     _separable_conv_block(p, filters, (5, 5), (2, 2), block_id=f"reduction_right3_{block_id}")],
                    name=f"reduction_add3_{block_id}")
    x4 = layers.add([x2, _average_pool(x1, (1, 1), "same", f"reduction_left4_{block_id}")])
    x5 = layers.add([_separable_conv_block(x1, filters, (3, 3), block_id=f"reduction_left4_{block_id}"),
                     layers.MaxPooling2D((3, 3), strides=(2, 2), padding="valid",
                                         name=f"reduction_right5_{block_id}")(h3)],
                    name=f"reduction_add4_{block_id}")
    x = layers.concatenate([x2, x3, x4, x5], axis=-1, name=f"reduction_concat_{block_id}")
    return x, ip


def NASNet(input_shape=None, penultimate_filters=4032, num_blocks=6, stem_block_filters=96,  # noqa: N802
           skip_reduction=True, filter_multiplier=2, include_top=True, weights="imagenet", input_tensor=None,
           pooling=None, classes=1000, default_size=None, classifier_activation="softmax", name="NASNet"):
    """A NASNet-A (``num_blocks`` @ ``penultimate_filters``); arguments
    otherwise as ``ResNet50``'s. ``skip_reduction`` feeds the cell after a
    reduction cell the reduction's input rather than its output as ``p``."""
    from minikeras.models import Functional

    if image_data_format() == "channels_first":
        raise ValueError("NASNet does not support the `channels_first` image data format. Switch to `channels_last` "
                         "by editing your local config file at ~/.keras/keras.json")
    imagenet_utils.check_weights_argument(weights, include_top, classes)
    if isinstance(input_shape, tuple) and None in input_shape and weights == "imagenet":
        raise ValueError("When specifying the input shape of a NASNet and loading `ImageNet` weights, the input_shape "
                         f"argument must be static (no None entries). Got: `input_shape={input_shape}`.")
    default_size = 331 if default_size is None else default_size
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size, min_size=32,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    x, inputs = imagenet_utils.model_input(input_tensor, input_shape)
    if penultimate_filters % (24 * (filter_multiplier ** 2)) != 0:
        raise ValueError("For NASNet-A models, the `penultimate_filters` must be a multiple of 24 * "
                         f"(`filter_multiplier` ** 2). Current value: {penultimate_filters}")
    filters = penultimate_filters // 24
    x = layers.Conv2D(stem_block_filters, (3, 3), strides=(2, 2), padding="valid", use_bias=False, name="stem_conv1",
                      kernel_initializer="he_normal")(x)
    x = _batch_norm(x, "stem_bn1")
    x, p = _reduction_a_cell(x, None, filters // (filter_multiplier ** 2), block_id="stem_1")
    x, p = _reduction_a_cell(x, p, filters // filter_multiplier, block_id="stem_2")
    for stack in range(3):
        if stack > 0:
            x, after_reduction = _reduction_a_cell(x, p, filters * filter_multiplier ** stack,
                                                   block_id=f"reduce_{stack * num_blocks}")
            p = p if skip_reduction else after_reduction
        for block in range(num_blocks):
            block_id = f"{stack * num_blocks + block + (1 if stack else 0)}"
            x, p = _normal_a_cell(x, p, filters * filter_multiplier ** stack, block_id=block_id)
    x = layers.Activation("relu")(x)
    if include_top:
        x = layers.GlobalAveragePooling2D()(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = imagenet_utils.pool(x, pooling, names=(None, None))
    model = Functional(inputs, x, name=name)
    file_name = origin = file_hash = None
    if weights == "imagenet":
        if default_size not in _WEIGHT_FILES:
            raise ValueError("ImageNet weights can only be loaded with NASNetLarge or NASNetMobile")
        file_name, origin_name, file_hash = _WEIGHT_FILES[default_size][0 if include_top else 1]
        origin = BASE_WEIGHTS_PATH + origin_name
    return imagenet_utils.load_weights(model, weights, file_name, origin, file_hash)


def NASNetMobile(input_shape=None, include_top=True, weights="imagenet", input_tensor=None, pooling=None,  # noqa: N802
                 classes=1000, classifier_activation="softmax", name="nasnet_mobile"):
    """Keras's NASNetMobile (NASNet-A 4 @ 1056, default input 224x224);
    arguments as ``ResNet50``'s."""
    if not include_top and input_shape is None:
        input_shape = (224, 224, 3)
    return NASNet(input_shape, penultimate_filters=1056, num_blocks=4, stem_block_filters=32, skip_reduction=False,
                  filter_multiplier=2, include_top=include_top, weights=weights, input_tensor=input_tensor,
                  pooling=pooling, classes=classes, default_size=224, classifier_activation=classifier_activation,
                  name=name)


def NASNetLarge(input_shape=None, include_top=True, weights="imagenet", input_tensor=None, pooling=None,  # noqa: N802
                classes=1000, classifier_activation="softmax", name="nasnet_large"):
    """Keras's NASNetLarge (NASNet-A 6 @ 4032, default input 331x331);
    arguments as ``ResNet50``'s."""
    return NASNet(input_shape, penultimate_filters=4032, num_blocks=6, stem_block_filters=96, skip_reduction=True,
                  filter_multiplier=2, include_top=include_top, weights=weights, input_tensor=input_tensor,
                  pooling=pooling, classes=classes, default_size=331, classifier_activation=classifier_activation,
                  name=name)


def preprocess_input(x, data_format=None):
    """Scale pixels in [0, 255] to [-1, 1] (``imagenet_utils`` mode ``"tf"``)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
