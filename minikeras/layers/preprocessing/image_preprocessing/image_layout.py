"""The image layers' data_format check and channels-last batch handling."""
from minikeras import ops


def _data_format(layer_name, data_format):
    data_format = data_format or "channels_last"
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"{layer_name}: data_format must be 'channels_last' or 'channels_first', "
                         f"received {data_format!r}.")
    return data_format


def _as_channels_last_batch(layer, images, data_format):
    """(batch, height, width, channels) view of ``images`` and a function
    putting a result back in the caller's layout."""
    if images.ndim not in (3, 4):
        raise ValueError(f"Layer '{layer.name}' ({type(layer).__name__}) expects images of rank 3 or 4, received "
                         f"shape {tuple(images.shape)}.")
    single = images.ndim == 3
    if single:
        images = ops.expand_dims(images, 0)
    if data_format == "channels_first":
        images = ops.transpose(images, (0, 2, 3, 1))

    def restore(result):
        if data_format == "channels_first":
            result = ops.transpose(result, (0, 3, 1, 2))
        return ops.squeeze(result, 0) if single else result

    return images, restore


def _aspect_crop(images, height, width):
    """The central crop of ``images`` with the target's aspect ratio (as
    ``crop_to_aspect_ratio`` and ``smart_resize`` choose it)."""
    in_height, in_width = images.shape[1], images.shape[2]
    crop_height = max(min(in_height, int(in_width * height / width)), 1)
    crop_width = max(min(in_width, int(in_height * width / height)), 1)
    top, left = (in_height - crop_height) // 2, (in_width - crop_width) // 2
    return images[:, top:top + crop_height, left:left + crop_width, :]
