"""MobileNet (``applications.mobilenet``) and MobileNetV2
(``applications.mobilenet_v2``), with Keras's layer names and width
(``alpha``) rules.

References: Howard et al., "MobileNets" (2017); Sandler et al.,
"MobileNetV2: Inverted Residuals and Linear Bottlenecks" (CVPR 2018).
"""
import warnings

from minikeras import layers
from minikeras.applications import imagenet_utils
from minikeras.backend.keras_helpers import image_data_format

_BASE = "https://storage.googleapis.com/tensorflow/keras-applications/"


def _channel_axis():
    return 1 if image_data_format() == "channels_first" else -1


def _rows_cols(shape):
    return (shape[1], shape[2]) if image_data_format() == "channels_first" else (shape[0], shape[1])


def _default_size(input_shape, input_tensor, sizes):
    """The published resolution the input matches (224 otherwise), as Keras picks it."""
    shape = input_shape
    if shape is None and input_tensor is not None:
        shape = tuple(input_tensor.shape[1:])
    if shape is None:
        return 224
    rows, cols = _rows_cols(shape)
    return rows if rows == cols and rows in sizes else 224


def _imagenet_rows(rows, cols, sizes, weights):
    if weights == "imagenet" and (rows != cols or rows not in sizes):
        warnings.warn(f"`input_shape` is undefined or non-square, or `rows` is not in {sizes}. Weights for input "
                      "shape (224, 224) will be loaded as the default.", stacklevel=3)
        return 224
    return rows


def _head(x, include_top, pooling, classes, classifier_activation, weights):
    if include_top:
        x = layers.GlobalAveragePooling2D()(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        return layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    return imagenet_utils.pool(x, pooling, names=(None, None))


# -- MobileNet ---------------------------------------------------------------------------------------------

def _conv_block(inputs, filters, alpha, kernel=(3, 3), strides=(1, 1)):
    x = layers.Conv2D(int(filters * alpha), kernel, padding="same", use_bias=False, strides=strides,
                      name="conv1")(inputs)
    x = layers.BatchNormalization(axis=_channel_axis(), name="conv1_bn")(x)
    return layers.ReLU(6.0, name="conv1_relu")(x)


def _depthwise_conv_block(inputs, pointwise_filters, alpha, depth_multiplier=1, strides=(1, 1), block_id=1):
    x = inputs
    if strides != (1, 1):
        x = layers.ZeroPadding2D(((0, 1), (0, 1)), name=f"conv_pad_{block_id}")(x)
    x = layers.DepthwiseConv2D((3, 3), padding="same" if strides == (1, 1) else "valid",
                               depth_multiplier=depth_multiplier, strides=strides, use_bias=False,
                               name=f"conv_dw_{block_id}")(x)
    x = layers.BatchNormalization(axis=_channel_axis(), name=f"conv_dw_{block_id}_bn")(x)
    x = layers.ReLU(6.0, name=f"conv_dw_{block_id}_relu")(x)
    x = layers.Conv2D(int(pointwise_filters * alpha), (1, 1), padding="same", use_bias=False, strides=(1, 1),
                      name=f"conv_pw_{block_id}")(x)
    x = layers.BatchNormalization(axis=_channel_axis(), name=f"conv_pw_{block_id}_bn")(x)
    return layers.ReLU(6.0, name=f"conv_pw_{block_id}_relu")(x)


def MobileNet(input_shape=None, alpha=1.0, depth_multiplier=1, dropout=1e-3, include_top=True,
              weights="imagenet", input_tensor=None, pooling=None, classes=1000, classifier_activation="softmax",
              name=None):
    """Keras's MobileNet: ``alpha`` scales every layer's width,
    ``depth_multiplier`` the depthwise convolutions; the top is a 1x1
    convolution (``conv_preds``). Inputs from ``mobilenet.preprocess_input``."""
    from minikeras.models import Functional

    imagenet_utils.check_weights_argument(weights, include_top, classes)
    sizes = [128, 160, 192, 224]
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=_default_size(input_shape, None, sizes),
                                                    min_size=32, data_format=image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    rows, cols = _rows_cols(input_shape)
    if weights == "imagenet":
        if depth_multiplier != 1:
            raise ValueError(f"If imagenet weights are being loaded, depth multiplier must be 1.  Received "
                             f"depth_multiplier={depth_multiplier}")
        if alpha not in [0.25, 0.5, 0.75, 1.0]:
            raise ValueError(f"If imagenet weights are being loaded, alpha can be one of`0.25`, `0.50`, `0.75` or "
                             f"`1.0` only.  Received alpha={alpha}")
    rows = _imagenet_rows(rows, cols, sizes, weights)
    image, inputs = imagenet_utils.model_input(input_tensor, input_shape)
    x = _conv_block(image, 32, alpha, strides=(2, 2))
    plan = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 + [(1024, 2), (1024, 1)]
    for block_id, (filters, stride) in enumerate(plan, start=1):
        x = _depthwise_conv_block(x, filters, alpha, depth_multiplier, strides=(stride, stride), block_id=block_id)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Dropout(dropout, name="dropout")(x)
        x = layers.Conv2D(classes, (1, 1), padding="same", name="conv_preds")(x)
        x = layers.Reshape((classes,), name="reshape_2")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Activation(activation=classifier_activation, name="predictions")(x)
    else:
        x = _head(x, False, pooling, classes, classifier_activation, weights)
    model = Functional(inputs, x, name=name or f"mobilenet_{alpha:0.2f}_{rows}")
    alpha_text = {1.0: "1_0", 0.75: "7_5", 0.5: "5_0"}.get(alpha, "2_5")
    file_name = f"mobilenet_{alpha_text}_{rows}_tf{'' if include_top else '_no_top'}.h5"
    return imagenet_utils.load_weights(model, weights, file_name, f"{_BASE}mobilenet/{file_name}")


# -- MobileNetV2 -------------------------------------------------------------------------------------------

def _make_divisible(value, divisor, min_value=None):
    """``value`` rounded to a multiple of ``divisor``, never 10% below it."""
    min_value = divisor if min_value is None else min_value
    rounded = max(min_value, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def _inverted_res_block(inputs, expansion, stride, alpha, filters, block_id):
    in_channels = inputs.shape[_channel_axis()]
    pointwise_filters = _make_divisible(int(filters * alpha), 8)
    x = inputs
    prefix = f"block_{block_id}_"
    if block_id:
        x = layers.Conv2D(expansion * in_channels, kernel_size=1, padding="same", use_bias=False, activation=None,
                          name=f"{prefix}expand")(x)
        x = layers.BatchNormalization(axis=_channel_axis(), epsilon=1e-3, momentum=0.999, name=f"{prefix}expand_BN")(x)
        x = layers.ReLU(6.0, name=f"{prefix}expand_relu")(x)
    else:
        prefix = "expanded_conv_"
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3), name=f"{prefix}pad")(x)
    x = layers.DepthwiseConv2D(kernel_size=3, strides=stride, activation=None, use_bias=False,
                               padding="same" if stride == 1 else "valid", name=f"{prefix}depthwise")(x)
    x = layers.BatchNormalization(axis=_channel_axis(), epsilon=1e-3, momentum=0.999, name=f"{prefix}depthwise_BN")(x)
    x = layers.ReLU(6.0, name=f"{prefix}depthwise_relu")(x)
    x = layers.Conv2D(pointwise_filters, kernel_size=1, padding="same", use_bias=False, activation=None,
                      name=f"{prefix}project")(x)
    x = layers.BatchNormalization(axis=_channel_axis(), epsilon=1e-3, momentum=0.999, name=f"{prefix}project_BN")(x)
    if in_channels == pointwise_filters and stride == 1:
        return layers.Add(name=f"{prefix}add")([inputs, x])
    return x


_V2_PLAN = [(16, 1, 1)] + [(24, 2, 6), (24, 1, 6)] + [(32, 2, 6)] + [(32, 1, 6)] * 2 + [(64, 2, 6)] + \
    [(64, 1, 6)] * 3 + [(96, 1, 6)] * 3 + [(160, 2, 6)] + [(160, 1, 6)] * 2 + [(320, 1, 6)]


def MobileNetV2(input_shape=None, alpha=1.0, include_top=True, weights="imagenet", input_tensor=None,
                pooling=None, classes=1000, classifier_activation="softmax", name=None):
    """Keras's MobileNetV2 (inverted residual blocks, ReLU6); ``alpha``
    scales the widths. Inputs from ``mobilenet_v2.preprocess_input``."""
    from minikeras.models import Functional

    imagenet_utils.check_weights_argument(weights, include_top, classes)
    sizes = [96, 128, 160, 192, 224]
    if input_shape is not None and input_tensor is not None and tuple(input_tensor.shape[1:]) != tuple(input_shape):
        raise ValueError(f"input_shape must match the shape of input_tensor; Received `input_tensor.shape="
                         f"{input_tensor.shape}`, `input_shape={input_shape}`")
    input_shape = imagenet_utils.obtain_input_shape(
        input_shape, default_size=_default_size(input_shape, input_tensor, sizes), min_size=32,
        data_format=image_data_format(), require_flatten=include_top, weights=weights)
    rows, cols = _rows_cols(input_shape)
    if weights == "imagenet" and alpha not in [0.35, 0.5, 0.75, 1.0, 1.3, 1.4]:
        raise ValueError("If imagenet weights are being loaded, alpha must be one of `0.35`, `0.50`, `0.75`, `1.0`, "
                         f"`1.3` or `1.4` only; Received `alpha={alpha}`")
    rows = _imagenet_rows(rows, cols, sizes, weights)
    image, inputs = imagenet_utils.model_input(input_tensor, input_shape)
    x = layers.Conv2D(_make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2), padding="same", use_bias=False,
                      name="Conv1")(image)
    x = layers.BatchNormalization(axis=_channel_axis(), epsilon=1e-3, momentum=0.999, name="bn_Conv1")(x)
    x = layers.ReLU(6.0, name="Conv1_relu")(x)
    for block_id, (filters, stride, expansion) in enumerate(_V2_PLAN):
        x = _inverted_res_block(x, filters=filters, alpha=alpha, stride=stride, expansion=expansion,
                                block_id=block_id)
    last_filters = _make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = layers.Conv2D(last_filters, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = layers.BatchNormalization(axis=_channel_axis(), epsilon=1e-3, momentum=0.999, name="Conv_1_bn")(x)
    x = layers.ReLU(6.0, name="out_relu")(x)
    x = _head(x, include_top, pooling, classes, classifier_activation, weights)
    model = Functional(inputs, x, name=name or f"mobilenetv2_{alpha:0.2f}_{rows}")
    file_name = f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_{float(alpha)}_{rows}" \
                f"{'' if include_top else '_no_top'}.h5"
    return imagenet_utils.load_weights(model, weights, file_name, f"{_BASE}mobilenet_v2/{file_name}")


def preprocess_input(x, data_format=None):
    """MobileNet inputs: scaled to [-1, 1] ("tf" mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
