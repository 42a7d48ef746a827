"""``image_dataset_from_directory``: a folder of class subfolders of images as
a batch source that ``fit`` takes directly (Keras's arguments and errors).

Images are decoded with Pillow (the ``image`` extra) and resized as Keras's
``tf.image.resize`` does (see image_utils.py); batches are float32
``(batch, height, width, channels)`` (channels first with
``data_format="channels_first"``), loaded when the batch is asked for.
"""
import numpy

from minikeras.backend.keras_helpers import image_data_format
from minikeras.utils import dataset_utils, image_utils

ALLOWLIST_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
_INTERPOLATIONS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")
_CHANNELS = {"rgb": 3, "rgba": 4, "grayscale": 1}


def _libpng_gray(rgb):
    """Colour to gray as TensorFlow's image decoder gets it from libpng
    (fixed-point 0.299/0.587/0.114 weights, truncated), so grayscale batches
    equal Keras's for PNG files (Pillow rounds instead)."""
    rgb = rgb.astype(numpy.int64)
    return ((9797 * rgb[..., 0] + 19234 * rgb[..., 1] + 3737 * rgb[..., 2]) >> 15).astype(numpy.float32)


def _image_loader(image_size, color_mode, interpolation, crop_to_aspect_ratio, pad_to_aspect_ratio, data_format):
    Image = image_utils.pil_image()
    mode = {"rgb": "RGB", "rgba": "RGBA", "grayscale": "L"}[color_mode]

    def load(paths):
        images = []
        for path in paths:
            with Image.open(path) as image:
                if mode == "L" and image.mode != "L":
                    array = _libpng_gray(numpy.asarray(image.convert("RGB")))
                else:
                    array = numpy.asarray(image.convert(mode), dtype=numpy.float32)
            if array.ndim == 2:
                array = array[:, :, None]
            array = image_utils.smart_resize_array(array, image_size, interpolation, crop_to_aspect_ratio,
                                                   pad_to_aspect_ratio)
            images.append(array.transpose(2, 0, 1) if data_format == "channels_first" else array)
        return numpy.stack(images)

    return load


def image_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, color_mode="rgb",
                                 batch_size=32, image_size=(256, 256), shuffle=True, seed=None, validation_split=None,
                                 subset=None, interpolation="bilinear", follow_links=False, crop_to_aspect_ratio=False,
                                 pad_to_aspect_ratio=False, data_format=None, format="tf", verbose=True):  # noqa: A002
    """Batches of images (and labels) from a directory, as Keras's.

    With ``labels="inferred"`` the subfolders of ``directory`` are the classes
    (in sorted order, or ``class_names``'s). Files with extensions
    ``.bmp .gif .jpeg .jpg .png`` are read.

    Args:
        directory: the folder.
        labels: ``"inferred"``, None (images only), or one int per file (files
            in sorted path order).
        label_mode: ``"int"``, ``"categorical"`` (one-hot), ``"binary"``
            (float ``(n, 1)``, two classes) or None.
        class_names: with inferred labels, the subfolders to use, in order.
        color_mode: ``"rgb"``, ``"rgba"`` or ``"grayscale"``.
        batch_size: images per batch (None: single images).
        image_size: ``(height, width)`` every image is resized to.
        shuffle: shuffle the files (and reshuffle every epoch).
        seed: the shuffling's seed (required with ``validation_split`` and
            ``shuffle``).
        validation_split: the fraction of files kept for validation.
        subset: ``"training"``, ``"validation"`` or ``"both"`` (a pair).
        interpolation: the resizing method.
        follow_links: walk into symlinked folders.
        crop_to_aspect_ratio: crop the centre to ``image_size``'s aspect ratio
            before resizing (no distortion).
        pad_to_aspect_ratio: pad with zeros to the aspect ratio instead.
        data_format: ``"channels_last"`` or ``"channels_first"`` (default:
            ``config.image_data_format()``).
        format: ``"tf"`` (Keras's default) is accepted and gives minikeras's
            batch source; ``"grain"`` is refused.
        verbose: print how many files were found.

    Returns:
        A ``FileDataset`` with ``class_names`` and ``file_paths`` (a list of
        two with ``subset="both"``).

    Raises:
        ValueError: Keras's errors for bad arguments and for a folder with no
            images ("No images found in directory ...").
    """
    labels, label_mode = dataset_utils.check_label_mode(labels, label_mode, class_names)
    if color_mode not in _CHANNELS:
        raise ValueError('`color_mode` must be one of {"rgb", "rgba", "grayscale"}. Received: '
                         f"color_mode={color_mode}")
    if isinstance(image_size, int):
        image_size = (image_size, image_size)
    elif not isinstance(image_size, (list, tuple)) or len(image_size) != 2:
        raise ValueError("Invalid `image_size` value. Expected a tuple of 2 integers. Received: "
                         f"image_size={image_size}")
    image_size = tuple(int(size) for size in image_size)
    interpolation = interpolation.lower()
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"Argument `interpolation` should be one of {_INTERPOLATIONS}. Received: "
                         f"interpolation={interpolation}")
    if format != "tf":
        raise ValueError(f'`format` should be "tf" (minikeras returns its own batch source for it); "grain" is not '
                         f"supported. Received: format={format}")
    if crop_to_aspect_ratio and pad_to_aspect_ratio:
        raise ValueError("Only one of `crop_to_aspect_ratio` or `pad_to_aspect_ratio` can be True.")
    data_format = data_format or image_data_format()
    dataset_utils.check_validation_split_arg(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = numpy.random.randint(1e6)
    paths, labels, class_names = dataset_utils.index_directory(
        directory, labels, formats=ALLOWLIST_FORMATS, class_names=class_names, shuffle=shuffle, seed=seed,
        follow_links=follow_links, verbose=verbose)
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError(f'When passing `label_mode="binary"`, there must be exactly 2 class_names. Received: '
                         f"class_names={class_names}")
    load = _image_loader(image_size, color_mode, interpolation, crop_to_aspect_ratio, pad_to_aspect_ratio,
                         data_format)

    def empty(what):
        return f"No {what}images found in directory {directory}. Allowed formats: {ALLOWLIST_FORMATS}"

    return dataset_utils.datasets_for_subset(paths, labels, class_names, label_mode, validation_split, subset, load,
                                             batch_size, shuffle, seed, empty)
