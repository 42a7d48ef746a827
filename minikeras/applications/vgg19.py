"""``applications.vgg19``: VGG19 (built in vgg.py) and its preprocessing."""
from minikeras.applications.vgg import VGG19, decode_predictions, preprocess_input  # noqa: F401
