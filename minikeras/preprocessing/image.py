"""``keras.preprocessing.image``: the image helpers under their old address,
and ``smart_resize``."""
import numpy

from minikeras import backend
from minikeras._support import array_like
from minikeras.utils.image_utils import array_to_img, img_to_array, load_img, save_img, smart_resize_array

__all__ = ["array_to_img", "img_to_array", "load_img", "save_img", "smart_resize"]


def smart_resize(x, size, interpolation="bilinear", data_format="channels_last", backend_module=None):
    """Resize images to ``size`` without distorting them: the largest centred
    crop of the target's aspect ratio, then a resize (Keras's ``smart_resize``).

    Args:
        x: one image ``(height, width, channels)`` or a batch of them (4-D);
            channels first with ``data_format="channels_first"``. An array,
            a Tensor or any array-like.
        size: ``(height, width)``.
        interpolation: ``"bilinear"``, ``"nearest"``, ``"bicubic"``,
            ``"area"``, ``"lanczos3"``, ``"lanczos5"``, ``"gaussian"`` or
            ``"mitchellcubic"``.
        data_format: ``"channels_last"`` or ``"channels_first"``.
        backend_module: accepted for Keras compatibility (ignored).

    Returns:
        A float32 NumPy array of the resized image(s).
    """
    array = backend.to_numpy(array_like.to_array(x, "smart_resize"))
    if len(size) != 2:
        raise ValueError(f"Expected `size` to be a tuple of 2 integers, but got: {size}.")
    if array.ndim not in (3, 4):
        raise ValueError(f"Expected an image array with shape `(height, width, channels)`, or `(batch_size, height, "
                         f"width, channels)`, but got input with incorrect rank, of shape {array.shape}.")
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"Invalid data_format: {data_format!r}; expected 'channels_first' or 'channels_last'.")
    images = array if array.ndim == 4 else array[None]
    if data_format == "channels_first":
        images = images.transpose(0, 2, 3, 1)
    resized = numpy.stack([smart_resize_array(image.astype(numpy.float32), tuple(int(s) for s in size),
                                              interpolation, crop_to_aspect_ratio=True) for image in images])
    if data_format == "channels_first":
        resized = resized.transpose(0, 3, 1, 2)
    return resized if array.ndim == 4 else resized[0]
