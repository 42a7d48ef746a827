"""``keras.ops.image``: image ops on batches (or single images), channels-last or channels-first.

One family per module (module names never shadow a function's name):
``resizing`` (resize, pad_images, crop_images), ``warping`` (affine_transform,
perspective_transform, elastic_transform, map_coordinates,
scale_and_translate), ``color`` (rgb_to_grayscale, rgb_to_hsv, hsv_to_rgb),
``patches`` (extract_patches, extract_patches_3d), ``filters``
(gaussian_blur, sobel_edges, ssim).
"""
from minikeras.ops.image.color import hsv_to_rgb, rgb_to_grayscale, rgb_to_hsv  # noqa: F401
from minikeras.ops.image.filters import gaussian_blur, sobel_edges, ssim  # noqa: F401
from minikeras.ops.image.patches import extract_patches, extract_patches_3d  # noqa: F401
from minikeras.ops.image.resizing import crop_images, pad_images, resize, scale_and_translate  # noqa: F401
from minikeras.ops.image.warping import (  # noqa: F401
    affine_transform, elastic_transform, map_coordinates, perspective_transform,
)

__all__ = [
    "affine_transform", "crop_images", "elastic_transform", "extract_patches", "extract_patches_3d",
    "gaussian_blur", "hsv_to_rgb", "map_coordinates", "pad_images", "perspective_transform", "resize",
    "rgb_to_grayscale", "rgb_to_hsv", "scale_and_translate", "sobel_edges", "ssim",
]
