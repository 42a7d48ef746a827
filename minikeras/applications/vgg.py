"""VGG16 and VGG19 (``applications.vgg16`` / ``vgg19``), with Keras's layer names.

Reference: Simonyan & Zisserman, "Very Deep Convolutional Networks for
Large-Scale Image Recognition" (ICLR 2015).
"""
from minikeras import layers
from minikeras.applications import imagenet_utils
from minikeras.backend.keras_helpers import image_data_format

_BASE = "https://storage.googleapis.com/tensorflow/keras-applications/"
# (file stem, MD5 with the top, MD5 without it), from Keras.
_FILES = {"vgg16": ("64373286793e3c8b2b4e3219cbf3544b", "6d6bbae143d832006294945121d1f1fc"),
          "vgg19": ("cbe5617147190e668d6c5d5026f83318", "253f8cb515780f3b799900260a226db6")}


def _vgg(convolutions_per_block, model_key, include_top, weights, input_tensor, input_shape, pooling, classes,
         classifier_activation, name):
    from minikeras.models import Functional

    imagenet_utils.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=224, min_size=32,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    image, inputs = imagenet_utils.model_input(input_tensor, input_shape)
    x = image
    for block, (filters, count) in enumerate(zip((64, 128, 256, 512, 512), convolutions_per_block), start=1):
        for index in range(1, count + 1):
            x = layers.Conv2D(filters, (3, 3), activation="relu", padding="same", name=f"block{block}_conv{index}")(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
    if include_top:
        x = layers.Flatten(name="flatten")(x)
        x = layers.Dense(4096, activation="relu", name="fc1")(x)
        x = layers.Dense(4096, activation="relu", name="fc2")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = imagenet_utils.pool(x, pooling, names=(None, None))
    model = Functional(inputs, x, name=name)
    suffix = "" if include_top else "_notop"
    file_name = f"{model_key}_weights_tf_dim_ordering_tf_kernels{suffix}.h5"
    return imagenet_utils.load_weights(model, weights, file_name, f"{_BASE}{model_key}/{file_name}",
                                       _FILES[model_key][0 if include_top else 1])


def VGG16(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
          classes=1000, classifier_activation="softmax", name="vgg16"):
    """Keras's VGG16 (13 convolutions, 3 dense layers); inputs from
    ``applications.vgg16.preprocess_input``. Arguments as ``ResNet50``'s."""
    return _vgg((2, 2, 3, 3, 3), "vgg16", include_top, weights, input_tensor, input_shape, pooling, classes,
                classifier_activation, name)


def VGG19(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
          classes=1000, classifier_activation="softmax", name="vgg19"):
    """Keras's VGG19 (16 convolutions, 3 dense layers); inputs from
    ``applications.vgg19.preprocess_input``. Arguments as ``ResNet50``'s."""
    return _vgg((2, 2, 4, 4, 4), "vgg19", include_top, weights, input_tensor, input_shape, pooling, classes,
                classifier_activation, name)


def preprocess_input(x, data_format=None):
    """VGG inputs: RGB to BGR minus the ImageNet means ("caffe" mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


decode_predictions = imagenet_utils.decode_predictions
