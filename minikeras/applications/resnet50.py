"""``applications.resnet50``: ResNet50 and its preprocessing (as in resnet.py)."""
from minikeras.applications.resnet import ResNet50, decode_predictions, preprocess_input  # noqa: F401
