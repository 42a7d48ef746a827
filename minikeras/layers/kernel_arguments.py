"""The kernel/bias weight arguments that Dense, the conv layers, EinsumDense
and the attention layers share: resolved and stored on the layer in one
place, and written back to get_config in one place, so their Keras names
and serialized forms cannot drift apart between layers."""
from minikeras import constraints, initializers, regularizers

__all__ = ["set_weight_arguments", "weight_arguments_config"]


def set_weight_arguments(layer, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint):
    """Resolve the seven initializer/regularizer/constraint arguments and store
    them on ``layer`` under their Keras names."""
    layer.kernel_initializer = initializers.get(kernel_initializer)
    layer.bias_initializer = initializers.get(bias_initializer)
    layer.kernel_regularizer = regularizers.get(kernel_regularizer)
    layer.bias_regularizer = regularizers.get(bias_regularizer)
    layer.activity_regularizer = regularizers.get(activity_regularizer)
    layer.kernel_constraint = constraints.get(kernel_constraint)
    layer.bias_constraint = constraints.get(bias_constraint)


def weight_arguments_config(layer):
    """The get_config entries of what :func:`set_weight_arguments` stored, in Keras's order."""
    return {
        "kernel_initializer": initializers.serialize(layer.kernel_initializer),
        "bias_initializer": initializers.serialize(layer.bias_initializer),
        "kernel_regularizer": regularizers.serialize(layer.kernel_regularizer),
        "bias_regularizer": regularizers.serialize(layer.bias_regularizer),
        "activity_regularizer": regularizers.serialize(layer.activity_regularizer),
        "kernel_constraint": constraints.serialize(layer.kernel_constraint),
        "bias_constraint": constraints.serialize(layer.bias_constraint),
    }
