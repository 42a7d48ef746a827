"""Keras layers. Each family lives in its own module."""
from minikeras.layers.base import Layer  # noqa: F401
from minikeras.layers.input import Input, InputLayer, KerasTensor  # noqa: F401
from minikeras.layers.input_spec import InputSpec  # noqa: F401
from minikeras.layers.core import *  # noqa: F401,F403
from minikeras.layers.activation_layers import *  # noqa: F401,F403
from minikeras.layers.masking import *  # noqa: F401,F403
from minikeras.layers.image_preprocessing import *  # noqa: F401,F403
from minikeras.layers.preprocessing_normalization import *  # noqa: F401,F403
from minikeras.layers.augmentation import *  # noqa: F401,F403
from minikeras.layers.index_lookup import *  # noqa: F401,F403
from minikeras.layers.text_vectorization import *  # noqa: F401,F403
from minikeras.layers.attention import *  # noqa: F401,F403
from minikeras.layers.multi_head_attention import *  # noqa: F401,F403
from minikeras.layers.regularization import *  # noqa: F401,F403
from minikeras.layers.embedding import *  # noqa: F401,F403
from minikeras.layers.merge import *  # noqa: F401,F403
from minikeras.layers.normalization import *  # noqa: F401,F403
from minikeras.layers.group_normalization import *  # noqa: F401,F403
from minikeras.layers.conv import *  # noqa: F401,F403
from minikeras.layers.pooling import *  # noqa: F401,F403
from minikeras.layers.conv3d import *  # noqa: F401,F403
from minikeras.layers.reshaping import *  # noqa: F401,F403
from minikeras.layers.recurrent import *  # noqa: F401,F403
from minikeras.layers.wrappers import *  # noqa: F401,F403
from minikeras.layers.rms_unit_normalization import *  # noqa: F401,F403
from minikeras.layers.identity_alpha_dropout import *  # noqa: F401,F403
from minikeras.layers.volumetric import *  # noqa: F401,F403
from minikeras.layers.conv1d_variants import *  # noqa: F401,F403
from minikeras.layers.serialization import deserialize, serialize  # noqa: F401
from minikeras.layers.einsum_dense import *  # noqa: F401,F403
from minikeras.layers.grouped_query_attention import *  # noqa: F401,F403
from minikeras.layers.additive_attention import *  # noqa: F401,F403
from minikeras.layers.categorical_preprocessing import *  # noqa: F401,F403
from minikeras.layers.adaptive_pooling import *  # noqa: F401,F403
from minikeras.layers.spectral_normalization import *  # noqa: F401,F403
from minikeras.layers.reversible_embedding import *  # noqa: F401,F403
from minikeras.layers.pipeline import *  # noqa: F401,F403
from minikeras.layers.color_augmentation import *  # noqa: F401,F403
from minikeras.layers.stacked_rnn_cells import *  # noqa: F401,F403
from minikeras.layers.color_jitter import *  # noqa: F401,F403
from minikeras.layers.mixing_augmentation import *  # noqa: F401,F403
from minikeras.layers.spatial_augmentation import *  # noqa: F401,F403
from minikeras.layers.equalization import *  # noqa: F401,F403
from minikeras.layers.policy_augmentation import *  # noqa: F401,F403
from minikeras.layers.warp_augmentation import *  # noqa: F401,F403
from minikeras.layers.clahe import *  # noqa: F401,F403
from minikeras.layers.bounding_boxes import *  # noqa: F401,F403

from minikeras.layers.conv_lstm import *  # noqa: F401,F403
from minikeras.layers.conv3d_transpose import *  # noqa: F401,F403
from minikeras.layers.hashing import *  # noqa: F401,F403
from minikeras.layers.spectrograms import *  # noqa: F401,F403

from minikeras.layers import symbolic_ops as _symbolic_ops  # noqa: E402,F401  (registers SymbolicOperation for loading)
