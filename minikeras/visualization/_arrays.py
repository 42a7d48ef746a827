"""What the visualization helpers share: inputs to host NumPy arrays, the
data format, the value-range rescaling and the matplotlib import."""
import numpy

from minikeras.backend import image_data_format
from minikeras.ops import convert_to_numpy

_DATA_FORMATS = ("channels_last", "channels_first")


def host_array(value):
    """``value`` (a minikeras Tensor on any device, a NumPy array, a tf.Tensor, nested lists) as a NumPy array."""
    return convert_to_numpy(value)


def data_format(value, owner):
    """``value``, or the configured ``image_data_format()`` when None; ValueError for anything else."""
    value = image_data_format() if value is None else value
    if value not in _DATA_FORMATS:
        raise ValueError(f"{owner} expects data_format 'channels_last' or 'channels_first', received {value!r}.")
    return value


def batched_images(images, owner):
    """``images`` as a host array of rank 4; ValueError naming ``owner`` otherwise."""
    images = host_array(images)
    if images.ndim != 4:
        raise ValueError(f"{owner} expects a batch of images of rank 4, (batch, height, width, channels) or "
                         f"(batch, channels, height, width); received shape {images.shape}.")
    return images


def rescale(images, value_range):
    """``images`` from ``value_range`` to (0, 255), in float32 as Keras does (unchanged when already so)."""
    low, high = value_range
    if low == 0 and high == 255:
        return images
    images = numpy.asarray(images, dtype=numpy.float32)
    low, high = numpy.float32(low), numpy.float32(high)
    return (images - low) / (high - low) * numpy.float32(255) + numpy.float32(0)


def pyplot(owner):
    """``matplotlib.pyplot``, or ImportError naming ``owner`` and the install command."""
    try:
        import matplotlib.pyplot
    except ImportError as error:
        raise ImportError(f"{owner} requires matplotlib, which is not installed. Install it with "
                          "`pip install matplotlib` (or minikeras's 'visualization' extra).") from error
    return matplotlib.pyplot
