"""``keras.utils.FeatureSpace``: one object that preprocesses and encodes a
dict of structured-data columns (floats, integer and string categories)
into one feature vector (or a dict of encoded features).

Each feature names a preprocessing layer (Normalization, Rescaling,
Discretization, IntegerLookup, StringLookup, or one's own) and an output
mode (``"float"``, ``"int"``, ``"one_hot"``: a multi-hot CategoryEncoding
sized by the preprocessor's vocabulary or bins). ``adapt`` fits every
preprocessor that learns state on its column; calling the FeatureSpace on a
dict of columns (or of single values) encodes them; ``get_inputs`` and
``get_encoded_features`` give the same computation as symbolic tensors, to
build a model that takes the raw columns. Inside a ``tf.data`` pipeline
(``dataset.map(lambda x, y: (feature_space(x), y))``, ``adapt`` on a
dataset of dicts) it runs on the host, as minikeras's other preprocessing
layers do there.

Not built: the hashed features (``string_hashed``, ``integer_hashed``) and
feature crosses, which need Keras's ``Hashing`` and ``HashedCrossing``
layers (FarmHash fingerprints), which minikeras does not have yet; asking
for them raises ``NotImplementedError``. ``save``/``load_model`` of a
FeatureSpace are not built either (its config round trips, unadapted, as
Keras's ``from_config`` does).
"""
import numpy

from minikeras.layers.base import Layer
from minikeras.layers.naming import unique_name
from minikeras.layers.serialization import deserialize, serialize
from minikeras.layers.tf_data import has_tf_tensors

__all__ = ["FeatureSpace"]

_NOT_BUILT = ("hashed features and feature crosses need Keras's Hashing and HashedCrossing layers (FarmHash "
              "fingerprints), which minikeras does not have yet; encode the column with "
              "FeatureSpace.string_categorical / integer_categorical instead.")
_FEATURE_MODULE = "keras.src.layers.preprocessing.feature_space"


class Feature:
    """A column's dtype, preprocessing layer and output mode.

    Args:
        dtype: the column's dtype (``"float32"``, ``"int32"``, ``"string"``).
        preprocessor: a layer (or its serialized config).
        output_mode: ``"int"``, ``"one_hot"`` or ``"float"``.
    """

    def __init__(self, dtype, preprocessor, output_mode):
        if output_mode not in {"int", "one_hot", "float"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'int', 'one_hot', 'float'}. "
                             f"Received: output_mode={output_mode}")
        self.dtype = dtype
        if isinstance(preprocessor, dict):
            preprocessor = deserialize(preprocessor)
        self.preprocessor = preprocessor
        self.output_mode = output_mode

    def get_config(self):
        return {"dtype": self.dtype, "preprocessor": serialize(self.preprocessor),
                "output_mode": self.output_mode}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class FeatureSpace(Layer):
    """Preprocess and encode structured data (Keras's ``FeatureSpace``).

    Args:
        features: ``{column name: feature}``, a feature being a ``Feature``
            (from the class methods below, or ``FeatureSpace.feature``) or
            a name: ``"float"``, ``"float_rescaled"``, ``"float_normalized"``,
            ``"float_discretized"``, ``"integer_categorical"``,
            ``"string_categorical"``.
        output_mode: ``"concat"`` (one float vector per sample, the features
            in sorted name order) or ``"dict"``.
        crosses, crossing_dim, hashing_dim: Keras's; crosses are not built.
        num_discretization_bins: the bins of ``"float_discretized"``.
        name: the layer's name.

    Example:
        >>> space = FeatureSpace({"age": "float_normalized", "city": "string_categorical"})
        >>> space.adapt({"age": ages, "city": cities})
        >>> encoded = space({"age": ages, "city": cities})  # (samples, 1 + cities' vocabulary)
    """

    _passes_text = True

    @classmethod
    def cross(cls, feature_names, crossing_dim, output_mode="one_hot"):
        raise NotImplementedError(f"FeatureSpace.cross: {_NOT_BUILT}")

    @classmethod
    def feature(cls, dtype, preprocessor, output_mode):
        return Feature(dtype, preprocessor, output_mode)

    @classmethod
    def float(cls, name=None):
        from minikeras.layers.identity_alpha_dropout import Identity

        name = name or unique_name("float")
        return Feature("float32", Identity(dtype="float32", name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_rescaled(cls, scale=1.0, offset=0.0, name=None):
        from minikeras.layers.image_preprocessing import Rescaling

        name = name or unique_name("float_rescaled")
        return Feature("float32", Rescaling(scale=scale, offset=offset, name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_normalized(cls, name=None):
        from minikeras.layers.preprocessing_normalization import Normalization

        name = name or unique_name("float_normalized")
        return Feature("float32", Normalization(axis=-1, name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_discretized(cls, num_bins, bin_boundaries=None, output_mode="one_hot", name=None):
        from minikeras.layers.categorical_preprocessing import Discretization

        name = name or unique_name("float_discretized")
        preprocessor = Discretization(num_bins=num_bins, bin_boundaries=bin_boundaries, name=f"{name}_preprocessor")
        return Feature("float32", preprocessor, output_mode)

    @classmethod
    def integer_categorical(cls, max_tokens=None, num_oov_indices=1, output_mode="one_hot", name=None):
        from minikeras.layers.index_lookup import IntegerLookup

        name = name or unique_name("integer_categorical")
        preprocessor = IntegerLookup(name=f"{name}_preprocessor", max_tokens=max_tokens,
                                     num_oov_indices=num_oov_indices)
        return Feature("int32", preprocessor, output_mode)

    @classmethod
    def string_categorical(cls, max_tokens=None, num_oov_indices=1, output_mode="one_hot", name=None):
        from minikeras.layers.index_lookup import StringLookup

        name = name or unique_name("string_categorical")
        preprocessor = StringLookup(name=f"{name}_preprocessor", max_tokens=max_tokens,
                                    num_oov_indices=num_oov_indices)
        return Feature("string", preprocessor, output_mode)

    @classmethod
    def string_hashed(cls, num_bins, output_mode="one_hot", name=None):
        raise NotImplementedError(f"FeatureSpace.string_hashed: {_NOT_BUILT}")

    @classmethod
    def integer_hashed(cls, num_bins, output_mode="one_hot", name=None):
        raise NotImplementedError(f"FeatureSpace.integer_hashed: {_NOT_BUILT}")

    def __init__(self, features, output_mode="concat", crosses=None, crossing_dim=32, hashing_dim=32,
                 num_discretization_bins=32, name=None):
        super().__init__(name=name)
        if not features:
            raise ValueError("The `features` argument cannot be None or empty.")
        if crosses:
            raise NotImplementedError(f"FeatureSpace(crosses=...): {_NOT_BUILT}")
        if output_mode not in {"dict", "concat"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'dict', 'concat'}. "
                             f"Received: output_mode={output_mode}")
        self.crossing_dim, self.hashing_dim = crossing_dim, hashing_dim
        self.num_discretization_bins = num_discretization_bins
        self.crosses = []
        self.features = {name: self._standardize_feature(name, value) for name, value in features.items()}
        self.output_mode = output_mode
        self.preprocessors = {name: feature.preprocessor for name, feature in self.features.items()}
        self.inputs = None
        self.encoded_features = None
        self.one_hot_encoders = {}
        self.concat = None
        self._is_adapted = False
        self._sublayers_built = False

    def _standardize_feature(self, name, feature):
        if isinstance(feature, Feature):
            return feature
        if isinstance(feature, dict):
            return Feature.from_config(feature.get("config", feature))
        makers = {"float": lambda: self.float(name=name), "float_normalized": lambda: self.float_normalized(name=name),
                  "float_rescaled": lambda: self.float_rescaled(name=name),
                  "float_discretized": lambda: self.float_discretized(self.num_discretization_bins, name=name),
                  "integer_categorical": lambda: self.integer_categorical(name=name),
                  "string_categorical": lambda: self.string_categorical(name=name),
                  "integer_hashed": lambda: self.integer_hashed(self.hashing_dim, name=name),
                  "string_hashed": lambda: self.string_hashed(self.hashing_dim, name=name)}
        if feature not in makers:
            raise ValueError(f"Invalid feature type: {feature}")
        return makers[feature]()

    # ------------------------------------------------------------ adapt
    def _list_adaptable_preprocessors(self):
        """The columns whose preprocessor learns state (a Normalization with a
        given mean, or a TextVectorization with a vocabulary, does not)."""
        from minikeras.layers.preprocessing_normalization import Normalization

        names = []
        for name in self.features:
            preprocessor = self.preprocessors[name]
            if isinstance(preprocessor, Normalization) and preprocessor.input_mean is not None:
                continue
            if getattr(preprocessor, "_has_input_vocabulary", False):
                continue
            if hasattr(preprocessor, "adapt"):
                names.append(name)
        return names

    def adapt(self, dataset, verbose=1):
        """Fit the preprocessors that learn state (vocabularies, means,
        bins) on their columns of ``dataset``: a dict of arrays or lists, or
        an iterable of such dicts (batches, e.g. a ``tf.data.Dataset``).
        ``verbose`` is Keras's argument; minikeras adapts each column in
        one pass and prints nothing."""
        if isinstance(dataset, dict):
            batches = [dataset]
        elif hasattr(dataset, "__iter__") and not isinstance(dataset, (str, bytes)):
            batches = list(dataset)
        else:
            raise ValueError("`adapt()` can only be called on a tf.data.Dataset or a dict of arrays/lists. Received "
                             f"instead: {dataset} (of type {type(dataset)})")
        for name in self._list_adaptable_preprocessors():
            columns = []
            for batch in batches:
                if not isinstance(batch, dict) or name not in batch:
                    raise ValueError(f"FeatureSpace.adapt: every batch must be a dict holding the column {name!r}; "
                                     f"received {type(batch).__name__}.")
                columns.append(_column(batch[name], self.features[name].dtype))
            self.preprocessors[name].adapt(numpy.concatenate(columns, axis=0))
        self._is_adapted = True
        self.get_encoded_features()
        self.built = self._sublayers_built = True

    def _check_if_adapted(self):
        if not self._is_adapted:
            if self._list_adaptable_preprocessors():
                raise ValueError("You need to call `.adapt(dataset)` on the FeatureSpace before you can start using "
                                 "it.")
            self._is_adapted = True

    # ------------------------------------------------------------ encode
    def get_inputs(self):
        """``{column name: Input(shape=(1,), dtype=...)}``, for a model on the raw columns."""
        self._check_if_built()
        return self.inputs

    def get_encoded_features(self):
        """The encoded features of ``get_inputs()`` as symbolic tensors."""
        from minikeras.layers.input import Input

        self._check_if_adapted()
        if self.encoded_features is None:
            self.inputs = {name: Input(shape=(1,), dtype=feature.dtype, name=name)
                           for name, feature in self.features.items()}
            self.encoded_features = self._merge(self._preprocess(self.inputs))
        return self.encoded_features

    def _check_if_built(self):
        if not self._sublayers_built:
            self._check_if_adapted()
            self.get_encoded_features()
            self._sublayers_built = True

    def _preprocess(self, columns):
        return {name: self.preprocessors[name](columns[name]) for name in columns}

    def _merge(self, preprocessed):
        """One-hot encode where asked, then concatenate (sorted by name) or return the dict."""
        from minikeras.layers.categorical_preprocessing import CategoryEncoding
        from minikeras.layers.merge import Concatenate

        names = sorted(preprocessed)
        encoded = {}
        for name in names:
            feature, value = self.features[name], preprocessed[name]
            if feature.output_mode == "one_hot":
                if name not in self.one_hot_encoders:
                    dtype = _dtype_name(value)
                    if not dtype.startswith("int"):
                        raise ValueError(f"Feature '{name}' has `output_mode='one_hot'`. Thus its preprocessor should "
                                         f"return an integer dtype. Instead it returns a {dtype} dtype.")
                    self.one_hot_encoders[name] = CategoryEncoding(num_tokens=self._cardinality(name),
                                                                   output_mode="multi_hot")
                value = self.one_hot_encoders[name](value)
            encoded[name] = value
        if self.output_mode == "dict":
            return encoded
        for name in names:
            dtype = _dtype_name(encoded[name])
            if dtype.startswith("int") or dtype.startswith("uint") or dtype == "string":
                raise ValueError(f"Cannot concatenate features because feature '{name}' has not been encoded (it has "
                                 f"dtype {dtype}). Consider using `output_mode='dict'`.")
        if self.concat is None:
            self.concat = Concatenate(axis=-1)
        return self.concat([encoded[name] for name in names])

    def _cardinality(self, name):
        from minikeras.layers.categorical_preprocessing import CategoryEncoding, Discretization
        from minikeras.layers.index_lookup import IntegerLookup, StringLookup

        preprocessor = self.preprocessors[name]
        if isinstance(preprocessor, (IntegerLookup, StringLookup)):
            return preprocessor.vocabulary_size()
        if isinstance(preprocessor, CategoryEncoding):
            return preprocessor.num_tokens
        if isinstance(preprocessor, Discretization):
            if preprocessor.num_bins is not None:
                return preprocessor.num_bins
            return len(preprocessor.bin_boundaries) + 1
        raise ValueError(f"Feature '{name}' has `output_mode='one_hot'`. However it isn't a standard feature and the "
                         "dimensionality of its output space is not known, thus it cannot be one-hot encoded. Try "
                         "using `output_mode='int'`.")

    def __call__(self, data):
        """Encode ``data``: ``{column name: values}`` (a batch of values per
        column, or one value each, which gives one unbatched sample)."""
        self._check_if_built()
        if not isinstance(data, dict):
            raise ValueError(f"A FeatureSpace can only be called with a dict. Received: data={data} (of type "
                             f"{type(data)}")
        if has_tf_tensors(list(data.values())) and not _executing_eagerly():
            return self._call_in_tf_graph(data)
        missing = [name for name in self.features if name not in data]
        if missing:
            raise ValueError(f"FeatureSpace {self.name!r}: the data has no column(s) {missing}; expected "
                             f"{sorted(self.features)}.")
        rebatched = any(numpy.ndim(_host(data[name])) == 0 for name in self.features)
        columns = {name: _column(data[name], feature.dtype) for name, feature in self.features.items()}
        merged = self._merge(self._preprocess(columns))
        if rebatched:
            if self.output_mode == "concat":
                return merged[0]
            return {name: value[0] if value.ndim == 2 and value.shape[0] == 1 else value
                    for name, value in merged.items()}
        return merged

    def _call_in_tf_graph(self, data):
        """Inside ``dataset.map`` (a traced TensorFlow graph): the encoding runs
        on the host through ``tf.numpy_function``, with the output dtypes and
        static shapes of ``get_encoded_features()``, as Keras's
        ``dataset.map(lambda x, y: (feature_space(x), y))`` expects."""
        import tensorflow as tf  # the data are TensorFlow tensors, so TensorFlow is loaded

        names = sorted(self.features)
        encoded = self.get_encoded_features()
        symbolic = [encoded[name] for name in names] if self.output_mode == "dict" else [encoded]
        unbatched = all(len(data[name].shape) == 0 for name in names)

        def compute(*arrays):
            result = self(dict(zip(names, arrays)))
            results = [result[name] for name in names] if self.output_mode == "dict" else [result]
            return [numpy.asarray(value.numpy()) for value in results]

        outputs = tf.numpy_function(compute, [data[name] for name in names],
                                    [tf.as_dtype(tensor.dtype) for tensor in symbolic], stateful=True)
        for output, tensor in zip(outputs, symbolic):
            output.set_shape(tensor.shape[1:] if unbatched else (None,) + tuple(tensor.shape[1:]))
        return dict(zip(names, outputs)) if self.output_mode == "dict" else outputs[0]

    # ------------------------------------------------------------ config
    def get_config(self):
        features = {name: {"module": _FEATURE_MODULE, "class_name": "Feature", "config": feature.get_config(),
                           "registered_name": "Feature"} for name, feature in self.features.items()}
        return {"features": features, "output_mode": self.output_mode, "crosses": [],
                "crossing_dim": self.crossing_dim, "hashing_dim": self.hashing_dim,
                "num_discretization_bins": self.num_discretization_bins}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _host(value):
    """A column as a NumPy array (Tensors and tf tensors copied to the host)."""
    if hasattr(value, "numpy") and not isinstance(value, numpy.ndarray):
        value = value.numpy()
    return numpy.asarray(value)


def _column(value, dtype):
    """A column as a ``(samples, 1)`` array of the feature's dtype (one value: one sample)."""
    array = _host(value)
    if array.ndim == 0:
        array = array.reshape(1, 1)
    elif array.ndim == 1:
        array = array[:, None]
    if dtype == "string":
        if array.dtype.kind in "OS":  # bytes (TensorFlow's strings) as text
            decoded = [value.decode("utf-8") if isinstance(value, bytes) else str(value) for value in array.ravel()]
            return numpy.array(decoded, dtype=str).reshape(array.shape)
        return array
    return array.astype(dtype)


def _executing_eagerly():
    import tensorflow as tf  # only asked about TensorFlow tensors, so TensorFlow is loaded

    return tf.executing_eagerly()


def _dtype_name(value):
    dtype = value.dtype
    return dtype if isinstance(dtype, str) else numpy.dtype(dtype).name
