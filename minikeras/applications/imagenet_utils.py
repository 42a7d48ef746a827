"""What every application shares: the input-shape rules, the classifier top,
loading weights (``None``, a path, or ``"imagenet"``), ``preprocess_input``
and ``decode_predictions``.

``weights="imagenet"`` reads Keras's published weight files through
``utils.get_file``: a copy already in ``~/.minikeras/models`` or
``~/.keras/models`` (Keras's own cache) is used, checked against Keras's
hash; otherwise the file is downloaded, and where there is no network the
error names the URL and the folder to put the file in. The files are
tf.keras HDF5 files, read by ``Model.load_weights`` in Keras's layer order.
``decode_predictions`` needs ``imagenet_class_index.json`` in the same
cache (fetched the same way).
"""
import json
import os

import numpy

from minikeras import activations
from minikeras.backend.keras_helpers import floatx, image_data_format
from minikeras.utils.get_file import get_file
from minikeras.utils.source_inputs import get_source_inputs

CLASS_INDEX_PATH = "https://storage.googleapis.com/download.tensorflow.org/data/imagenet_class_index.json"
_CLASS_INDEX = {}


def check_weights_argument(weights, include_top, classes):
    """Keras's checks of ``weights`` and ``classes`` (ValueError)."""
    if not (weights in {"imagenet", None} or (isinstance(weights, (str, os.PathLike)) and os.path.exists(weights))):
        raise ValueError("The `weights` argument should be either `None` (random initialization), 'imagenet' "
                         "(pre-training on ImageNet), or the path to the weights file to be loaded.  Received: "
                         f"weights={weights}")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError("If using `weights='imagenet'` with `include_top=True`, `classes` should be 1000.  "
                         f"Received classes={classes}")


def obtain_input_shape(input_shape, default_size, min_size, data_format, require_flatten, weights=None):
    """The model's input shape from the user's (or the default), checked as
    Keras checks it: three axes, 3 channels for ImageNet weights, at least
    ``min_size`` pixels, fixed when the top is included."""
    channels_first = data_format == "channels_first"
    if weights != "imagenet" and input_shape and len(input_shape) == 3:
        channels = input_shape[0] if channels_first else input_shape[-1]
        default_shape = (channels, default_size, default_size) if channels_first else \
            (default_size, default_size, channels)
    else:
        default_shape = (3, default_size, default_size) if channels_first else (default_size, default_size, 3)
    if weights == "imagenet" and require_flatten:
        if input_shape is not None and tuple(input_shape) != default_shape:
            raise ValueError(f"When setting `include_top=True` and loading `imagenet` weights, `input_shape` should be "
                             f"{default_shape}.  Received: input_shape={input_shape}")
        return default_shape
    if input_shape:
        input_shape = tuple(input_shape)
        if len(input_shape) != 3:
            raise ValueError("`input_shape` must be a tuple of three integers.")
        channels = input_shape[0] if channels_first else input_shape[-1]
        spatial = input_shape[1:] if channels_first else input_shape[:2]
        if channels != 3 and weights == "imagenet":
            raise ValueError(f"The input must have 3 channels; Received `input_shape={input_shape}`")
        if any(size is not None and size < min_size for size in spatial):
            raise ValueError(f"Input size must be at least {min_size}x{min_size}; Received: "
                             f"input_shape={input_shape}")
    elif require_flatten:
        input_shape = default_shape
    else:
        input_shape = (3, None, None) if channels_first else (None, None, 3)
    if require_flatten and None in input_shape:
        raise ValueError(f"If `include_top` is True, you should specify a static `input_shape`. Received: "
                         f"input_shape={input_shape}")
    return input_shape


def model_input(input_tensor, input_shape):
    """``(image input tensor, model inputs)``: a new ``Input``, or the user's
    ``input_tensor`` (a symbolic tensor) and the inputs it comes from."""
    from minikeras.layers import Input

    if input_tensor is None:
        tensor = Input(shape=input_shape)
        return tensor, tensor
    from minikeras.backend.keras_helpers import is_keras_tensor

    if not is_keras_tensor(input_tensor):
        raise ValueError(f"input_tensor must be a symbolic tensor (from keras.Input or a layer call), received "
                         f"{type(input_tensor).__name__}.")
    sources = get_source_inputs(input_tensor)
    return input_tensor, sources[0] if len(sources) == 1 else sources


def validate_activation(classifier_activation, weights):
    """Pretrained weights allow only ``None`` or ``"softmax"`` on the top."""
    if weights is None:
        return
    activation = activations.get(classifier_activation)
    if activation not in (activations.get("softmax"), activations.get(None)):
        raise ValueError("Only `None` and `softmax` activations are allowed for the `classifier_activation` argument "
                         "when using pretrained weights, with `include_top=True`; Received: "
                         f"classifier_activation={classifier_activation}")


def pooled_top(x, include_top, pooling, classes, classifier_activation, weights, named_pools=True):
    """Keras's usual head: global average pooling (``avg_pool``) and the
    ``predictions`` Dense layer with the top, else the optional ``pooling``
    (named ``avg_pool``/``max_pool``, or left to default names as some
    families do)."""
    from minikeras import layers

    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        validate_activation(classifier_activation, weights)
        return layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    return pool(x, pooling, ("avg_pool", "max_pool") if named_pools else (None, None))


def pool(x, pooling, names=("avg_pool", "max_pool")):
    """The optional ``pooling`` of a model without its top."""
    from minikeras import layers

    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=names[0])(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name=names[1])(x)
    return x


def load_weights(model, weights, file_name=None, origin=None, file_hash=None):
    """Load ``weights`` into ``model``: a path, or ``"imagenet"`` (Keras's
    published ``file_name`` from ``origin``, cached or downloaded by
    ``utils.get_file``); None leaves the fresh weights."""
    if weights is None:
        return model
    if weights == "imagenet":
        if file_name is None:
            raise ValueError(f"Keras publishes no ImageNet weights for {model.name} with these arguments; pass "
                             "weights=None or a path.")
        weights = get_file(file_name, origin, cache_subdir="models", file_hash=file_hash)
    model.load_weights(weights)
    return model


def correct_pad(inputs, kernel_size):
    """The zero padding before a strided convolution, as Keras computes it
    (one pixel less on the top/left of even sizes)."""
    axis = 2 if image_data_format() == "channels_first" else 1
    input_size = inputs.shape[axis:axis + 2]
    if isinstance(kernel_size, int):
        kernel_size = (kernel_size, kernel_size)
    adjust = (1, 1) if input_size[0] is None else (1 - input_size[0] % 2, 1 - input_size[1] % 2)
    correct = (kernel_size[0] // 2, kernel_size[1] // 2)
    return (correct[0] - adjust[0], correct[0]), (correct[1] - adjust[1], correct[1])


def preprocess_input(x, data_format=None, mode="caffe"):
    """Scale a batch of RGB images (0-255) as the weights expect.

    Args:
        x: a NumPy array or a Tensor, 3D or 4D.
        data_format: ``"channels_last"`` (default from the config) or
            ``"channels_first"``.
        mode: ``"caffe"`` (RGB to BGR, minus the ImageNet channel means),
            ``"tf"`` (to [-1, 1]) or ``"torch"`` (to [0, 1], then the
            ImageNet means and standard deviations).

    Returns:
        The preprocessed images (a new array: the input is not changed,
        where Keras changes a float NumPy input in place).
    """
    if mode not in {"caffe", "tf", "torch"}:
        raise ValueError(f"Expected mode to be one of `caffe`, `tf` or `torch`. Received: mode={mode}")
    data_format = data_format or image_data_format()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError(f"Expected data_format to be one of `channels_first` or `channels_last`. Received: "
                         f"data_format={data_format}")
    if not isinstance(x, numpy.ndarray) and hasattr(x, "numpy"):
        from minikeras import ops

        mean, std, scale, flip = _constants(mode)
        shape = (3, 1, 1) if data_format == "channels_first" else (3,)
        if flip:  # RGB to BGR
            if data_format == "channels_last":
                x = ops.stack([x[..., i] for i in (2, 1, 0)], axis=-1)
            else:
                axis = x.ndim - 3
                x = ops.stack([x[(slice(None),) * axis + (i,)] for i in (2, 1, 0)], axis=axis)
        x = x * scale
        if mode == "tf":
            return x - 1.0
        x = x - numpy.asarray(mean, "float32").reshape(shape)
        return x if std is None else x / numpy.asarray(std, "float32").reshape(shape)
    x = numpy.asarray(x)
    x = x.astype(floatx()) if not numpy.issubdtype(x.dtype, numpy.floating) else x.copy()
    mean, std, scale, flip = _constants(mode)
    if mode == "tf":
        return x * scale - 1.0
    x = x * scale if scale != 1 else x
    channel_axis = (0 if x.ndim == 3 else 1) if data_format == "channels_first" else x.ndim - 1
    if flip:
        x = numpy.flip(x, axis=channel_axis)
    shape = [1] * x.ndim
    shape[channel_axis] = 3
    x = x - numpy.asarray(mean, x.dtype).reshape(shape)
    if std is not None:
        x = x / numpy.asarray(std, x.dtype).reshape(shape)
    return x


def _constants(mode):
    """(mean, std, scale, flip to BGR) of a preprocessing mode."""
    if mode == "tf":
        return None, None, 1 / 127.5, False
    if mode == "torch":
        return (0.485, 0.456, 0.406), (0.229, 0.224, 0.225), 1 / 255.0, False
    return (103.939, 116.779, 123.68), None, 1, True


def decode_predictions(preds, top=5):
    """``[[(class_id, class_name, score), ...] per sample]``: the ``top``
    ImageNet classes of each row of ``preds`` (shape ``(samples, 1000)``).

    The class names come from Keras's ``imagenet_class_index.json``, read
    from ``~/.minikeras/models`` or ``~/.keras/models`` (or downloaded).
    """
    preds = numpy.asarray(preds.numpy() if hasattr(preds, "numpy") else preds)
    if preds.ndim != 2 or preds.shape[1] != 1000:
        raise ValueError("`decode_predictions` expects a batch of predictions (i.e. a 2D array of shape (samples, "
                         f"1000)). Received array with shape: {preds.shape}")
    if not _CLASS_INDEX:
        path = get_file("imagenet_class_index.json", CLASS_INDEX_PATH, cache_subdir="models",
                        file_hash="c2c37ea517e94d9795004a39431a14cb")
        with open(path, encoding="utf-8") as handle:
            _CLASS_INDEX.update(json.load(handle))
    results = []
    for row in preds:
        best = row.argsort()[-top:][::-1]
        results.append(sorted((tuple(_CLASS_INDEX[str(i)]) + (row[i],) for i in best), key=lambda item: -item[2]))
    return results
