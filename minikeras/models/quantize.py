"""``Model.quantize``: quantize every layer of a model that can be (Keras 3).

The model's arguments are checked first (an unbuilt model, an unknown
mode: Keras's ValueErrors). Then each leaf layer (one holding no layers),
depth first, is quantized when it passes ``filters``; a layer that cannot
be quantized (Dropout, a Dense subclass without ``type_check=False``, an
Embedding asked for float8) gives Keras's warning and is left as it is.
The compiled step functions are made anew afterwards.
"""
import re
import warnings

__all__ = ["quantize_model"]


def _passes(layer, filters):
    """Keras's ``should_quantize_layer``: a regex (or list of them) searched in
    the layer's name, or a callable of the layer."""
    if filters is None:
        return True
    if isinstance(filters, str):
        return bool(re.search(filters, layer.name))
    if isinstance(filters, (list, tuple)):
        return any(re.search(pattern, layer.name) for pattern in filters)
    return bool(filters(layer))


def quantize_model(model, mode, config, filters=None, type_check=True):
    """Quantize ``model``'s layers in place (see the module docstring).

    Raises:
        ValueError: ``filters`` of another type, "gptq"/"awq" (not supported
            here), or a layer's own refusal (unbuilt, quantized already).
    """
    from minikeras.layers.base import walk_layers

    if filters is not None and not (isinstance(filters, (str, list, tuple)) or callable(filters)):
        raise ValueError("The `filters` argument must be a regex string, a list of regex strings, or a callable. "
                         f"Received: {type(filters)}")
    if mode in ("gptq", "awq"):
        raise NotImplementedError(f"Model.quantize: mode '{mode}' needs a calibration dataset and Keras's "
                                  f"{mode.upper()} algorithm, which minikeras does not have (README, Quantization). "
                                  "Use 'int8', 'int4' or 'float8'.")
    modified = False
    for layer in walk_layers(model):
        if layer._sublayers() or not _passes(layer, filters):
            continue
        try:
            layer.quantize(mode, type_check=type_check, config=config)
            modified = True
        except NotImplementedError as error:
            warnings.warn(str(error), stacklevel=4)  # at the caller of model.quantize
    if modified:
        model.train_function = model.test_function = model.predict_function = None
        if getattr(model, "_captured_step", None) is not None:
            model._set_jit_compile(True)  # the captured graph read the float weights
