"""EfficientNetV2 B0-B3, S, M and L (``applications.efficientnet_v2``), with
Keras's layer names.

The early stages are Fused-MBConv blocks (one full convolution in place of
the 1x1 expansion and the depthwise convolution), the later ones MBConv
blocks with squeeze-and-excitation. The preprocessing is in the model
(B0-B3: ``Rescaling`` to [0, 1] and the ImageNet ``Normalization``; S/M/L:
``Rescaling`` to [-1, 1]), so give the models pixels in [0, 255];
``preprocess_input`` passes them through.

As in Keras, ``blocks_args="default"`` and the choice of preprocessing
follow the model's ``name`` (``"efficientnetv2-b0"``, ...).

Reference: Tan & Le, "EfficientNetV2: Smaller Models and Faster Training"
(ICML 2021).
"""
import copy
import math

from minikeras import initializers, layers
from minikeras.applications import imagenet_utils
from minikeras.applications.efficientnet import _bn_axis, _conv_initializer, squeeze_excite
from minikeras.backend.keras_helpers import image_data_format

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/efficientnet_v2/"
# Keras's MD5 digests of its published files: (with the top, without it).
WEIGHTS_HASHES = {
    "b0": ("21ecbf6da12460d5c40bb2f29ceb2188", "893217f2bb855e2983157299931e43ff"),
    "b1": ("069f0534ff22adf035c89e2d9547a9dc", "0e80663031ca32d657f9caa404b6ec37"),
    "b2": ("424e49f28180edbde1e94797771950a7", "1dfe2e7a5d45b6632553a8961ea609eb"),
    "b3": ("1f1fc43bd98a6e4fd8fdfd551e02c7a0", "f6abf7b5849ac99a89b50dd3fd532856"),
    "-s": ("e1d88a8495beba45748fedd0cecbe016", "af0682fb74e8c54910f2d4393339c070"),
    "-m": ("a3bf6aa3276309f4fc6a34aa114c95cd", "1b8dc055df72dde80d614482840fe342"),
    "-l": ("27e6d408b53c7ebc868fefa357689935", "b0b66b5c863aef5b46e8608fe1711615"),
}
# Per stage: (kernel_size, num_repeat, input_filters, output_filters, expand_ratio, se_ratio, strides, conv_type),
# conv_type 1 a Fused-MBConv block, 0 an MBConv block.
_B_STAGES = [(3, 1, 32, 16, 1, 0, 1, 1), (3, 2, 16, 32, 4, 0, 2, 1), (3, 2, 32, 48, 4, 0, 2, 1),
             (3, 3, 48, 96, 4, 0.25, 2, 0), (3, 5, 96, 112, 6, 0.25, 1, 0), (3, 8, 112, 192, 6, 0.25, 2, 0)]
_STAGES = {
    "efficientnetv2-s": [(3, 2, 24, 24, 1, 0, 1, 1), (3, 4, 24, 48, 4, 0, 2, 1), (3, 4, 48, 64, 4, 0, 2, 1),
                         (3, 6, 64, 128, 4, 0.25, 2, 0), (3, 9, 128, 160, 6, 0.25, 1, 0),
                         (3, 15, 160, 256, 6, 0.25, 2, 0)],
    "efficientnetv2-m": [(3, 3, 24, 24, 1, 0, 1, 1), (3, 5, 24, 48, 4, 0, 2, 1), (3, 5, 48, 80, 4, 0, 2, 1),
                         (3, 7, 80, 160, 4, 0.25, 2, 0), (3, 14, 160, 176, 6, 0.25, 1, 0),
                         (3, 18, 176, 304, 6, 0.25, 2, 0), (3, 5, 304, 512, 6, 0.25, 1, 0)],
    "efficientnetv2-l": [(3, 4, 32, 32, 1, 0, 1, 1), (3, 7, 32, 64, 4, 0, 2, 1), (3, 7, 64, 96, 4, 0, 2, 1),
                         (3, 10, 96, 192, 4, 0.25, 2, 0), (3, 19, 192, 224, 6, 0.25, 1, 0),
                         (3, 25, 224, 384, 6, 0.25, 2, 0), (3, 7, 384, 640, 6, 0.25, 1, 0)],
    **{f"efficientnetv2-b{i}": _B_STAGES for i in range(4)},
}
_KEYS = ("kernel_size", "num_repeat", "input_filters", "output_filters", "expand_ratio", "se_ratio", "strides",
         "conv_type")
DEFAULT_BLOCKS_ARGS = {name: [dict(zip(_KEYS, stage)) for stage in stages] for name, stages in _STAGES.items()}


def round_filters(filters, width_coefficient, min_depth, depth_divisor):
    """Channels scaled by the width coefficient, to a multiple of the divisor."""
    filters *= width_coefficient
    return int(max(min_depth or depth_divisor, int(filters + depth_divisor / 2) // depth_divisor * depth_divisor))


def round_repeats(repeats, depth_coefficient):
    """Blocks of a stage scaled by the depth coefficient (rounded up)."""
    return int(math.ceil(depth_coefficient * repeats))


def _batch_norm(x, momentum, name):
    return layers.BatchNormalization(axis=_bn_axis(), momentum=momentum, name=name)(x)


def _residual(x, inputs, strides, input_filters, output_filters, survival_probability, name):
    """The skip connection of a block that keeps the shape. Keras passes
    ``survival_probability`` to Dropout as its rate; kept so, for its files
    and its training behaviour."""
    if strides == 1 and input_filters == output_filters:
        if survival_probability:
            x = layers.Dropout(survival_probability, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


def MBConvBlock(input_filters, output_filters, expand_ratio=1, kernel_size=3, strides=1, se_ratio=0.0,  # noqa: N802
                bn_momentum=0.9, activation="swish", survival_probability=0.8, name=None):
    """Inverted residual: 1x1 expansion, depthwise convolution, optional
    squeeze-and-excitation, 1x1 projection. Returns a function of the input."""
    def apply(inputs):
        filters = input_filters * expand_ratio
        x = inputs
        if expand_ratio != 1:
            x = layers.Conv2D(filters, 1, strides=1, kernel_initializer=_conv_initializer(), padding="same",
                              use_bias=False, name=f"{name}expand_conv")(x)
            x = _batch_norm(x, bn_momentum, f"{name}expand_bn")
            x = layers.Activation(activation, name=f"{name}expand_activation")(x)
        x = layers.DepthwiseConv2D(kernel_size, strides=strides, depthwise_initializer=_conv_initializer(),
                                   padding="same", use_bias=False, name=f"{name}dwconv2")(x)
        x = _batch_norm(x, bn_momentum, f"{name}bn")
        x = layers.Activation(activation, name=f"{name}activation")(x)
        if 0 < se_ratio <= 1:
            x = squeeze_excite(x, filters, input_filters, se_ratio, activation, name)
        x = layers.Conv2D(output_filters, 1, strides=1, kernel_initializer=_conv_initializer(), padding="same",
                          use_bias=False, name=f"{name}project_conv")(x)
        x = _batch_norm(x, bn_momentum, f"{name}project_bn")
        return _residual(x, inputs, strides, input_filters, output_filters, survival_probability, name)

    return apply


def FusedMBConvBlock(input_filters, output_filters, expand_ratio=1, kernel_size=3, strides=1,  # noqa: N802
                     se_ratio=0.0, bn_momentum=0.9, activation="swish", survival_probability=0.8, name=None):
    """Fused inverted residual: one ``kernel_size`` convolution expands (or,
    with ``expand_ratio`` 1, is the block's only convolution), then optional
    squeeze-and-excitation and a 1x1 projection."""
    def apply(inputs):
        filters = input_filters * expand_ratio
        x = inputs
        if expand_ratio != 1:
            x = layers.Conv2D(filters, kernel_size=kernel_size, strides=strides, kernel_initializer=_conv_initializer(),
                              padding="same", use_bias=False, name=f"{name}expand_conv")(x)
            x = _batch_norm(x, bn_momentum, f"{name}expand_bn")
            x = layers.Activation(activation, name=f"{name}expand_activation")(x)
        if 0 < se_ratio <= 1:
            x = squeeze_excite(x, filters, input_filters, se_ratio, activation, name)
        fused = expand_ratio == 1
        x = layers.Conv2D(output_filters, kernel_size=kernel_size if fused else 1, strides=strides if fused else 1,
                          kernel_initializer=_conv_initializer(), padding="same", use_bias=False,
                          name=f"{name}project_conv")(x)
        x = _batch_norm(x, bn_momentum, f"{name}project_bn")
        if fused:
            x = layers.Activation(activation, name=f"{name}project_activation")(x)
        return _residual(x, inputs, strides, input_filters, output_filters, survival_probability, name)

    return apply


def EfficientNetV2(width_coefficient, depth_coefficient, default_size, dropout_rate=0.2,  # noqa: N802
                   drop_connect_rate=0.2, depth_divisor=8, min_depth=8, bn_momentum=0.9, activation="swish",
                   blocks_args="default", name="efficientnetv2", include_top=True, weights="imagenet",
                   input_tensor=None, input_shape=None, pooling=None, classes=1000, classifier_activation="softmax",
                   include_preprocessing=True, weights_name=None):
    """An EfficientNetV2 of ``blocks_args`` stages scaled by the width and
    depth coefficients; arguments otherwise as ``ResNet50``'s plus
    ``include_preprocessing``."""
    from minikeras.models import Functional

    if blocks_args == "default":
        if name not in DEFAULT_BLOCKS_ARGS:
            raise ValueError(f"blocks_args='default' takes the stages of the model named after them, one of "
                             f"{sorted(DEFAULT_BLOCKS_ARGS)}; received name={name!r}. Pass blocks_args.")
        blocks_args = DEFAULT_BLOCKS_ARGS[name]
    imagenet_utils.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size, min_size=32,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    x, inputs = imagenet_utils.model_input(input_tensor, input_shape)
    if include_preprocessing:
        channels = input_shape[-1] if _bn_axis() == -1 else input_shape[0]
        if name.split("-")[-1].startswith("b") and channels == 3:
            x = layers.Rescaling(scale=1.0 / 255)(x)
            x = layers.Normalization(mean=[0.485, 0.456, 0.406], variance=[0.229 ** 2, 0.224 ** 2, 0.225 ** 2],
                                     axis=_bn_axis())(x)
        else:
            x = layers.Rescaling(scale=1.0 / 128.0, offset=-1)(x)

    def scaled(filters):
        return round_filters(filters, width_coefficient, min_depth, depth_divisor)

    x = layers.Conv2D(scaled(blocks_args[0]["input_filters"]), kernel_size=3, strides=2,
                      kernel_initializer=_conv_initializer(), padding="same", use_bias=False, name="stem_conv")(x)
    x = _batch_norm(x, bn_momentum, "stem_bn")
    x = layers.Activation(activation, name="stem_activation")(x)
    blocks_args = copy.deepcopy(blocks_args)
    done, total = 0, float(sum(args["num_repeat"] for args in blocks_args))
    for stage, args in enumerate(blocks_args):
        if args["num_repeat"] <= 0:
            raise ValueError(f"The number of repeats in `EfficientNetV2` must be > 0. Received: "
                             f"num_repeat={args['num_repeat']}")
        args["input_filters"], args["output_filters"] = scaled(args["input_filters"]), scaled(args["output_filters"])
        block = {0: MBConvBlock, 1: FusedMBConvBlock}[args.pop("conv_type")]
        for repeat in range(round_repeats(args.pop("num_repeat"), depth_coefficient)):
            if repeat > 0:
                args["strides"], args["input_filters"] = 1, args["output_filters"]
            x = block(activation=activation, bn_momentum=bn_momentum,
                      survival_probability=drop_connect_rate * done / total,
                      name=f"block{stage + 1}{chr(repeat + 97)}_", **args)(x)
            done += 1
    x = layers.Conv2D(scaled(1280), kernel_size=1, strides=1, kernel_initializer=_conv_initializer(), padding="same",
                      use_bias=False, name="top_conv")(x)
    x = _batch_norm(x, bn_momentum, "top_bn")
    x = layers.Activation(activation, name="top_activation")(x)
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate, name="top_dropout")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions",
                         kernel_initializer=initializers.VarianceScaling(scale=1.0 / 3.0, mode="fan_out",
                                                                         distribution="uniform"),
                         bias_initializer=initializers.Constant(0.0))(x)
    else:
        x = imagenet_utils.pool(x, pooling)
    model = Functional(inputs, x, name=name)
    file_name = origin = file_hash = None
    if weights == "imagenet" and weights_name in WEIGHTS_HASHES:
        file_name = name + (".h5" if include_top else "_notop.h5")
        origin, file_hash = BASE_WEIGHTS_PATH + file_name, WEIGHTS_HASHES[weights_name][0 if include_top else 1]
    return imagenet_utils.load_weights(model, weights, file_name, origin, file_hash)


def _constructor(model_name, suffix, width, depth, size):
    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
              classifier_activation="softmax", include_preprocessing=True, name=f"efficientnetv2-{suffix}"):
        return EfficientNetV2(width, depth, size, name=name, include_top=include_top, weights=weights,
                              input_tensor=input_tensor, input_shape=input_shape, pooling=pooling, classes=classes,
                              classifier_activation=classifier_activation,
                              include_preprocessing=include_preprocessing,
                              weights_name=suffix if suffix.startswith("b") else f"-{suffix}")

    build.__name__ = build.__qualname__ = model_name
    build.__doc__ = (f"Keras's {model_name} (default input {size}x{size}); arguments as ``ResNet50``'s plus "
                     "``include_preprocessing``. Takes pixels in [0, 255]: the preprocessing is part of the model.")
    return build


EfficientNetV2B0 = _constructor("EfficientNetV2B0", "b0", 1.0, 1.0, 224)
EfficientNetV2B1 = _constructor("EfficientNetV2B1", "b1", 1.0, 1.1, 240)
EfficientNetV2B2 = _constructor("EfficientNetV2B2", "b2", 1.1, 1.2, 260)
EfficientNetV2B3 = _constructor("EfficientNetV2B3", "b3", 1.2, 1.4, 300)
EfficientNetV2S = _constructor("EfficientNetV2S", "s", 1.0, 1.0, 384)
EfficientNetV2M = _constructor("EfficientNetV2M", "m", 1.0, 1.0, 480)
EfficientNetV2L = _constructor("EfficientNetV2L", "l", 1.0, 1.0, 480)


def preprocess_input(x, data_format=None):
    """A pass-through: EfficientNetV2 models rescale and normalise inside."""
    return x


decode_predictions = imagenet_utils.decode_predictions
