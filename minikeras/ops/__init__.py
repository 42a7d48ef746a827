"""Differentiable ops (the functional API), one family per module.

Every op takes Tensors (or numbers/arrays as constants) and returns Tensors;
the natural ones are also Tensor methods and operators (``x.sum()``,
``a @ b``).
"""
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
from minikeras.ops import _tensor_methods

_tensor_methods.install()
