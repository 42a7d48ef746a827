"""``applications.vgg16``: VGG16 (built in vgg.py) and its preprocessing."""
from minikeras.applications.vgg import VGG16, decode_predictions, preprocess_input  # noqa: F401
