"""EfficientNetB0-B7 (``applications.efficientnet``), with Keras's layer names.

The preprocessing is inside the model (``Rescaling`` to [0, 1] and a
``Normalization`` layer whose statistics come with the ImageNet weights), so
``preprocess_input`` passes images through: give the models pixels in
[0, 255].

Reference: Tan & Le, "EfficientNet: Rethinking Model Scaling for
Convolutional Neural Networks" (ICML 2019).
"""
import copy
import math

from minikeras import initializers, layers
from minikeras.applications import imagenet_utils
from minikeras.backend.keras_helpers import image_data_format

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/keras-applications/"
# Keras's MD5 digests of its published files: (with the top, without it).
WEIGHTS_HASHES = {
    "b0": ("902e53a9f72be733fc0bcb005b3ebbac", "50bc09e76180e00e4465e1a485ddc09d"),
    "b1": ("1d254153d4ab51201f1646940f018540", "74c4e6b3e1f6a1eea24c589628592432"),
    "b2": ("b15cce36ff4dcbd00b6dd88e7857a6ad", "111f8e2ac8aa800a7a99e3239f7bfb39"),
    "b3": ("ffd1fdc53d0ce67064dc6a9c7960ede0", "af6d107764bb5b1abb91932881670226"),
    "b4": ("18c95ad55216b8f92d7e70b3a046e2fc", "ebc24e6d6c33eaebbd558eafbeedf1ba"),
    "b5": ("ace28f2a6363774853a83a0b21b9421a", "38879255a25d3c92d5e44e04ae6cec6f"),
    "b6": ("165f6e37dce68623721b423839de8be5", "9ecce42647a20130c1f39a5d4cb75743"),
    "b7": ("8c03f828fec3ef71311cd463b6759d99", "cbcfe4450ddf6f3ad90b1b398090fe4a"),
}
# (kernel_size, repeats, filters_in, filters_out, expand_ratio, strides); every block has id_skip and se_ratio 0.25.
DEFAULT_BLOCKS = [(3, 1, 32, 16, 1, 1), (3, 2, 16, 24, 6, 2), (5, 2, 24, 40, 6, 2), (3, 3, 40, 80, 6, 2),
                  (5, 3, 80, 112, 6, 1), (5, 4, 112, 192, 6, 2), (3, 1, 192, 320, 6, 1)]
IMAGENET_STDDEV_RGB = [0.229, 0.224, 0.225]


def _conv_initializer():
    return initializers.VarianceScaling(scale=2.0, mode="fan_out", distribution="truncated_normal")


def _bn_axis():
    return -1 if image_data_format() == "channels_last" else 1


def squeeze_excite(x, filters, filters_in, se_ratio, activation, name):
    """Channel attention (EfficientNet's and EfficientNetV2's): pool, squeeze
    to ``filters_in * se_ratio`` channels, expand, and gate ``x`` with it."""
    squeezed = max(1, int(filters_in * se_ratio))
    se = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
    se = layers.Reshape((1, 1, filters) if _bn_axis() == -1 else (filters, 1, 1), name=f"{name}se_reshape")(se)
    se = layers.Conv2D(squeezed, 1, padding="same", activation=activation, kernel_initializer=_conv_initializer(),
                       name=f"{name}se_reduce")(se)
    se = layers.Conv2D(filters, 1, padding="same", activation="sigmoid", kernel_initializer=_conv_initializer(),
                       name=f"{name}se_expand")(se)
    return layers.multiply([x, se], name=f"{name}se_excite")


def block(inputs, activation="swish", drop_rate=0.0, name="", filters_in=32, filters_out=16, kernel_size=3, strides=1,
          expand_ratio=1, se_ratio=0.0, id_skip=True):
    """An inverted residual block with squeeze-and-excitation (MBConv)."""
    filters = filters_in * expand_ratio
    x = inputs
    if expand_ratio != 1:
        x = layers.Conv2D(filters, 1, padding="same", use_bias=False, kernel_initializer=_conv_initializer(),
                          name=f"{name}expand_conv")(x)
        x = layers.BatchNormalization(axis=_bn_axis(), name=f"{name}expand_bn")(x)
        x = layers.Activation(activation, name=f"{name}expand_activation")(x)
    if strides == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size), name=f"{name}dwconv_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=strides, padding="valid" if strides == 2 else "same",
                               use_bias=False, depthwise_initializer=_conv_initializer(), name=f"{name}dwconv")(x)
    x = layers.BatchNormalization(axis=_bn_axis(), name=f"{name}bn")(x)
    x = layers.Activation(activation, name=f"{name}activation")(x)
    if 0 < se_ratio <= 1:
        x = squeeze_excite(x, filters, filters_in, se_ratio, activation, name)
    x = layers.Conv2D(filters_out, 1, padding="same", use_bias=False, kernel_initializer=_conv_initializer(),
                      name=f"{name}project_conv")(x)
    x = layers.BatchNormalization(axis=_bn_axis(), name=f"{name}project_bn")(x)
    if id_skip and strides == 1 and filters_in == filters_out:
        if drop_rate > 0:
            x = layers.Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


def EfficientNet(width_coefficient, depth_coefficient, default_size, dropout_rate=0.2, drop_connect_rate=0.2,
                 depth_divisor=8, activation="swish", blocks_args="default", name="efficientnet", include_top=True,
                 weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
                 classifier_activation="softmax", weights_name=None):
    """An EfficientNet scaled by ``width_coefficient`` and ``depth_coefficient``."""
    from minikeras.models import Functional

    imagenet_utils.check_weights_argument(weights, include_top, classes)
    if blocks_args == "default":
        blocks_args = [dict(kernel_size=k, repeats=r, filters_in=i, filters_out=o, expand_ratio=e, id_skip=True,
                            strides=s, se_ratio=0.25) for k, r, i, o, e, s in DEFAULT_BLOCKS]
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size, min_size=32,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    image, inputs = imagenet_utils.model_input(input_tensor, input_shape)

    def round_filters(filters, divisor=depth_divisor):
        filters *= width_coefficient
        rounded = max(divisor, int(filters + divisor / 2) // divisor * divisor)
        return int(rounded + divisor if rounded < 0.9 * filters else rounded)

    def round_repeats(repeats):
        return int(math.ceil(depth_coefficient * repeats))

    x = layers.Rescaling(1.0 / 255.0)(image)
    x = layers.Normalization(axis=_bn_axis())(x)
    if weights == "imagenet":
        # The published weights' Normalization holds the variance where the model wants the deviation.
        x = layers.Rescaling([1.0 / math.sqrt(deviation) for deviation in IMAGENET_STDDEV_RGB])(x)
    x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3), name="stem_conv_pad")(x)
    x = layers.Conv2D(round_filters(32), 3, strides=2, padding="valid", use_bias=False,
                      kernel_initializer=_conv_initializer(), name="stem_conv")(x)
    x = layers.BatchNormalization(axis=_bn_axis(), name="stem_bn")(x)
    x = layers.Activation(activation, name="stem_activation")(x)
    blocks_args = copy.deepcopy(blocks_args)
    done, total = 0, float(sum(round_repeats(args["repeats"]) for args in blocks_args))
    for stage, args in enumerate(blocks_args):
        args["filters_in"] = round_filters(args["filters_in"])
        args["filters_out"] = round_filters(args["filters_out"])
        for repeat in range(round_repeats(args.pop("repeats"))):
            if repeat > 0:
                args["strides"], args["filters_in"] = 1, args["filters_out"]
            x = block(x, activation, drop_connect_rate * done / total, name=f"block{stage + 1}{chr(repeat + 97)}_",
                      **args)
            done += 1
    x = layers.Conv2D(round_filters(1280), 1, padding="same", use_bias=False, kernel_initializer=_conv_initializer(),
                      name="top_conv")(x)
    x = layers.BatchNormalization(axis=_bn_axis(), name="top_bn")(x)
    x = layers.Activation(activation, name="top_activation")(x)
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate, name="top_dropout")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions",
                         kernel_initializer=initializers.VarianceScaling(scale=1.0 / 3.0, mode="fan_out",
                                                                         distribution="uniform"))(x)
    else:
        x = imagenet_utils.pool(x, pooling)
    model = Functional(inputs, x, name=name)
    file_name = origin = file_hash = None
    if weights_name in WEIGHTS_HASHES:
        file_name = name + (".h5" if include_top else "_notop.h5")
        origin, file_hash = BASE_WEIGHTS_PATH + file_name, WEIGHTS_HASHES[weights_name][0 if include_top else 1]
    return imagenet_utils.load_weights(model, weights, file_name, origin, file_hash)


def _constructor(index, width, depth, size, dropout):
    model_name = f"EfficientNetB{index}"

    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
              classifier_activation="softmax", name=model_name.lower()):
        return EfficientNet(width, depth, size, dropout, name=name, include_top=include_top, weights=weights,
                            input_tensor=input_tensor, input_shape=input_shape, pooling=pooling, classes=classes,
                            classifier_activation=classifier_activation, weights_name=f"b{index}")

    build.__name__ = build.__qualname__ = model_name
    build.__doc__ = (f"Keras's {model_name} (default input {size}x{size}); arguments as ``ResNet50``'s. Takes "
                     "pixels in [0, 255]: the preprocessing is part of the model.")
    return build


EfficientNetB0 = _constructor(0, 1.0, 1.0, 224, 0.2)
EfficientNetB1 = _constructor(1, 1.0, 1.1, 240, 0.2)
EfficientNetB2 = _constructor(2, 1.1, 1.2, 260, 0.3)
EfficientNetB3 = _constructor(3, 1.2, 1.4, 300, 0.3)
EfficientNetB4 = _constructor(4, 1.4, 1.8, 380, 0.4)
EfficientNetB5 = _constructor(5, 1.6, 2.2, 456, 0.4)
EfficientNetB6 = _constructor(6, 1.8, 2.6, 528, 0.5)
EfficientNetB7 = _constructor(7, 2.0, 3.1, 600, 0.5)


def preprocess_input(x, data_format=None):
    """A pass-through: EfficientNet models rescale and normalise inside."""
    return x


decode_predictions = imagenet_utils.decode_predictions
