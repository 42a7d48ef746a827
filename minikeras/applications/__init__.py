"""Keras's applications: the ImageNet architectures with Keras's constructor
arguments, layer names and weight order, so that Keras's weight files load
into them (``weights=None``, a path, or ``"imagenet"`` from the cache).

Each family module (``resnet``, ``vgg16``, ``mobilenet_v2``, ...) also has
its ``preprocess_input`` and ``decode_predictions``, as in Keras.
"""
from minikeras.applications import (  # noqa: F401
    convnext, densenet, efficientnet, efficientnet_v2, nasnet, imagenet_utils, inception_resnet_v2, inception_v3, mobilenet, mobilenet_v2, mobilenet_v3,
    resnet, resnet50, resnet_v2, vgg16, vgg19, xception,
)
from minikeras.applications.inception_resnet_v2 import InceptionResNetV2  # noqa: F401
from minikeras.applications.inception_v3 import InceptionV3  # noqa: F401
from minikeras.applications.xception import Xception  # noqa: F401
from minikeras.applications.efficientnet import (  # noqa: F401
    EfficientNetB0, EfficientNetB1, EfficientNetB2, EfficientNetB3, EfficientNetB4, EfficientNetB5, EfficientNetB6,
    EfficientNetB7,
)
from minikeras.applications.mobilenet_v3 import MobileNetV3Large, MobileNetV3Small  # noqa: F401
from minikeras.applications.densenet import DenseNet121, DenseNet169, DenseNet201  # noqa: F401
from minikeras.applications.mobilenet import MobileNet, MobileNetV2  # noqa: F401
from minikeras.applications.resnet import (  # noqa: F401
    ResNet50, ResNet50V2, ResNet101, ResNet101V2, ResNet152, ResNet152V2,
)
from minikeras.applications.vgg import VGG16, VGG19  # noqa: F401
from minikeras.applications.convnext import (  # noqa: F401
    ConvNeXtBase, ConvNeXtLarge, ConvNeXtSmall, ConvNeXtTiny, ConvNeXtXLarge,
)
from minikeras.applications.efficientnet_v2 import (  # noqa: F401
    EfficientNetV2B0, EfficientNetV2B1, EfficientNetV2B2, EfficientNetV2B3, EfficientNetV2L, EfficientNetV2M,
    EfficientNetV2S,
)
from minikeras.applications.nasnet import NASNetLarge, NASNetMobile  # noqa: F401
