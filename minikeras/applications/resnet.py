"""ResNet50/101/152 (``applications.resnet``) and their V2 (pre-activation)
variants (``applications.resnet_v2``), with Keras's layer names, so that
Keras's weight files load into them.

Reference: He et al., "Deep Residual Learning for Image Recognition" (2015)
and "Identity Mappings in Deep Residual Networks" (2016).
"""
from minikeras import layers
from minikeras.applications import imagenet_utils
from minikeras.backend.keras_helpers import image_data_format

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/resnet/"
# Keras's MD5 digests of its published files: (with the top, without it).
WEIGHTS_HASHES = {
    "resnet50": ("2cb95161c43110f7111970584f804107", "4d473c1dd8becc155b73f8504c6f6626"),
    "resnet101": ("f1aeb4b969a6efcfb50fad2f0c20cfc5", "88cf7a10940856eca736dc7b7e228a21"),
    "resnet152": ("100835be76be38e30d865e96f2aaae62", "ee4c566cf9a93f14d82f913c2dc6dd0c"),
    "resnet50v2": ("3ef43a0b657b3be2300d5770ece849e0", "fac2f116257151a9d068a22e544a4917"),
    "resnet101v2": ("6343647c601c52e1368623803854d971", "c0ed64b8031c3730f411d2eb4eea35b5"),
    "resnet152v2": ("a49b44d1979771252814e80f8ec446f9", "ed17cf2e0169df9d443503ef94b23b33"),
}
_EPSILON = 1.001e-5


def _bn_axis():
    return -1 if image_data_format() == "channels_last" else 1


def ResNet(stack_fn, preact, use_bias, include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
           pooling=None, classes=1000, classifier_activation="softmax", name="resnet", weights_name=None):
    """A ResNet whose residual stages ``stack_fn`` builds (Keras's ``ResNet``)."""
    from minikeras.models import Functional

    imagenet_utils.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=224, min_size=32,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    image, inputs = imagenet_utils.model_input(input_tensor, input_shape)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(image)
    x = layers.Conv2D(64, 7, strides=2, use_bias=use_bias, name="conv1_conv")(x)
    if not preact:
        x = layers.BatchNormalization(axis=_bn_axis(), epsilon=_EPSILON, name="conv1_bn")(x)
        x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    x = stack_fn(x)
    if preact:
        x = layers.BatchNormalization(axis=_bn_axis(), epsilon=_EPSILON, name="post_bn")(x)
        x = layers.Activation("relu", name="post_relu")(x)
    x = imagenet_utils.pooled_top(x, include_top, pooling, classes, classifier_activation, weights)
    model = Functional(inputs, x, name=name)
    file_name = origin = file_hash = None
    if weights == "imagenet" and weights_name in WEIGHTS_HASHES:
        suffix = "" if include_top else "_notop"
        file_name = f"{weights_name}_weights_tf_dim_ordering_tf_kernels{suffix}.h5"
        origin, file_hash = BASE_WEIGHTS_PATH + file_name, WEIGHTS_HASHES[weights_name][0 if include_top else 1]
    return imagenet_utils.load_weights(model, weights, file_name, origin, file_hash)


def residual_block_v1(x, filters, kernel_size=3, stride=1, conv_shortcut=True, name=None):
    """A bottleneck block: 1x1, kxk, 1x1 convolutions plus the shortcut."""
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(x)
        shortcut = layers.BatchNormalization(axis=_bn_axis(), epsilon=_EPSILON, name=f"{name}_0_bn")(shortcut)
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, strides=stride, name=f"{name}_1_conv")(x)
    x = layers.BatchNormalization(axis=_bn_axis(), epsilon=_EPSILON, name=f"{name}_1_bn")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.Conv2D(filters, kernel_size, padding="same", name=f"{name}_2_conv")(x)
    x = layers.BatchNormalization(axis=_bn_axis(), epsilon=_EPSILON, name=f"{name}_2_bn")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    x = layers.BatchNormalization(axis=_bn_axis(), epsilon=_EPSILON, name=f"{name}_3_bn")(x)
    x = layers.Add(name=f"{name}_add")([shortcut, x])
    return layers.Activation("relu", name=f"{name}_out")(x)


def stack_residual_blocks_v1(x, filters, blocks, stride1=2, name=None):
    """``blocks`` v1 blocks, the first one striding and projecting."""
    x = residual_block_v1(x, filters, stride=stride1, name=f"{name}_block1")
    for index in range(2, blocks + 1):
        x = residual_block_v1(x, filters, conv_shortcut=False, name=f"{name}_block{index}")
    return x


def residual_block_v2(x, filters, kernel_size=3, stride=1, conv_shortcut=False, name=None):
    """A pre-activation bottleneck block (batch norm and ReLU before each convolution)."""
    preact = layers.BatchNormalization(axis=_bn_axis(), epsilon=_EPSILON, name=f"{name}_preact_bn")(x)
    preact = layers.Activation("relu", name=f"{name}_preact_relu")(preact)
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(preact)
    else:
        shortcut = layers.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = layers.Conv2D(filters, 1, strides=1, use_bias=False, name=f"{name}_1_conv")(preact)
    x = layers.BatchNormalization(axis=_bn_axis(), epsilon=_EPSILON, name=f"{name}_1_bn")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name=f"{name}_2_pad")(x)
    x = layers.Conv2D(filters, kernel_size, strides=stride, use_bias=False, name=f"{name}_2_conv")(x)
    x = layers.BatchNormalization(axis=_bn_axis(), epsilon=_EPSILON, name=f"{name}_2_bn")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    return layers.Add(name=f"{name}_out")([shortcut, x])


def stack_residual_blocks_v2(x, filters, blocks, stride1=2, name=None):
    """``blocks`` v2 blocks, the last one striding (as in Keras's V2)."""
    x = residual_block_v2(x, filters, conv_shortcut=True, name=f"{name}_block1")
    for index in range(2, blocks):
        x = residual_block_v2(x, filters, name=f"{name}_block{index}")
    return residual_block_v2(x, filters, stride=stride1, name=f"{name}_block{blocks}")


def _v1(depths):
    def stack_fn(x):
        x = stack_residual_blocks_v1(x, 64, depths[0], stride1=1, name="conv2")
        x = stack_residual_blocks_v1(x, 128, depths[1], name="conv3")
        x = stack_residual_blocks_v1(x, 256, depths[2], name="conv4")
        return stack_residual_blocks_v1(x, 512, depths[3], name="conv5")

    return stack_fn


def _v2(depths):
    def stack_fn(x):
        x = stack_residual_blocks_v2(x, 64, depths[0], name="conv2")
        x = stack_residual_blocks_v2(x, 128, depths[1], name="conv3")
        x = stack_residual_blocks_v2(x, 256, depths[2], name="conv4")
        return stack_residual_blocks_v2(x, 512, depths[3], stride1=1, name="conv5")

    return stack_fn


def _constructor(model_name, depths, preact):
    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
              classifier_activation="softmax", name=model_name.lower()):
        return ResNet(_v2(depths) if preact else _v1(depths), preact, True, include_top=include_top,
                      weights=weights, input_tensor=input_tensor, input_shape=input_shape, pooling=pooling,
                      classes=classes, classifier_activation=classifier_activation, name=name,
                      weights_name=model_name.lower())

    build.__name__ = build.__qualname__ = model_name
    build.__doc__ = (f"Keras's {model_name}: include_top, weights (None, 'imagenet' or a path), input_tensor, "
                     "input_shape, pooling ('avg'/'max' without the top), classes, classifier_activation, name.\n\n"
                     f"Inputs are images preprocessed by `applications.{'resnet_v2' if preact else 'resnet'}"
                     ".preprocess_input`.")
    return build


ResNet50 = _constructor("ResNet50", (3, 4, 6, 3), preact=False)
ResNet101 = _constructor("ResNet101", (3, 4, 23, 3), preact=False)
ResNet152 = _constructor("ResNet152", (3, 8, 36, 3), preact=False)
ResNet50V2 = _constructor("ResNet50V2", (3, 4, 6, 3), preact=True)
ResNet101V2 = _constructor("ResNet101V2", (3, 4, 23, 3), preact=True)
ResNet152V2 = _constructor("ResNet152V2", (3, 8, 36, 3), preact=True)


def preprocess_input(x, data_format=None):
    """ResNet (V1) inputs: RGB to BGR minus the ImageNet means ("caffe" mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


decode_predictions = imagenet_utils.decode_predictions
