"""Reference outputs of ``keras.ops.image.resize`` and
``keras.ops.image.affine_transform`` (Keras 3, TensorFlow backend).

Run ``/work/side/bin/python -m tests.ops.keras_image_cases`` from the
repository root to rewrite ``fixtures/keras_image_ops.npz``.
"""
import math
import os

import numpy

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_image_ops.npz")
IMAGES = numpy.random.default_rng(0).normal(size=(2, 5, 7, 3)).astype("float32")

_ANGLE, _CX, _CY = math.radians(30), 3.0, 2.0
TRANSFORMS = {
    "rotate": [math.cos(_ANGLE), -math.sin(_ANGLE), _CX - _CX * math.cos(_ANGLE) + _CY * math.sin(_ANGLE),
               math.sin(_ANGLE), math.cos(_ANGLE), _CY - _CX * math.sin(_ANGLE) - _CY * math.cos(_ANGLE), 0, 0],
    "shift": [1, 0, 2.3, 0, 1, -1.6, 0, 0],
    "zoom": [1.7, 0, -2.1, 0, 0.6, 0.8, 0, 0],
    "far": [1, 0, -9.4, 0, 1, 13.2, 0, 0],
    "projective": [1.1, 0.2, -0.5, -0.1, 0.9, 0.7, 0.02, -0.03],
}
FILL_MODES = ("constant", "nearest", "wrap", "reflect")
INTERPOLATIONS = ("bilinear", "nearest")
SIZES = ((3, 4), (8, 11), (5, 3), (10, 14))


def main():
    import keras

    arrays = {"images": IMAGES}
    for name, transform in TRANSFORMS.items():
        batch = numpy.array([transform, transform], "float32")
        for fill_mode in FILL_MODES:
            for interpolation in INTERPOLATIONS:
                arrays[f"affine/{name}/{fill_mode}/{interpolation}"] = numpy.asarray(keras.ops.image.affine_transform(
                    IMAGES, batch, interpolation=interpolation, fill_mode=fill_mode, fill_value=0.5))
    for size in SIZES:
        for interpolation in INTERPOLATIONS:
            arrays[f"resize/{size[0]}x{size[1]}/{interpolation}"] = numpy.asarray(
                keras.ops.image.resize(IMAGES, size, interpolation=interpolation))
    numpy.savez_compressed(FIXTURE, **arrays)
    print(f"wrote {len(arrays) - 1} references to {FIXTURE} (Keras {keras.__version__})")


if __name__ == "__main__":
    main()
