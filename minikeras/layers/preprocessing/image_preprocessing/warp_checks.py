"""What RandomPerspective and RandomElasticTransform share: the choice check and
per-image selection.
"""
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import on_device


def _check_choice(layer_name, argument, value, choices):
    """Keras raises NotImplementedError for an unknown interpolation or fill mode."""
    if value not in choices:
        raise NotImplementedError(f"{layer_name}: unknown `{argument}` {value!r}. Expected one of {choices}.")
    return value


def _applied(images, flags):
    return on_device(images, flags, bool, (-1, 1, 1, 1))
