"""Differentiable ops (the functional API), one family per module.

Every op takes Tensors (or numbers/arrays as constants) and returns Tensors;
the natural ones are also Tensor methods and operators (``x.sum()``,
``a @ b``).
"""
import sys as _sys

from minikeras.ops.array import *  # noqa: F401,F403
from minikeras.ops.creation import *  # noqa: F401,F403
from minikeras.ops.math.arithmetic import *  # noqa: F401,F403
from minikeras.ops.math.compare import *  # noqa: F401,F403
from minikeras.ops.math.matmul import *  # noqa: F401,F403
from minikeras.ops.math.unary import *  # noqa: F401,F403
from minikeras.ops.nn.activations import *  # noqa: F401,F403
from minikeras.ops.nn.conv import *  # noqa: F401,F403
from minikeras.ops.nn.dropout import *  # noqa: F401,F403
from minikeras.ops.nn.embedding import *  # noqa: F401,F403
from minikeras.ops.nn.pool import *  # noqa: F401,F403
from minikeras.ops.nn.resize import *  # noqa: F401,F403
from minikeras.ops.nn.affine_transform import *  # noqa: F401,F403
from minikeras.ops.nn.group_norm import *  # noqa: F401,F403
from minikeras.ops.nn.conv3d import *  # noqa: F401,F403
from minikeras.ops.nn.conv3d_transpose import *  # noqa: F401,F403
from minikeras.ops.nn.softmax import *  # noqa: F401,F403
from minikeras.ops.nn.dense import *  # noqa: F401,F403
from minikeras.ops.nn.bias_activation import *  # noqa: F401,F403
from minikeras.ops.nn.normalization import *  # noqa: F401,F403
from minikeras.ops.nn.rnn_simple import *  # noqa: F401,F403
from minikeras.ops.nn.rnn_lstm import *  # noqa: F401,F403
from minikeras.ops.nn.rnn_gru import *  # noqa: F401,F403
from minikeras.ops.nn.upsampling import *  # noqa: F401,F403
from minikeras.ops.nn.weight_penalty import *  # noqa: F401,F403
from minikeras.ops.reduce import *  # noqa: F401,F403
# The old name of the array family, loaded here on purpose: importing a submodule
# binds it on the package, so loading it after keras_names would turn the
# ``ops.shape`` function back into the module.
import minikeras.ops.shape  # noqa: F401,E402
from minikeras.ops.keras_names import *  # noqa: F401,F403  (last: Keras's ops.shape/one_hot win)
# keras.ops, complete (issue 24): the rest of Keras 3's ops, one family per new module.
from minikeras.ops.math.trig_more import *  # noqa: F401,F403
from minikeras.ops.math.exp_log_more import *  # noqa: F401,F403
from minikeras.ops.math.rounding import *  # noqa: F401,F403
from minikeras.ops.math.integer_ops import *  # noqa: F401,F403
from minikeras.ops.math.predicates import *  # noqa: F401,F403
from minikeras.ops.math.complex_parts import *  # noqa: F401,F403
from minikeras.ops.array.sorting import *  # noqa: F401,F403
from minikeras.ops.math.cumulative import *  # noqa: F401,F403
from minikeras.ops.math.statistics import *  # noqa: F401,F403
from minikeras.ops.math.products import *  # noqa: F401,F403
from minikeras.ops.array.arranging import *  # noqa: F401,F403
from minikeras.ops.array.scatter import *  # noqa: F401,F403
from minikeras.ops.array.rearranging import *  # noqa: F401,F403
from minikeras.ops.math.linalg import *  # noqa: F401,F403
from minikeras.ops.math.fft import *  # noqa: F401,F403
from minikeras.ops.creation_more import *  # noqa: F401,F403
from minikeras.ops.core import *  # noqa: F401,F403
from minikeras.ops.control_flow import *  # noqa: F401,F403
from minikeras.ops.nn.activations_more import *  # noqa: F401,F403
from minikeras.ops.nn.keras_functions import *  # noqa: F401,F403
from minikeras.ops.nn.keras_normalization_losses import *  # noqa: F401,F403
from minikeras.ops.nn.attention import *  # noqa: F401,F403
from minikeras.ops.nn.ctc import *  # noqa: F401,F403
from minikeras.ops.nn.ctc_decode import *  # noqa: F401,F403
from minikeras.ops._promotion import result_type  # noqa: F401
from minikeras.ops.keras_signatures import *  # noqa: F401,F403  (Keras's parameter names win)
from minikeras.ops import _tensor_methods
# Keras's namespaces (last: every op exists by now). ``ops.array`` is the function
# (the array family stays importable as ``minikeras.ops.array.<module>``), and
# ``ops.nn.softmax``/``ops.nn.conv`` are functions too (see nn/_keras_namespace.py).
from minikeras.ops import image, linalg, numpy  # noqa: F401,E402
from minikeras.ops.creation_more import array  # noqa: F401,E402
from minikeras.ops.nn import _keras_namespace
from minikeras.ops import _entry

# Last of all, when every op exists: each public op names itself in the argument errors under it.
_entry.wrap_public_ops(_sys.modules[__name__])
_entry.wrap_public_ops(image)  # keras.ops.image's functions, which are not ops.* names
_keras_namespace.bind()
_tensor_methods.install()
