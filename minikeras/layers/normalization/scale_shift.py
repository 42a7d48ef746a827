"""The learned scale (gamma) and shift (beta) that BatchNormalization,
LayerNormalization and GroupNormalization share: their arguments, weights
and config entries, written once."""
from minikeras import constraints, initializers, ops, regularizers
from minikeras.backend.dtypes import is_half_dtype


def set_scale_shift_arguments(layer, center, scale, beta_initializer, gamma_initializer, beta_regularizer,
                              gamma_regularizer, beta_constraint, gamma_constraint):
    """Store the scale/shift arguments on ``layer`` as Keras names them,
    resolved to objects; the weights themselves come in build."""
    layer.center, layer.scale = bool(center), bool(scale)
    layer.beta_initializer = initializers.get(beta_initializer)
    layer.gamma_initializer = initializers.get(gamma_initializer)
    layer.beta_regularizer = regularizers.get(beta_regularizer)
    layer.gamma_regularizer = regularizers.get(gamma_regularizer)
    layer.beta_constraint = constraints.get(beta_constraint)
    layer.gamma_constraint = constraints.get(gamma_constraint)
    layer.gamma = layer.beta = None


def add_scale_shift_weights(layer, shape):
    """Create gamma (when ``scale``) then beta (when ``center``) of ``shape``,
    in Keras's weight order."""
    if layer.scale:
        layer.gamma = layer.add_weight("gamma", shape, initializer=layer.gamma_initializer,
                                       regularizer=layer.gamma_regularizer, constraint=layer.gamma_constraint,
                                       autocast=False)
    if layer.center:
        layer.beta = layer.add_weight("beta", shape, initializer=layer.beta_initializer,
                                      regularizer=layer.beta_regularizer, constraint=layer.beta_constraint,
                                      autocast=False)


def in_statistics_dtype(inputs):
    """16-bit inputs of a normalisation layer cast to float32: means and
    variances of float16 overflow and lose digits, so Keras computes them
    (and applies gamma and beta, kept uncast with ``autocast=False``) in
    float32 and casts the output back (:func:`in_compute_dtype`)."""
    return ops.cast(inputs, "float32") if is_half_dtype(inputs.dtype) else inputs


def in_compute_dtype(layer, outputs):
    """The normalised ``outputs`` in the layer's compute dtype."""
    compute = layer.compute_dtype
    return outputs if outputs.dtype.name == compute or compute == "float64" else ops.cast(outputs, compute)


def scale_shift_config(layer):
    """The scale/shift entries of the layer's ``get_config``."""
    return {
        "center": layer.center,
        "scale": layer.scale,
        "beta_initializer": initializers.serialize(layer.beta_initializer),
        "gamma_initializer": initializers.serialize(layer.gamma_initializer),
        "beta_regularizer": regularizers.serialize(layer.beta_regularizer),
        "gamma_regularizer": regularizers.serialize(layer.gamma_regularizer),
        "beta_constraint": constraints.serialize(layer.beta_constraint),
        "gamma_constraint": constraints.serialize(layer.gamma_constraint),
    }
