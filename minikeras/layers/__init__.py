"""keras.layers: Keras's layers, in Keras's family folders.

The layer engine sits at the top of this package (``base.py``'s Layer, ``input.py``'s
KerasTensor and symbolic calls, ``input_spec.py``, naming, weights, serialization); the layers sit in
family folders as Keras has them: ``core/``, ``activations/``, ``convolutional/``, ``pooling/``,
``normalization/``, ``rnn/``, ``attention/``, ``merging/``, ``reshaping/``, ``regularization/``,
``preprocessing/`` (with ``preprocessing/image_preprocessing/``).

``import minikeras.layers`` loads the engine only. Every public name is listed below with the
module that defines it, and that module loads the first time the name is asked for (PEP 562's
module ``__getattr__``): ``from minikeras.layers import Dense``, ``minikeras.layers.Dense``, and a
config naming ``"Dense"`` when it is loaded (``base.get_layer_class`` looks the name up and, on a
miss, has ``_import_module_defining`` load its module).
"""
import importlib

from minikeras.layers.base import Layer
from minikeras.layers.input_spec import InputSpec

# module (under minikeras.layers) -> the public names it defines
_EXPORTS = {
    "input": ("KerasTensor",),
    "serialization": ("deserialize", "serialize"),
    # core/
    "core.dense": ("Dense",),
    "core.einsum_dense": ("EinsumDense",),
    "core.embedding": ("Embedding",),
    "core.identity": ("Identity",),
    "core.input_layer": ("Input", "InputLayer"),
    "core.lambda_layer": ("Lambda",),
    "core.masking": ("Masking",),
    "core.reversible_embedding": ("ReversibleEmbedding",),
    "core.wrapper": ("Wrapper",),
    # activations/
    "activations.activation": ("Activation",),
    "activations.elu": ("ELU",),
    "activations.leaky_relu": ("LeakyReLU",),
    "activations.prelu": ("PReLU",),
    "activations.relu": ("ReLU",),
    "activations.softmax": ("Softmax",),
    # convolutional/
    "convolutional.conv1d": ("Conv1D", "Convolution1D"),
    "convolutional.conv1d_transpose": ("Conv1DTranspose", "Convolution1DTranspose"),
    "convolutional.conv2d": ("Conv2D", "Convolution2D"),
    "convolutional.conv2d_transpose": ("Conv2DTranspose", "Convolution2DTranspose"),
    "convolutional.conv3d": ("Conv3D", "Convolution3D"),
    "convolutional.conv3d_transpose": ("Conv3DTranspose", "Convolution3DTranspose"),
    "convolutional.depthwise_conv1d": ("DepthwiseConv1D",),
    "convolutional.depthwise_conv2d": ("DepthwiseConv2D",),
    "convolutional.separable_conv1d": ("SeparableConv1D", "SeparableConvolution1D"),
    "convolutional.separable_conv2d": ("SeparableConv2D", "SeparableConvolution2D"),
    # pooling/
    "pooling.adaptive_average_pooling1d": ("AdaptiveAveragePooling1D",),
    "pooling.adaptive_average_pooling2d": ("AdaptiveAveragePooling2D",),
    "pooling.adaptive_average_pooling3d": ("AdaptiveAveragePooling3D",),
    "pooling.adaptive_max_pooling1d": ("AdaptiveMaxPooling1D",),
    "pooling.adaptive_max_pooling2d": ("AdaptiveMaxPooling2D",),
    "pooling.adaptive_max_pooling3d": ("AdaptiveMaxPooling3D",),
    "pooling.average_pooling1d": ("AveragePooling1D", "AvgPool1D"),
    "pooling.average_pooling2d": ("AveragePooling2D", "AvgPool2D"),
    "pooling.average_pooling3d": ("AveragePooling3D", "AvgPool3D"),
    "pooling.global_average_pooling1d": ("GlobalAveragePooling1D", "GlobalAvgPool1D"),
    "pooling.global_average_pooling2d": ("GlobalAveragePooling2D", "GlobalAvgPool2D"),
    "pooling.global_average_pooling3d": ("GlobalAveragePooling3D", "GlobalAvgPool3D"),
    "pooling.global_max_pooling1d": ("GlobalMaxPool1D", "GlobalMaxPooling1D"),
    "pooling.global_max_pooling2d": ("GlobalMaxPool2D", "GlobalMaxPooling2D"),
    "pooling.global_max_pooling3d": ("GlobalMaxPool3D", "GlobalMaxPooling3D"),
    "pooling.max_pooling1d": ("MaxPool1D", "MaxPooling1D"),
    "pooling.max_pooling2d": ("MaxPool2D", "MaxPooling2D"),
    "pooling.max_pooling3d": ("MaxPool3D", "MaxPooling3D"),
    # normalization/
    "normalization.batch_normalization": ("BatchNormalization",),
    "normalization.group_normalization": ("GroupNormalization",),
    "normalization.layer_normalization": ("LayerNormalization",),
    "normalization.rms_normalization": ("RMSNormalization",),
    "normalization.spectral_normalization": ("SpectralNormalization",),
    "normalization.unit_normalization": ("UnitNormalization",),
    # rnn/
    "rnn.bidirectional": ("Bidirectional",),
    "rnn.conv_lstm1d": ("ConvLSTM1D",),
    "rnn.conv_lstm2d": ("ConvLSTM2D",),
    "rnn.conv_lstm3d": ("ConvLSTM3D",),
    "rnn.gru": ("GRU",),
    "rnn.lstm": ("LSTM",),
    "rnn.rnn": ("RNN",),
    "rnn.rnn_cells": ("GRUCell", "LSTMCell", "SimpleRNNCell"),
    "rnn.simple_rnn": ("SimpleRNN",),
    "rnn.stacked_rnn_cells": ("StackedRNNCells",),
    "rnn.time_distributed": ("TimeDistributed",),
    # attention/
    "attention.additive_attention": ("AdditiveAttention",),
    "attention.attention": ("Attention",),
    "attention.grouped_query_attention": ("GroupQueryAttention", "GroupedQueryAttention"),
    "attention.multi_head_attention": ("MultiHeadAttention",),
    # merging/
    "merging.add": ("Add", "add"),
    "merging.average": ("Average", "average"),
    "merging.concatenate": ("Concatenate", "concatenate"),
    "merging.dot": ("Dot", "dot"),
    "merging.maximum": ("Maximum", "maximum"),
    "merging.minimum": ("Minimum", "minimum"),
    "merging.multiply": ("Multiply", "multiply"),
    "merging.subtract": ("Subtract", "subtract"),
    # reshaping/
    "reshaping.cropping1d": ("Cropping1D",),
    "reshaping.cropping2d": ("Cropping2D",),
    "reshaping.cropping3d": ("Cropping3D",),
    "reshaping.flatten": ("Flatten",),
    "reshaping.permute": ("Permute",),
    "reshaping.repeat_vector": ("RepeatVector",),
    "reshaping.reshape": ("Reshape",),
    "reshaping.up_sampling1d": ("UpSampling1D",),
    "reshaping.up_sampling2d": ("UpSampling2D",),
    "reshaping.up_sampling3d": ("UpSampling3D",),
    "reshaping.zero_padding1d": ("ZeroPadding1D",),
    "reshaping.zero_padding2d": ("ZeroPadding2D",),
    "reshaping.zero_padding3d": ("ZeroPadding3D",),
    # regularization/
    "regularization.activity_regularization": ("ActivityRegularization",),
    "regularization.alpha_dropout": ("AlphaDropout",),
    "regularization.dropout": ("Dropout",),
    "regularization.gaussian_dropout": ("GaussianDropout",),
    "regularization.gaussian_noise": ("GaussianNoise",),
    "regularization.spatial_dropout": ("SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D"),
    # preprocessing/
    "preprocessing.category_encoding": ("CategoryEncoding",),
    "preprocessing.discretization": ("Discretization",),
    "preprocessing.hashed_crossing": ("HashedCrossing",),
    "preprocessing.hashing": ("Hashing",),
    "preprocessing.image_preprocessing.aug_mix": ("AugMix",),
    "preprocessing.image_preprocessing.auto_contrast": ("AutoContrast",),
    "preprocessing.image_preprocessing.center_crop": ("CenterCrop",),
    "preprocessing.image_preprocessing.clahe": ("ContrastLimitedAdaptiveHistogramEqualization",),
    "preprocessing.image_preprocessing.cut_mix": ("CutMix",),
    "preprocessing.image_preprocessing.equalization": ("Equalization",),
    "preprocessing.image_preprocessing.max_num_bounding_box": ("MaxNumBoundingBoxes",),
    "preprocessing.image_preprocessing.mix_up": ("MixUp",),
    "preprocessing.image_preprocessing.rand_augment": ("RandAugment",),
    "preprocessing.image_preprocessing.random_brightness": ("RandomBrightness",),
    "preprocessing.image_preprocessing.random_color_degeneration": ("RandomColorDegeneration",),
    "preprocessing.image_preprocessing.random_color_jitter": ("RandomColorJitter",),
    "preprocessing.image_preprocessing.random_contrast": ("RandomContrast",),
    "preprocessing.image_preprocessing.random_crop": ("RandomCrop",),
    "preprocessing.image_preprocessing.random_elastic_transform": ("RandomElasticTransform",),
    "preprocessing.image_preprocessing.random_erasing": ("RandomErasing",),
    "preprocessing.image_preprocessing.random_flip": ("RandomFlip",),
    "preprocessing.image_preprocessing.random_gaussian_blur": ("RandomGaussianBlur",),
    "preprocessing.image_preprocessing.random_grayscale": ("RandomGrayscale",),
    "preprocessing.image_preprocessing.random_hue": ("RandomHue",),
    "preprocessing.image_preprocessing.random_invert": ("RandomInvert",),
    "preprocessing.image_preprocessing.random_perspective": ("RandomPerspective",),
    "preprocessing.image_preprocessing.random_posterization": ("RandomPosterization",),
    "preprocessing.image_preprocessing.random_rotation": ("RandomRotation",),
    "preprocessing.image_preprocessing.random_saturation": ("RandomSaturation",),
    "preprocessing.image_preprocessing.random_sharpness": ("RandomSharpness",),
    "preprocessing.image_preprocessing.random_shear": ("RandomShear",),
    "preprocessing.image_preprocessing.random_translation": ("RandomTranslation",),
    "preprocessing.image_preprocessing.random_zoom": ("RandomZoom",),
    "preprocessing.image_preprocessing.resizing": ("Resizing",),
    "preprocessing.image_preprocessing.solarization": ("Solarization",),
    "preprocessing.index_lookup": ("IntegerLookup", "StringLookup"),
    "preprocessing.mel_spectrogram": ("MelSpectrogram",),
    "preprocessing.normalization": ("Normalization",),
    "preprocessing.pipeline": ("Pipeline",),
    "preprocessing.rescaling": ("Rescaling",),
    "preprocessing.stft_spectrogram": ("STFTSpectrogram",),
    "preprocessing.text_vectorization": ("TextVectorization",),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}
# Layer classes that are not public names but that a config may name, as it could when every module
# was loaded eagerly: the graph's arithmetic nodes, and the families' base classes.
_CONFIG_ONLY = {
    "_ElementwiseActivation": "activations.elementwise_activation", "_Conv": "convolutional.base_conv",
    "_Merge": "merging.base_merge", "_AdaptivePooling": "pooling.base_adaptive_pooling",
    "_GlobalPooling": "pooling.base_global_pooling", "_Pooling": "pooling.base_pooling",
    "_Augmentation": "preprocessing.image_preprocessing.base_augmentation",
    "_ColorFactorLayer": "preprocessing.image_preprocessing.base_color_factor",
    "ImageAugmentation": "preprocessing.image_preprocessing.base_image_augmentation",
    "_Warp": "preprocessing.image_preprocessing.base_warp", "_IndexLookup": "preprocessing.index_lookup",
    "_RandomLayer": "regularization.random_layer", "_SpatialDropout": "regularization.spatial_dropout",
    "_Cropping": "reshaping.base_cropping", "_ZeroPadding": "reshaping.base_zero_padding", "_ConvLSTM": "rnn.conv_lstm",
    "RecurrentBase": "rnn.rnn_base", "SymbolicOperation": "symbolic_ops",
}

__all__ = sorted(["Layer", "InputSpec", *_MODULE_OF])


def __getattr__(name):
    """Load the module that defines ``name`` (once) and return the name."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'minikeras.layers' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"minikeras.layers.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_MODULE_OF))


def _import_module_defining(name):
    """Import the module that defines the layer class ``name`` (a public name
    or a config-only one), so that it registers in ``base._LAYER_CLASSES``;
    nothing for a name no module here defines. ``base.layer_class_named``
    calls it when a config names a class not loaded yet."""
    module = _MODULE_OF.get(name) or _CONFIG_ONLY.get(name)
    if module is not None:
        importlib.import_module(f"minikeras.layers.{module}")
