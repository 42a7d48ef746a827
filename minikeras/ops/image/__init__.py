"""``keras.ops.image``: image ops on batches (or single images), channels-last or channels-first.

One family per module (module names never shadow a function's name):
``resizing`` (resize, pad_images, crop_images), ``warping`` (affine_transform,
perspective_transform, elastic_transform, map_coordinates,
scale_and_translate), ``color`` (rgb_to_grayscale, rgb_to_hsv, hsv_to_rgb),
``patches`` (extract_patches, extract_patches_3d), ``filters``
(gaussian_blur, sobel_edges, ssim).
"""
