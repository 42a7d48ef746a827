"""``applications.mobilenet_v2``: MobileNetV2 (built in mobilenet.py) and its preprocessing."""
from minikeras.applications.mobilenet import MobileNetV2, decode_predictions, preprocess_input  # noqa: F401
