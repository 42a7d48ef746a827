"""MobileNetV3Small and MobileNetV3Large (``applications.mobilenet_v3``),
with Keras's layer names.

Keras writes the squeeze-and-excitation gate as ``ReLU(6.)(x + 3.) / 6``
(one layer and two graph operations); minikeras uses the equal
``Activation("hard_sigmoid")`` layer in the ReLU's place, so the models have
the same layers (the gate has no weights). Preprocessing is inside the model
(``include_preprocessing``): give it pixels in [0, 255].

Reference: Howard et al., "Searching for MobileNetV3" (ICCV 2019).
"""
import warnings

from minikeras import layers
from minikeras.applications import imagenet_utils
from minikeras.backend.keras_helpers import image_data_format

BASE_WEIGHT_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet_v3/"
# Keras's MD5 digests of its published files: (with the top, without it).
WEIGHTS_HASHES = {
    "large_224_0.75_float": ("765b44a33ad4005b3ac83185abf1d0eb", "40af19a13ebea4e2ee0c676887f69a2e"),
    "large_224_1.0_float": ("59e551e166be033d707958cf9e29a6a7", "07fb09a5933dd0c8eaafa16978110389"),
    "large_minimalistic_224_1.0_float": ("675e7b876c45c57e9e63e6d90a36599c", "ec5221f64a2f6d1ef965a614bdae7973"),
    "small_224_0.75_float": ("cb65d4e5be93758266aa0a7f2c6708b7", "ebdb5cc8e0b497cd13a7c275d475c819"),
    "small_224_1.0_float": ("8768d4c2e7dee89b9d02b2d03d65d862", "d3e8ec802a04aa4fc771ee12a9a9b836"),
    "small_minimalistic_224_1.0_float": ("99cd97fb2fcdad2bf028eb838de69e37", "cde8136e733e811080d9fcd8a252f7e4"),
}


def _channel_axis():
    return 1 if image_data_format() == "channels_first" else -1


def relu(x):
    return layers.ReLU()(x)


def hard_sigmoid(x):
    return layers.Activation("hard_sigmoid")(x)


def hard_swish(x):
    return layers.Activation("hard_swish")(x)


def _depth(value, divisor=8, min_value=None):
    min_value = divisor if min_value is None else min_value
    rounded = max(min_value, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def _se_block(inputs, filters, se_ratio, prefix):
    x = layers.GlobalAveragePooling2D(keepdims=True, name=f"{prefix}squeeze_excite_avg_pool")(inputs)
    x = layers.Conv2D(_depth(filters * se_ratio), kernel_size=1, padding="same", name=f"{prefix}squeeze_excite_conv")(x)
    x = layers.ReLU(name=f"{prefix}squeeze_excite_relu")(x)
    x = layers.Conv2D(filters, kernel_size=1, padding="same", name=f"{prefix}squeeze_excite_conv_1")(x)
    x = hard_sigmoid(x)
    return layers.Multiply(name=f"{prefix}squeeze_excite_mul")([inputs, x])


def _inverted_res_block(x, expansion, filters, kernel_size, stride, se_ratio, activation, block_id):
    shortcut = x
    prefix = "expanded_conv_"
    in_filters = x.shape[_channel_axis()]
    if block_id:
        prefix = f"expanded_conv_{block_id}_"
        x = layers.Conv2D(_depth(in_filters * expansion), kernel_size=1, padding="same", use_bias=False,
                          name=f"{prefix}expand")(x)
        x = layers.BatchNormalization(axis=_channel_axis(), epsilon=1e-3, momentum=0.999, name=f"{prefix}expand_bn")(x)
        x = activation(x)
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size), name=f"{prefix}depthwise_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=stride, padding="same" if stride == 1 else "valid",
                               use_bias=False, name=f"{prefix}depthwise")(x)
    x = layers.BatchNormalization(axis=_channel_axis(), epsilon=1e-3, momentum=0.999, name=f"{prefix}depthwise_bn")(x)
    x = activation(x)
    if se_ratio:
        x = _se_block(x, _depth(in_filters * expansion), se_ratio, prefix)
    x = layers.Conv2D(filters, kernel_size=1, padding="same", use_bias=False, name=f"{prefix}project")(x)
    x = layers.BatchNormalization(axis=_channel_axis(), epsilon=1e-3, momentum=0.999, name=f"{prefix}project_bn")(x)
    if stride == 1 and in_filters == filters:
        x = layers.Add(name=f"{prefix}add")([shortcut, x])
    return x


def MobileNetV3(stack_fn, last_point_ch, input_shape=None, alpha=1.0, model_type="large", minimalistic=False,
                include_top=True, weights="imagenet", input_tensor=None, classes=1000, pooling=None,
                dropout_rate=0.2, classifier_activation="softmax", include_preprocessing=True, name=None):
    """A MobileNetV3 whose blocks ``stack_fn`` builds (Keras's ``MobileNetV3``)."""
    from minikeras.models import Functional

    imagenet_utils.check_weights_argument(weights, include_top, classes)
    if input_shape is None and input_tensor is not None:
        input_shape = tuple(input_tensor.shape[1:])
    if input_shape is None:
        input_shape = (None, None, 3) if image_data_format() == "channels_last" else (3, None, None)
    rows, cols = (input_shape[0], input_shape[1]) if image_data_format() == "channels_last" else input_shape[1:]
    if rows and cols and (rows < 32 or cols < 32):
        raise ValueError(f"Input size must be at least 32x32; Received `input_shape={input_shape}`")
    if weights == "imagenet":
        if (not minimalistic and alpha not in [0.75, 1.0]) or (minimalistic and alpha != 1.0):
            raise ValueError("If imagenet weights are being loaded, alpha can be one of `0.75`, `1.0` for non "
                             f"minimalistic or `1.0` for minimalistic only. Received alpha={alpha}")
        if rows != cols or rows != 224:
            warnings.warn("`input_shape` is undefined or non-square, or `rows` is not 224. Weights for input shape "
                          "(224, 224) will be loaded as the default.", stacklevel=3)
    image, inputs = imagenet_utils.model_input(input_tensor, input_shape)
    kernel, activation, se_ratio = (3, relu, None) if minimalistic else (5, hard_swish, 0.25)
    x = layers.Rescaling(scale=1.0 / 127.5, offset=-1.0)(image) if include_preprocessing else image
    x = layers.Conv2D(16, kernel_size=3, strides=(2, 2), padding="same", use_bias=False, name="conv")(x)
    x = layers.BatchNormalization(axis=_channel_axis(), epsilon=1e-3, momentum=0.999, name="conv_bn")(x)
    x = activation(x)
    x = stack_fn(x, kernel, activation, se_ratio)
    last_conv_ch = _depth(x.shape[_channel_axis()] * 6)
    if alpha > 1.0:
        last_point_ch = _depth(last_point_ch * alpha)
    x = layers.Conv2D(last_conv_ch, kernel_size=1, padding="same", use_bias=False, name="conv_1")(x)
    x = layers.BatchNormalization(axis=_channel_axis(), epsilon=1e-3, momentum=0.999, name="conv_1_bn")(x)
    x = activation(x)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Conv2D(last_point_ch, kernel_size=1, padding="same", use_bias=True, name="conv_2")(x)
        x = activation(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate)(x)
        x = layers.Conv2D(classes, kernel_size=1, padding="same", name="logits")(x)
        x = layers.Flatten()(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Activation(activation=classifier_activation, name="predictions")(x)
    else:
        x = imagenet_utils.pool(x, pooling)
    model = Functional(inputs, x, name=name)
    key = f"{model_type}{'_minimalistic' if minimalistic else ''}_224_{alpha}_float"
    file_name = origin = file_hash = None
    if key in WEIGHTS_HASHES:
        file_name = f"weights_mobilenet_v3_{key}{'' if include_top else '_no_top_v2'}.h5"
        origin, file_hash = BASE_WEIGHT_PATH + file_name, WEIGHTS_HASHES[key][0 if include_top else 1]
    return imagenet_utils.load_weights(model, weights, file_name, origin, file_hash)


# (expansion, filters, kernel ("k": the model's), stride, squeeze-excite, activation ("a": the model's))
_SMALL = [(1, 16, 3, 2, True, "relu"), (72 / 16, 24, 3, 2, False, "relu"), (88 / 24, 24, 3, 1, False, "relu"),
          (4, 40, "k", 2, True, "a"), (6, 40, "k", 1, True, "a"), (6, 40, "k", 1, True, "a"),
          (3, 48, "k", 1, True, "a"), (3, 48, "k", 1, True, "a"), (6, 96, "k", 2, True, "a"),
          (6, 96, "k", 1, True, "a"), (6, 96, "k", 1, True, "a")]
_LARGE = [(1, 16, 3, 1, False, "relu"), (4, 24, 3, 2, False, "relu"), (3, 24, 3, 1, False, "relu"),
          (3, 40, "k", 2, True, "relu"), (3, 40, "k", 1, True, "relu"), (3, 40, "k", 1, True, "relu"),
          (6, 80, 3, 2, False, "a"), (2.5, 80, 3, 1, False, "a"), (2.3, 80, 3, 1, False, "a"),
          (2.3, 80, 3, 1, False, "a"), (6, 112, 3, 1, True, "a"), (6, 112, 3, 1, True, "a"),
          (6, 160, "k", 2, True, "a"), (6, 160, "k", 1, True, "a"), (6, 160, "k", 1, True, "a")]


def _stack(plan, alpha):
    def stack_fn(x, kernel, activation, se_ratio):
        for block_id, (expansion, filters, size, stride, squeeze, act) in enumerate(plan):
            x = _inverted_res_block(x, expansion, _depth(filters * alpha), kernel if size == "k" else size, stride,
                                    se_ratio if squeeze else None, relu if act == "relu" else activation, block_id)
        return x

    return stack_fn


def MobileNetV3Small(input_shape=None, alpha=1.0, minimalistic=False, include_top=True, weights="imagenet",
                     input_tensor=None, classes=1000, pooling=None, dropout_rate=0.2, classifier_activation="softmax",
                     include_preprocessing=True, name="MobileNetV3Small"):
    """Keras's MobileNetV3Small; ``minimalistic`` drops squeeze-excite and
    hard-swish. Takes pixels in [0, 255] (with ``include_preprocessing``)."""
    return MobileNetV3(_stack(_SMALL, alpha), 1024, input_shape, alpha, "small", minimalistic, include_top, weights,
                       input_tensor, classes, pooling, dropout_rate, classifier_activation, include_preprocessing,
                       name=name)


def MobileNetV3Large(input_shape=None, alpha=1.0, minimalistic=False, include_top=True, weights="imagenet",
                     input_tensor=None, classes=1000, pooling=None, dropout_rate=0.2, classifier_activation="softmax",
                     include_preprocessing=True, name="MobileNetV3Large"):
    """Keras's MobileNetV3Large; arguments as ``MobileNetV3Small``'s."""
    return MobileNetV3(_stack(_LARGE, alpha), 1280, input_shape, alpha, "large", minimalistic, include_top, weights,
                       input_tensor, classes, pooling, dropout_rate, classifier_activation, include_preprocessing,
                       name=name)


def preprocess_input(x, data_format=None):
    """A pass-through: MobileNetV3 models rescale inside (``include_preprocessing``)."""
    return x


decode_predictions = imagenet_utils.decode_predictions
