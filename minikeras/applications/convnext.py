"""ConvNeXt Tiny/Small/Base/Large/XLarge (``applications.convnext``), with
Keras's layer names and nesting, so Keras's weight files load.

Keras builds the stem and each downsampling step as a named ``Sequential``
inside the functional model (their weights sit under that name in Keras's
files), the 7x7 "depthwise" convolution as ``Conv2D(groups=channels)``, the
pointwise convolutions as ``Dense`` layers on the channel axis, and the
residual as ``inputs + x`` (an operation, not a layer). The preprocessing is
in the model (a ``Normalization`` with the ImageNet statistics): give the
models pixels in [0, 255]; ``preprocess_input`` passes them through.

Reference: Liu et al., "A ConvNet for the 2020s" (CVPR 2022).
"""
import numpy

from minikeras import initializers, layers, ops
from minikeras.applications import imagenet_utils
from minikeras.backend.keras_helpers import image_data_format
from minikeras.layers.base import Layer
from minikeras.layers.naming import next_uid

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/convnext/"
# Keras's SHA-256 digests of its published files: (with the top, without it).
WEIGHTS_HASHES = {
    "convnext_tiny": ("8ae6e78ce2933352b1ef4008e6dd2f17bc40771563877d156bc6426c7cf503ff",
                      "d547c096cabd03329d7be5562c5e14798aa39ed24b474157cef5e85ab9e49ef1"),
    "convnext_small": ("ce1277d8f1ee5a0ef0e171469089c18f5233860ceaf9b168049cb9263fd7483c",
                       "6fc8009faa2f00c1c1dfce59feea9b0745eb260a7dd11bee65c8e20843da6eab"),
    "convnext_base": ("52cbb006d3dadd03f6e095a8ca1aca47aecdd75acb4bc74bce1f5c695d0086e6",
                      "40a20c5548a5e9202f69735ecc06c990e6b7c9d2de39f0361e27baeb24cb7c45"),
    "convnext_large": ("070c5ed9ed289581e477741d3b34beffa920db8cf590899d6d2c67fba2a198a6",
                       "96f02b6f0753d4f543261bc9d09bed650f24dd6bc02ddde3066135b63d23a1cd"),
    "convnext_xlarge": ("c1f5ccab661354fc3a79a10fa99af82f0fbf10ec65cb894a3ae0815f17a889ee",
                        "de3f8a54174130e0cecdc71583354753d557fcf1f4487331558e2a16ba0cfe05"),
}
# depths and channels of the four stages (every variant's default input is 224).
MODEL_CONFIGS = {
    "tiny": {"depths": [3, 3, 9, 3], "projection_dims": [96, 192, 384, 768], "default_size": 224},
    "small": {"depths": [3, 3, 27, 3], "projection_dims": [96, 192, 384, 768], "default_size": 224},
    "base": {"depths": [3, 3, 27, 3], "projection_dims": [128, 256, 512, 1024], "default_size": 224},
    "large": {"depths": [3, 3, 27, 3], "projection_dims": [192, 384, 768, 1536], "default_size": 224},
    "xlarge": {"depths": [3, 3, 27, 3], "projection_dims": [256, 512, 1024, 2048], "default_size": 224},
}
_IMAGENET_MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
_IMAGENET_VARIANCE = [(0.229 * 255) ** 2, (0.224 * 255) ** 2, (0.225 * 255) ** 2]


class StochasticDepth(Layer):
    """Drops the whole residual branch of a random part of the batch while
    training (scaling the kept ones by ``1 / keep``); identity otherwise.

    Args:
        drop_path_rate: probability of dropping a sample's branch, in [0, 1].
    """

    def __init__(self, drop_path_rate, **kwargs):
        super().__init__(**kwargs)
        self.drop_path_rate = drop_path_rate

    def call(self, x, training=None):
        if not training:
            return x
        from minikeras import random

        keep = 1 - self.drop_path_rate
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)
        return (x / keep) * ops.floor(keep + random.uniform(shape, 0, 1, dtype=x.dtype.name))

    def get_config(self):
        return {**super().get_config(), "drop_path_rate": self.drop_path_rate}


class LayerScale(Layer):
    """Multiplies each channel by a learned scale ``gamma`` (initially
    ``init_values``): CaiT's layer scale, which keeps deep residual stacks
    near the identity at the start of training.

    Args:
        init_values: the initial scale.
        projection_dim: the number of channels.
    """

    def __init__(self, init_values, projection_dim, **kwargs):
        super().__init__(**kwargs)
        self.init_values = init_values
        self.projection_dim = projection_dim

    def build(self, input_shape):
        # Keras gives this weight no name; its files store weights by position.
        self.gamma = self.add_weight(shape=(self.projection_dim,), initializer=initializers.Constant(self.init_values),
                                     trainable=True, name="gamma")
        self.built = True

    def call(self, x):
        return x * self.gamma

    def get_config(self):
        return {**super().get_config(), "init_values": self.init_values, "projection_dim": self.projection_dim}


def ConvNeXtBlock(projection_dim, drop_path_rate=0.0, layer_scale_init_value=1e-6, name=None):  # noqa: N802
    """A ConvNeXt block: 7x7 depthwise convolution, LayerNormalization, an
    inverted bottleneck of two pointwise (Dense) layers with GELU, layer
    scale, and the residual. Returns a function of the input tensor."""
    if name is None:
        name = f"prestem{next_uid('prestem')}"

    def apply(inputs):
        x = layers.Conv2D(projection_dim, kernel_size=7, padding="same", groups=projection_dim,
                          name=f"{name}_depthwise_conv")(inputs)
        x = layers.LayerNormalization(epsilon=1e-6, name=f"{name}_layernorm")(x)
        x = layers.Dense(4 * projection_dim, name=f"{name}_pointwise_conv_1")(x)
        x = layers.Activation("gelu", name=f"{name}_gelu")(x)
        x = layers.Dense(projection_dim, name=f"{name}_pointwise_conv_2")(x)
        if layer_scale_init_value is not None:
            x = LayerScale(layer_scale_init_value, projection_dim, name=f"{name}_layer_scale")(x)
        if drop_path_rate:
            branch = StochasticDepth(drop_path_rate, name=f"{name}_stochastic_depth")
        else:
            branch = layers.Activation("linear", name=f"{name}_identity")
        return inputs + branch(x)

    return apply


def PreStem(name=None):  # noqa: N802
    """Normalises [0, 255] pixels with the ImageNet-1k mean and deviation."""
    if name is None:
        name = f"prestem{next_uid('prestem')}"

    def apply(x):
        return layers.Normalization(mean=_IMAGENET_MEAN, variance=_IMAGENET_VARIANCE,
                                    name=f"{name}_prestem_normalization")(x)

    return apply


def Head(num_classes=1000, classifier_activation=None, name=None):  # noqa: N802
    """The classifier: global average pooling, LayerNormalization, Dense."""
    if name is None:
        name = str(next_uid("head"))

    def apply(x):
        x = layers.GlobalAveragePooling2D(name=f"{name}_head_gap")(x)
        x = layers.LayerNormalization(epsilon=1e-6, name=f"{name}_head_layernorm")(x)
        return layers.Dense(num_classes, activation=classifier_activation, name=f"{name}_head_dense")(x)

    return apply


def _downsampling(name, index, filters):
    """Keras's named Sequential of one downsampling step (LayerNorm, 2x2 conv)."""
    from minikeras.models import Sequential

    return Sequential([layers.LayerNormalization(epsilon=1e-6, name=f"{name}_downsampling_layernorm_{index}"),
                       layers.Conv2D(filters, kernel_size=2, strides=2, name=f"{name}_downsampling_conv_{index}")],
                      name=f"{name}_downsampling_block_{index}")


def ConvNeXt(depths, projection_dims, drop_path_rate=0.0, layer_scale_init_value=1e-6, default_size=224,  # noqa: N802
             name="convnext", include_preprocessing=True, include_top=True, weights=None, input_tensor=None,
             input_shape=None, pooling=None, classes=1000, classifier_activation="softmax", weights_name=None):
    """A ConvNeXt of four stages of ``depths`` blocks with ``projection_dims``
    channels (the variants below fix both); arguments otherwise as
    ``ResNet50``'s, plus ``include_preprocessing`` (the Normalization layer
    at the input, needed by the ImageNet weights)."""
    from minikeras.models import Functional, Sequential

    if image_data_format() == "channels_first":
        raise ValueError("ConvNeXt does not support the `channels_first` image data format. Switch to "
                         "`channels_last` by editing your local config file at ~/.keras/keras.json")
    imagenet_utils.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size, min_size=32,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    x, inputs = imagenet_utils.model_input(input_tensor, input_shape)
    if include_preprocessing and input_shape[-1] == 3:
        x = PreStem(name=name)(x)
    stem = Sequential([layers.Conv2D(projection_dims[0], kernel_size=4, strides=4, name=f"{name}_stem_conv"),
                       layers.LayerNormalization(epsilon=1e-6, name=f"{name}_stem_layernorm")],
                      name=f"{name}_stem")
    downsampling = [stem] + [_downsampling(name, i, projection_dims[i + 1]) for i in range(3)]
    # The stochastic depth grows linearly over the blocks (the paper's schedule).
    drop_rates = [float(rate) for rate in numpy.linspace(0.0, drop_path_rate, sum(depths))]
    done = 0
    for stage in range(4):
        x = downsampling[stage](x)
        for block in range(depths[stage]):
            x = ConvNeXtBlock(projection_dims[stage], drop_rates[done + block], layer_scale_init_value,
                              name=f"{name}_stage_{stage}_block_{block}")(x)
        done += depths[stage]
    if include_top:
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = Head(num_classes=classes, classifier_activation=classifier_activation, name=name)(x)
    else:
        x = imagenet_utils.pool(x, pooling, names=(None, None))
        x = layers.LayerNormalization(epsilon=1e-6)(x)
    model = Functional(inputs, x, name=name)
    file_name = file_hash = origin = None
    if weights == "imagenet":
        _check_imagenet_variant(name, weights_name, depths, projection_dims)
        file_name = name + (".h5" if include_top else "_notop.h5")
        origin, file_hash = BASE_WEIGHTS_PATH + file_name, WEIGHTS_HASHES[weights_name][0 if include_top else 1]
    return imagenet_utils.load_weights(model, weights, file_name, origin, file_hash)


def _check_imagenet_variant(name, weights_name, depths, projection_dims):
    """Keras's checks that the ImageNet weights match the architecture and name."""
    if weights_name not in WEIGHTS_HASHES:
        raise ValueError(f"Keras publishes no ImageNet weights for a ConvNeXt named {weights_name!r}; pass "
                         "weights=None or a path.")
    expected = MODEL_CONFIGS[weights_name.split("convnext_")[-1]]
    if list(depths) != expected["depths"] or list(projection_dims) != expected["projection_dims"]:
        raise ValueError(f"Architecture configuration does not match {weights_name} variant. When using pre-trained "
                         "weights, the model architecture must match the pre-trained configuration exactly. Expected "
                         f"depths: {expected['depths']}, got: {list(depths)}. Expected projection_dims: "
                         f"{expected['projection_dims']}, got: {list(projection_dims)}.")
    if weights_name not in name:
        raise ValueError(f'Model name "{name}" does not match weights variant "{weights_name}". When using imagenet '
                         f'weights, model name must contain the weights variant (e.g., "{weights_name}").')


def _constructor(variant):
    model_name = f"ConvNeXt{variant.capitalize() if variant != 'xlarge' else 'XLarge'}"
    config = MODEL_CONFIGS[variant]

    def build(include_top=True, include_preprocessing=True, weights="imagenet", input_tensor=None, input_shape=None,
              pooling=None, classes=1000, classifier_activation="softmax", name=f"convnext_{variant}"):
        return ConvNeXt(config["depths"], config["projection_dims"], 0.0, 1e-6, config["default_size"], name=name,
                        include_preprocessing=include_preprocessing, include_top=include_top, weights=weights,
                        input_tensor=input_tensor, input_shape=input_shape, pooling=pooling, classes=classes,
                        classifier_activation=classifier_activation, weights_name=f"convnext_{variant}")

    build.__name__ = build.__qualname__ = model_name
    build.__doc__ = (f"Keras's {model_name} (stage depths {config['depths']}, channels {config['projection_dims']}, "
                     "default input 224x224); arguments as ``ResNet50``'s plus ``include_preprocessing``. Takes "
                     "pixels in [0, 255]: the normalisation is part of the model.")
    return build


ConvNeXtTiny = _constructor("tiny")
ConvNeXtSmall = _constructor("small")
ConvNeXtBase = _constructor("base")
ConvNeXtLarge = _constructor("large")
ConvNeXtXLarge = _constructor("xlarge")


def preprocess_input(x, data_format=None):
    """A pass-through: ConvNeXt models normalise inside."""
    return x


decode_predictions = imagenet_utils.decode_predictions
