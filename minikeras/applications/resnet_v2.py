"""``applications.resnet_v2``: ResNet50V2/101V2/152V2 (built in resnet.py) and their preprocessing."""
from minikeras.applications import imagenet_utils
from minikeras.applications.resnet import ResNet50V2, ResNet101V2, ResNet152V2  # noqa: F401


def preprocess_input(x, data_format=None):
    """ResNet V2 inputs: scaled to [-1, 1] ("tf" mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
