"""``keras.ops.nn``: the names Keras's ``ops.nn`` namespace holds, bound onto the
``minikeras.ops.nn`` package (``mk.ops.nn.softmax`` is the function, as in Keras).

The package's own modules keep their import paths through ``sys.modules``:
``from minikeras.ops.nn.softmax import SparseSoftmaxCrossEntropy`` and
``from minikeras.ops.nn.conv import conv_bias_relu`` still work; only the
attribute spelling ``minikeras.ops.nn.softmax`` now means the function.
Call :func:`bind` after every submodule of ``minikeras.ops.nn`` is imported
(importing a submodule for the first time rebinds its name on the package).
"""

import sys

NAMES = [
    "adaptive_average_pool", "adaptive_max_pool", "average_pool", "batch_normalization",
    "binary_crossentropy", "categorical_crossentropy", "celu", "conv", "conv_transpose",
    "ctc_decode", "ctc_loss", "depth_to_space", "depthwise_conv", "dot_product_attention", "elu",
    "fold", "gelu", "glu", "hard_shrink", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
    "layer_normalization", "leaky_relu", "log_sigmoid", "log_softmax", "max_pool", "moments",
    "multi_hot", "normalize", "one_hot", "polar", "psnr", "relu", "relu6", "rms_normalization",
    "selu", "separable_conv", "sigmoid", "silu", "soft_shrink", "softmax", "softplus", "softsign",
    "space_to_depth", "sparse_categorical_crossentropy", "sparse_plus", "sparse_sigmoid",
    "sparsemax", "squareplus", "swish", "tanh_shrink", "threshold", "unfold",
]


def bind():
    """Set each Keras ``ops.nn`` name on the ``minikeras.ops.nn`` package to ``minikeras.ops``'s function."""
    ops = sys.modules["minikeras.ops"]
    package = sys.modules["minikeras.ops.nn"]
    for name in NAMES:
        setattr(package, name, getattr(ops, name))
