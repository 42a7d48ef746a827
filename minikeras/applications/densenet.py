"""DenseNet121/169/201 (``applications.densenet``), with Keras's layer names.

Reference: Huang et al., "Densely Connected Convolutional Networks" (CVPR 2017).
"""
from minikeras import layers
from minikeras.applications import imagenet_utils
from minikeras.backend.keras_helpers import image_data_format

_BASE = "https://storage.googleapis.com/tensorflow/keras-applications/densenet/"
# blocks -> (file stem, MD5 with the top, MD5 without it), from Keras.
_FILES = {(6, 12, 24, 16): ("densenet121", "9d60b8095a5708f2dcce2bca79d332c7", "30ee3e1110167f948a6b9946edeeb738"),
          (6, 12, 32, 32): ("densenet169", "d699b8f76981ab1b30698df4c175e90b", "b8c4d4c20dd625c148057b9ff1c1176b"),
          (6, 12, 48, 32): ("densenet201", "1ceb130c1ea1b78c3bf6114dbdfd8807", "c13680b51ded0fb44dff2d8f86ac8bb1")}
_EPSILON = 1.001e-5


def _bn_axis():
    return -1 if image_data_format() == "channels_last" else 1


def conv_block(x, growth_rate, name):
    """BN-ReLU-1x1 conv, BN-ReLU-3x3 conv, concatenated onto the input."""
    branch = layers.BatchNormalization(axis=_bn_axis(), epsilon=_EPSILON, name=f"{name}_0_bn")(x)
    branch = layers.Activation("relu", name=f"{name}_0_relu")(branch)
    branch = layers.Conv2D(4 * growth_rate, 1, use_bias=False, name=f"{name}_1_conv")(branch)
    branch = layers.BatchNormalization(axis=_bn_axis(), epsilon=_EPSILON, name=f"{name}_1_bn")(branch)
    branch = layers.Activation("relu", name=f"{name}_1_relu")(branch)
    branch = layers.Conv2D(growth_rate, 3, padding="same", use_bias=False, name=f"{name}_2_conv")(branch)
    return layers.Concatenate(axis=_bn_axis(), name=f"{name}_concat")([x, branch])


def dense_block(x, blocks, name):
    """``blocks`` conv blocks, each adding 32 channels."""
    for index in range(blocks):
        x = conv_block(x, 32, name=f"{name}_block{index + 1}")
    return x


def transition_block(x, reduction, name):
    """BN-ReLU-1x1 conv shrinking the channels by ``reduction``, then 2x2 average pooling."""
    x = layers.BatchNormalization(axis=_bn_axis(), epsilon=_EPSILON, name=f"{name}_bn")(x)
    x = layers.Activation("relu", name=f"{name}_relu")(x)
    x = layers.Conv2D(int(x.shape[_bn_axis()] * reduction), 1, use_bias=False, name=f"{name}_conv")(x)
    return layers.AveragePooling2D(2, strides=2, name=f"{name}_pool")(x)


def DenseNet(blocks, include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
             classes=1000, classifier_activation="softmax", name="densenet"):
    """A DenseNet with ``blocks`` conv blocks in its four dense blocks."""
    from minikeras.models import Functional

    imagenet_utils.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=224, min_size=32,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    image, inputs = imagenet_utils.model_input(input_tensor, input_shape)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)))(image)
    x = layers.Conv2D(64, 7, strides=2, use_bias=False, name="conv1_conv")(x)
    x = layers.BatchNormalization(axis=_bn_axis(), epsilon=_EPSILON, name="conv1_bn")(x)
    x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)))(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1")(x)
    for stage, count in enumerate(blocks, start=2):
        x = dense_block(x, count, name=f"conv{stage}")
        if stage < 5:
            x = transition_block(x, 0.5, name=f"pool{stage}")
    x = layers.BatchNormalization(axis=_bn_axis(), epsilon=_EPSILON, name="bn")(x)
    x = layers.Activation("relu", name="relu")(x)
    x = imagenet_utils.pooled_top(x, include_top, pooling, classes, classifier_activation, weights)
    model = Functional(inputs, x, name=name)
    published = _FILES.get(tuple(blocks))
    file_name = origin = file_hash = None
    if published is not None:
        file_name = f"{published[0]}_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
        origin, file_hash = _BASE + file_name, published[1 if include_top else 2]
    return imagenet_utils.load_weights(model, weights, file_name, origin, file_hash)


def _constructor(model_name, blocks):
    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
              classifier_activation="softmax", name=model_name.lower()):
        return DenseNet(list(blocks), include_top, weights, input_tensor, input_shape, pooling, classes,
                        classifier_activation, name)

    build.__name__ = build.__qualname__ = model_name
    build.__doc__ = (f"Keras's {model_name}; arguments as ``ResNet50``'s. Inputs from "
                     "``applications.densenet.preprocess_input``.")
    return build


DenseNet121 = _constructor("DenseNet121", (6, 12, 24, 16))
DenseNet169 = _constructor("DenseNet169", (6, 12, 32, 32))
DenseNet201 = _constructor("DenseNet201", (6, 12, 48, 32))


def preprocess_input(x, data_format=None):
    """DenseNet inputs: scaled to [0, 1], then the ImageNet means and deviations ("torch" mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="torch")


decode_predictions = imagenet_utils.decode_predictions
