"""What RandAugment and AugMix share, as Keras 3.

Both hold the same bank of operations Keras builds (shear, translation,
rotation, brightness, colour degeneration, contrast, sharpness,
posterization, solarization, auto-contrast, equalization), each made with
the policy's ``factor``, ``value_range`` and ``interpolation``. An operation
chosen for a batch draws its parameters once and applies them to the whole
batch, as Keras does. The transformations have Keras's form, so one Keras
drew replays here exactly.
"""
from minikeras.layers.preprocessing.image_preprocessing.auto_contrast import AutoContrast
from minikeras.layers.preprocessing.image_preprocessing.equalization import Equalization
from minikeras.layers.preprocessing.image_preprocessing.random_brightness import RandomBrightness
from minikeras.layers.preprocessing.image_preprocessing.random_color_degeneration import RandomColorDegeneration
from minikeras.layers.preprocessing.image_preprocessing.random_contrast import RandomContrast
from minikeras.layers.preprocessing.image_preprocessing.random_posterization import RandomPosterization
from minikeras.layers.preprocessing.image_preprocessing.random_rotation import RandomRotation
from minikeras.layers.preprocessing.image_preprocessing.random_sharpness import RandomSharpness
from minikeras.layers.preprocessing.image_preprocessing.random_shear import RandomShear
from minikeras.layers.preprocessing.image_preprocessing.random_translation import RandomTranslation
from minikeras.layers.preprocessing.image_preprocessing.solarization import Solarization
from minikeras.ops.nn.affine_transform import INTERPOLATIONS


def _operation_bank(names, factor, value_range, interpolation, dtype):
    """Keras's sub-layers of a policy, by Keras's attribute names, in the
    policy's dtype."""
    makers = {
        "random_shear": lambda **kw: RandomShear(x_factor=factor, y_factor=factor, interpolation=interpolation, **kw),
        "random_translation": lambda **kw: RandomTranslation(factor, factor, interpolation=interpolation, **kw),
        "random_rotation": lambda **kw: RandomRotation(factor, interpolation=interpolation, **kw),
        "random_brightness": lambda **kw: RandomBrightness(factor, value_range=value_range, **kw),
        "random_color_degeneration": lambda **kw: RandomColorDegeneration(factor, value_range=value_range, **kw),
        "random_contrast": lambda **kw: RandomContrast(factor, value_range=value_range, **kw),
        "random_sharpness": lambda **kw: RandomSharpness(factor, value_range=value_range, **kw),
        "random_posterization": lambda **kw: RandomPosterization(max(1, int(8 * factor[1])), value_range=value_range,
                                                                 **kw),
        "solarization": lambda **kw: Solarization(addition_factor=factor, threshold_factor=factor,
                                                  value_range=value_range, **kw),
        "auto_contrast": lambda **kw: AutoContrast(value_range=value_range, **kw),
        "equalization": lambda **kw: Equalization(value_range=value_range, **kw),
    }
    return {name: makers[name](dtype=dtype) for name in names}


def _draw_operation(layer, rng, shape):
    """One operation's parameters for a batch of ``shape`` (channels last),
    as Keras draws them (None for auto-contrast, which draws nothing)."""
    return layer._draw(rng, shape) if hasattr(layer, "_draw") else None


def _apply_operation(layer, images, transformation):
    """``layer``'s operation with ``transformation`` on a channels-last batch."""
    if isinstance(layer, AutoContrast):  # deterministic
        return layer._augment(images, None)
    if transformation is None:  # Keras draws nothing for equalization
        return layer._transform(images, {}) if isinstance(layer, Equalization) else images
    return layer._transform(images, transformation)


def _interpolation(layer_name, interpolation):
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"{layer_name}: interpolation must be one of {INTERPOLATIONS}, received "
                         f"interpolation={interpolation!r}.")
    return interpolation
