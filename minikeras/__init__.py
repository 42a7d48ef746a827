"""minikeras: a Keras-style deep learning library on its own autograd engine.

NumPy runs it on the CPU, CuPy on NVIDIA GPUs; the same model code runs on
either, chosen by a device scope.

Example:
    >>> import minikeras as mk
    >>> x = mk.tensor([[1.0, 2.0]], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad.numpy()
    array([[2., 4.]], dtype=float32)
"""
import importlib

# The core, loaded now: autograd's Tensor and the device scope. ``ops`` loads on first use: its first
# ``minikeras.ops`` or the first Tensor operator (autograd/operators.py's stand-ins bind them).
# Everything else below is a lazy attribute (PEP 562): ``import minikeras`` loads no dataset,
# saving format, application, data pipeline, GPU simulation or fused kernel (tests/test_architecture.py
# counts what it loads). ``device`` is bound here, after ``minikeras.device`` the package is imported,
# so ``minikeras.device`` is the scope function, as it always was.
from minikeras import errors  # noqa: F401
from minikeras.autograd import Tensor, enable_grad, is_grad_enabled, no_grad, tensor  # noqa: F401
from minikeras.device import device  # noqa: F401

__version__ = "0.1.0"

# Subpackages loaded on first use, so that ``import minikeras`` stays quick.
_LAZY_MODULES = {
    "layers", "models", "optimizers", "losses", "metrics", "callbacks", "activations",
    "initializers", "regularizers", "constraints", "datasets", "distribute", "saving", "utils",
    "preprocessing",
    "mixed_precision", "dtype_policies",
}
_LAZY_MODULES |= {"config", "random"}  # keras.config (tf.config's names too), keras.random
_LAZY_MODULES |= {"autograd", "backend", "kernels", "ops"}  # loaded with the core, or (kernels) on first launch
_LAZY_MODULES |= {"applications"}  # Keras's applications (issue 26)
_LAZY_MODULES |= {"distribution"}  # keras.distribution (data parallelism for every model)
_LAZY_MODULES |= {"tree", "data"}  # keras.tree; tf.data-style datasets (mk.data.Dataset, mk.data.AUTOTUNE)
_LAZY_MODULES |= {"quantizers"}  # keras.quantizers (int8 / int4 / float8 quantization)
_LAZY_MODULES |= {"wrappers", "visualization"}  # keras.wrappers (scikit-learn), keras.visualization (issue 37)
_LAZY_NAMES = {
    "Sequential": "minikeras.models",
    "Model": "minikeras.models",
    "Input": "minikeras.layers",
    "MirroredModel": "minikeras.distribute",
    "MultiWorkerMirroredModel": "minikeras.distribute",
    "Variable": "minikeras.variables",
    "GradientTape": "minikeras.autograd.tape",
    "DTypePolicy": "minikeras.dtype_policies",
    "FloatDTypePolicy": "minikeras.dtype_policies",
    # The rest of Keras 3's top level.
    "Layer": "minikeras.layers",
    "InputSpec": "minikeras.layers",
    "KerasTensor": "minikeras.layers",
    "Operation": "minikeras.layers.operation",
    "Loss": "minikeras.losses",
    "Metric": "minikeras.metrics",
    "Optimizer": "minikeras.optimizers",
    "Initializer": "minikeras.initializers",
    "Regularizer": "minikeras.regularizers",
    "Function": "minikeras.models.function",
    "StatelessScope": "minikeras.scopes",
    "SymbolicScope": "minikeras.scopes",
    "name_scope": "minikeras.scopes",
    "RematScope": "minikeras.rematerialization",
    "remat": "minikeras.rematerialization",
}
_LAZY_NAMES["Quantizer"] = "minikeras.quantizers"  # keras.Quantizer


def version():
    """minikeras's version string (``keras.version()``)."""
    return __version__


def __getattr__(name):
    """A lazy name's module, imported on first use (PEP 562); then kept in this
    module's globals, so later look-ups do not come here."""
    if name in _LAZY_MODULES:
        value = importlib.import_module(f"minikeras.{name}")
    elif name in _LAZY_NAMES:
        value = getattr(importlib.import_module(_LAZY_NAMES[name]), name)
    else:
        raise AttributeError(f"module 'minikeras' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | _LAZY_MODULES | set(_LAZY_NAMES))
