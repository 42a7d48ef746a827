"""keras.layers.RandomShear."""
import numpy

from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import ImageAugmentation
from minikeras.ops.nn.affine_transform import FILL_MODES, INTERPOLATIONS

__all__ = ["RandomShear"]


class RandomShear(ImageAugmentation):
    """Shear each image along x and y by random amounts (the sign drawn per
    image), through ``ops.affine_transform``.

    Args:
        x_factor, y_factor: a number ``f`` in [0, 1] means shears in
            ``(-f, f)``; a pair ``(low, high)`` in [0, 1] sets the range
            (default 0: no shear on that axis).
        interpolation: "bilinear" (default) or "nearest".
        fill_mode: "reflect" (default), "wrap", "constant" or "nearest".
        fill_value: the value outside the image with ``fill_mode="constant"``.
        data_format: "channels_last" (default) or "channels_first".
        seed: optional int for reproducible draws.
    """

    def __init__(self, x_factor=0.0, y_factor=0.0, interpolation="bilinear", fill_mode="reflect", fill_value=0.0,
                 data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.x_factor = self._shear_range("x_factor", x_factor)
        self.y_factor = self._shear_range("y_factor", y_factor)
        if fill_mode not in FILL_MODES:  # Keras raises NotImplementedError for these two
            raise NotImplementedError(f"RandomShear: unknown `fill_mode` {fill_mode!r}. Expected one of "
                                      f"{FILL_MODES}.")
        if interpolation not in INTERPOLATIONS:
            raise NotImplementedError(f"RandomShear: unknown `interpolation` {interpolation!r}. Expected one of "
                                      f"{INTERPOLATIONS}.")
        self.fill_mode, self.fill_value, self.interpolation = fill_mode, fill_value, interpolation

    @staticmethod
    def _shear_range(argument, factor):
        """A number ``f`` in [0, 1] gives ``(-f, f)``. A pair may reach down
        to -1: Keras stores ``(-f, f)`` in its config but refuses it when the
        config is loaded, so minikeras accepts it to keep saved models loading."""
        pair = isinstance(factor, (tuple, list))
        values = factor if pair else [factor]
        low = -1.0 if pair else 0.0
        if len(values) not in (1, 2) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and low <= v <= 1.0 for v in values):
            raise ValueError(f"RandomShear: the `{argument}` argument should be a number (or a list of two numbers) "
                             f"in the range [0, 1.0]. Received: {argument}={factor}")
        if isinstance(factor, (tuple, list)):
            return tuple(sorted(factor))
        return (-abs(factor), abs(factor))

    def _draw(self, rng, shape):
        batch = shape[0]
        sign = numpy.where(rng.uniform(size=(batch, 1)) > 0.5, -1.0, 1.0)
        shear_y = rng.uniform(self.y_factor[0], self.y_factor[1], size=(batch, 1))
        shear_x = rng.uniform(self.x_factor[0], self.x_factor[1], size=(batch, 1))
        return {"shear_factor": (numpy.concatenate([shear_x, shear_y], axis=1) * sign).astype("float32"),
                "input_shape": shape}

    def _transform(self, images, transformation):
        shear = numpy.asarray(transformation["shear_factor"], "float64")
        ones, zeros = numpy.ones(len(shear)), numpy.zeros(len(shear))
        matrix = numpy.stack([ones, shear[:, 0], zeros, shear[:, 1], ones, zeros, zeros, zeros], axis=1)
        return ops.affine_transform(images, matrix, interpolation=self.interpolation, fill_mode=self.fill_mode,
                                    fill_value=self.fill_value)

    def get_config(self):
        return {**super().get_config(), "x_factor": self.x_factor, "y_factor": self.y_factor,
                "fill_mode": self.fill_mode, "interpolation": self.interpolation, "fill_value": self.fill_value}
