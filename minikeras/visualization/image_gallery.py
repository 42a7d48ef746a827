"""`plot_image_gallery`: a grid of images with optional labels, as Keras's (needs matplotlib)."""
import math

import numpy

from minikeras.visualization import _arrays

_OWNER = "plot_image_gallery"


def plot_image_gallery(images, y_true=None, y_pred=None, label_map=None, rows=None, cols=None, value_range=(0, 255),
                       scale=2, path=None, show=None, transparent=True, dpi=60, legend_handles=None,
                       data_format=None):
    """Shows or saves a grid of images (``keras.visualization.plot_image_gallery``).

    matplotlib is imported when this is called (ImportError naming
    ``pip install matplotlib`` without it). The grid is ``rows`` x ``cols``
    (by default ``ceil(sqrt(batch))`` rows and enough columns for every
    image: Keras 3.15 floors the column count and leaves images out); cells
    past the last image stay empty.

    Args:
        images: ``(batch, height, width, channels)`` (or channels first).
        y_true, y_pred: class ids per image, titled through ``label_map``.
        label_map: ``{class id: name}``; required with ``y_true`` or ``y_pred``.
        rows, cols: the grid's size.
        value_range: the images' range, rescaled to (0, 255) for display.
        scale: inches per cell.
        path: save the figure there (then not shown) instead of showing it.
        show: show the figure (default: when no ``path``); False leaves it
            open as the current figure (``plt.gcf()``).
        transparent, dpi: how ``path`` is saved.
        legend_handles: matplotlib handles for a legend under the grid.
        data_format: ``"channels_last"`` or ``"channels_first"`` (default: the configured one).

    Raises:
        ValueError: both ``path`` and ``show``, labels without ``label_map``, images not of rank 4.
        ImportError: matplotlib is not installed.
    """
    plt = _arrays.pyplot(_OWNER)
    if path is not None and show:
        raise ValueError(f"{_OWNER} expects either path (save the figure) or show=True, not both.")
    if (y_true is not None or y_pred is not None) and label_map is None:
        raise ValueError(f"{_OWNER} expects a label_map with y_true or y_pred, to name their classes.")
    show = path is None if show is None else show
    images = _arrays.batched_images(images, _OWNER)
    if _arrays.data_format(data_format, _OWNER) == "channels_first":
        images = images.transpose(0, 2, 3, 1)
    batch = images.shape[0]
    rows = rows or int(math.ceil(math.sqrt(batch)))
    cols = cols or int(math.ceil(batch / rows))
    images = numpy.asarray(_arrays.rescale(images[:rows * cols], value_range))
    y_true = None if y_true is None else _arrays.host_array(y_true)
    y_pred = None if y_pred is None else _arrays.host_array(y_pred)

    figure, axes = plt.subplots(nrows=rows, ncols=cols, figsize=(cols * scale, rows * scale), frameon=False,
                                layout="tight", squeeze=False, sharex="row", sharey="col")
    figure.subplots_adjust(wspace=0, hspace=0)
    if legend_handles is not None:
        figure.legend(handles=legend_handles, loc="lower center")
    for row in range(rows):
        for col in range(cols):
            index = row * cols + col
            axis = axes[row, col]
            axis.margins(x=0, y=0)
            axis.axis("off")
            if index >= len(images):
                continue
            axis.imshow(images[index].astype("uint8"))
            title = []
            if y_true is not None and index < len(y_true):
                title.append(f"Label: {label_map.get(_key(y_true[index]), 'Unknown')}")
            if y_pred is not None and index < len(y_pred):
                title.append(f"Pred: {label_map.get(_key(y_pred[index]), 'Unknown')}")
            if title:
                axis.set_title("  ".join(title), fontsize=8)
    if path is not None:
        plt.savefig(fname=path, pad_inches=0, bbox_inches="tight", transparent=transparent, dpi=dpi)
        plt.close()
    elif show:
        plt.show()
        plt.close()


def _key(value):
    """A label as a dict key: NumPy scalars as Python numbers (``{0: "cat"}`` finds ``numpy.int64(0)`` either way)."""
    return value.item() if isinstance(value, numpy.generic) else value
