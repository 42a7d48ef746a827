"""Images to arrays and back: ``load_img``, ``img_to_array``, ``array_to_img``,
``save_img``, and the resizing the image loaders use.

Pillow reads and writes the files (``pip install pillow``, minikeras's
``image`` extra), as in Keras. Resizing for ``image_dataset_from_directory``
is done here in NumPy so that it computes what Keras's
``tf.image.resize`` does: ``"bilinear"`` and ``"nearest"`` with half-pixel
centres and no antialiasing; the other interpolations use Pillow's filters
of the same name (close to, not bit-equal with, TensorFlow's kernels).
"""
import io
import os
import pathlib

import numpy

from minikeras.backend.keras_helpers import image_data_format

_PIL_FILTERS = {"nearest": "NEAREST", "bilinear": "BILINEAR", "bicubic": "BICUBIC", "hamming": "HAMMING",
                "box": "BOX", "lanczos": "LANCZOS", "area": "BOX", "lanczos3": "LANCZOS", "lanczos5": "LANCZOS",
                "gaussian": "BICUBIC", "mitchellcubic": "BICUBIC"}


def pil_image():
    """The ``PIL.Image`` module, or ImportError saying how to install it."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("Could not import PIL.Image. The image utilities require Pillow: pip install pillow "
                          "(or minikeras's 'image' extra).") from None
    return Image


def _data_format(data_format):
    data_format = data_format or image_data_format()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Invalid data_format: {data_format!r}; expected 'channels_first' or 'channels_last'.")
    return data_format


def load_img(path, color_mode="rgb", target_size=None, interpolation="nearest", keep_aspect_ratio=False):
    """Load an image file into a PIL Image, as Keras's ``load_img``.

    Args:
        path: a path (str or pathlib.Path) or a binary file-like object.
        color_mode: ``"grayscale"``, ``"rgb"`` or ``"rgba"``.
        target_size: ``(height, width)`` to resize to, or None.
        interpolation: Pillow's filter name (``"nearest"``, ``"bilinear"``,
            ``"bicubic"``, ``"lanczos"``, ``"box"``, ``"hamming"``).
        keep_aspect_ratio: crop the centre to the target's aspect ratio
            before resizing.
    """
    Image = pil_image()
    if isinstance(path, io.BytesIO):
        image = Image.open(path)
    elif isinstance(path, (pathlib.Path, bytes, str)):
        if isinstance(path, pathlib.Path):
            path = str(path.resolve())
        with open(path, "rb") as handle:
            image = Image.open(io.BytesIO(handle.read()))
    else:
        raise TypeError(f"path should be path-like or io.BytesIO, not {type(path)}")
    modes = {"grayscale": ("L", "I;16", "I"), "rgba": ("RGBA",), "rgb": ("RGB",)}
    if color_mode not in modes:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    if image.mode not in modes[color_mode]:
        image = image.convert({"grayscale": "L", "rgba": "RGBA", "rgb": "RGB"}[color_mode])
    if target_size is not None:
        width_height = (target_size[1], target_size[0])
        if image.size != width_height:
            if interpolation not in _PIL_FILTERS:
                raise ValueError(f"Invalid interpolation method {interpolation} specified. Supported methods are "
                                 f"{', '.join(sorted(_PIL_FILTERS))}")
            resample = getattr(Image, _PIL_FILTERS[interpolation])
            if keep_aspect_ratio:
                width, height = image.size
                crop_height = min(height, (width * target_size[0]) // target_size[1])
                crop_width = min(width, (height * target_size[1]) // target_size[0])
                top, left = (height - crop_height) // 2, (width - crop_width) // 2
                image = image.crop((left, top, left + crop_width, top + crop_height))
            image = Image.Image.resize(image, width_height, resample)  # PIL's method (not ndarray.resize)
    return image


def img_to_array(img, data_format=None, dtype=None):
    """A PIL Image as a NumPy array: ``(height, width, channels)`` (or
    channels first), float32 unless ``dtype`` says otherwise."""
    data_format = _data_format(data_format)
    array = numpy.asarray(img, dtype=dtype or "float32")
    if array.ndim == 2:
        array = array[:, :, None]
    elif array.ndim != 3:
        raise ValueError(f"Unsupported image shape: {array.shape}")
    return array.transpose(2, 0, 1) if data_format == "channels_first" else array


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A 3D array as a PIL Image (1, 3 or 4 channels); ``scale`` maps the
    values' range onto 0-255 first, as Keras does."""
    Image = pil_image()
    data_format = _data_format(data_format)
    x = numpy.asarray(x, dtype=dtype or "float32")
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array with shape: {x.shape}")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - numpy.min(x)
        peak = numpy.max(x)
        if peak != 0:
            x = x / peak
        x = x * 255
    channels = x.shape[2]
    if channels == 4:
        return Image.fromarray(x.astype("uint8"), "RGBA")
    if channels == 3:
        return Image.fromarray(x.astype("uint8"), "RGB")
    if channels == 1:
        if numpy.max(x) > 255:  # 32-bit signed integer grayscale
            return Image.fromarray(x[:, :, 0].astype("int32"), "I")
        return Image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {channels}")


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Save an array as an image file (the format from ``file_format`` or the
    file name); RGBA is saved as RGB for JPEG, as Keras does."""
    image = array_to_img(x, data_format=data_format, scale=scale)
    if image.mode == "RGBA" and (file_format == "jpg" or file_format == "jpeg"
                                 or (file_format is None and str(path).lower().endswith((".jpg", ".jpeg")))):
        image = image.convert("RGB")
    image.save(os.fspath(path) if not hasattr(path, "write") else path, format=file_format, **kwargs)


# -- resizing as tf.image.resize computes it ----------------------------------------------------------------

def _bilinear_axis(in_size, out_size):
    scale = in_size / out_size
    position = (numpy.arange(out_size) + 0.5) * scale - 0.5
    floor = numpy.floor(position)
    lower = numpy.maximum(floor, 0).astype(numpy.int64)
    upper = numpy.minimum(numpy.ceil(position), in_size - 1).astype(numpy.int64)
    return lower, upper, (position - floor).astype(numpy.float32)


def resize_array(image, size, interpolation="bilinear"):
    """Resize a ``(height, width, channels)`` array to ``size`` as
    ``tf.image.resize`` does (float32 out)."""
    height, width = size
    image = numpy.asarray(image, dtype=numpy.float32)
    if image.shape[:2] == (height, width):
        return image
    if interpolation == "bilinear":
        top, bottom, row_weight = _bilinear_axis(image.shape[0], height)
        left, right, column_weight = _bilinear_axis(image.shape[1], width)
        upper_row = image[top][:, left] + (image[top][:, right] - image[top][:, left]) * column_weight[None, :, None]
        lower_row = image[bottom][:, left] + (image[bottom][:, right] - image[bottom][:, left]) * \
            column_weight[None, :, None]
        return upper_row + (lower_row - upper_row) * row_weight[:, None, None]
    if interpolation == "nearest":
        rows = numpy.minimum(numpy.floor((numpy.arange(height) + 0.5) * image.shape[0] / height),
                             image.shape[0] - 1).astype(numpy.int64)
        columns = numpy.minimum(numpy.floor((numpy.arange(width) + 0.5) * image.shape[1] / width),
                                image.shape[1] - 1).astype(numpy.int64)
        return image[rows][:, columns]
    Image = pil_image()
    resample = getattr(Image, _PIL_FILTERS[interpolation])
    channels = [numpy.asarray(Image.Image.resize(Image.fromarray(image[:, :, c], mode="F"), (width, height), resample))
                for c in range(image.shape[2])]
    return numpy.stack(channels, axis=-1).astype(numpy.float32)


def smart_resize_array(image, size, interpolation="bilinear", crop_to_aspect_ratio=False, pad_to_aspect_ratio=False):
    """Resize a ``(height, width, channels)`` array as Keras's image loaders
    do: ``crop_to_aspect_ratio`` crops the centre to the target's aspect
    ratio first (``smart_resize``); ``pad_to_aspect_ratio`` scales the whole
    image to fit and pads the rest with zeros (``tf.image.resize_with_pad``)."""
    if crop_to_aspect_ratio and pad_to_aspect_ratio:
        raise ValueError("Only one of `crop_to_aspect_ratio` or `pad_to_aspect_ratio` can be True.")
    height, width = image.shape[:2]
    target_height, target_width = size
    if crop_to_aspect_ratio:
        crop_height = max(min(height, int(width * target_height / target_width)), 1)
        crop_width = max(min(width, int(height * target_width / target_height)), 1)
        top, left = (height - crop_height) // 2, (width - crop_width) // 2
        image = image[top:top + crop_height, left:left + crop_width]
    elif pad_to_aspect_ratio:
        f32 = numpy.float32
        ratio = max(f32(width) / f32(target_width), f32(height) / f32(target_height))
        resized_height, resized_width = f32(height) / ratio, f32(width) / ratio
        top = max(0, int(numpy.floor((f32(target_height) - resized_height) / f32(2))))
        left = max(0, int(numpy.floor((f32(target_width) - resized_width) / f32(2))))
        resized = resize_array(image, (int(numpy.floor(resized_height)), int(numpy.floor(resized_width))),
                               interpolation)
        padded = numpy.zeros((target_height, target_width, image.shape[2]), dtype=numpy.float32)
        padded[top:top + resized.shape[0], left:left + resized.shape[1]] = resized
        return padded
    return resize_array(image, size, interpolation)
