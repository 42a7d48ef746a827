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

Hashed features (``string_hashed``, ``integer_hashed``: Keras's ``Hashing``
layer, FarmHash bins) and feature crosses (``crosses=``: ``HashedCrossing``
of the columns' *preprocessed* values, e.g. lookup indices) give Keras's
bins; crosses follow the features in the concatenated output, sorted by
their names (``"city_X_rooms"``). ``save`` writes Keras's ``.keras`` layout
(saving/feature_space_io.py), which ``models.load_model`` reads back.
"""
import numpy

from minikeras.layers.base import Layer
from minikeras.layers.naming import unique_name
from minikeras.layers.preprocessing.feature_space_specs import (Cross, Feature, cardinality, column, deserialize_spec,
                                                                dtype_name, executing_eagerly, host, serialize_spec)
from minikeras.layers.tf_data import has_tf_tensors

__all__ = ["FeatureSpace"]


class FeatureSpace(Layer):
    """Preprocess and encode structured data (Keras's ``FeatureSpace``).

    Args:
        features: ``{column name: feature}``, a feature being a ``Feature``
            (from the class methods below, or ``FeatureSpace.feature``) or
            a name: ``"float"``, ``"float_rescaled"``, ``"float_normalized"``,
            ``"float_discretized"``, ``"integer_categorical"``,
            ``"string_categorical"``, ``"integer_hashed"``, ``"string_hashed"``.
        output_mode: ``"concat"`` (one float vector per sample: the features
            in sorted name order, then the crosses in sorted name order) or
            ``"dict"`` (crosses keyed ``"a_X_b"``).
        crosses: ``FeatureSpace.cross(...)`` objects, or tuples of feature
            names crossed into ``crossing_dim`` bins.
        crossing_dim: the bins of a cross given as a tuple.
        hashing_dim: the bins of ``"integer_hashed"``/``"string_hashed"``.
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
        return Cross(feature_names, crossing_dim, output_mode=output_mode)

    @classmethod
    def feature(cls, dtype, preprocessor, output_mode):
        return Feature(dtype, preprocessor, output_mode)

    @classmethod
    def float(cls, name=None):
        from minikeras.layers.core.identity import Identity

        name = name or unique_name("float")
        return Feature("float32", Identity(dtype="float32", name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_rescaled(cls, scale=1.0, offset=0.0, name=None):
        from minikeras.layers.preprocessing.rescaling import Rescaling

        name = name or unique_name("float_rescaled")
        return Feature("float32", Rescaling(scale=scale, offset=offset, name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_normalized(cls, name=None):
        from minikeras.layers.preprocessing.normalization import Normalization

        name = name or unique_name("float_normalized")
        return Feature("float32", Normalization(axis=-1, name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_discretized(cls, num_bins, bin_boundaries=None, output_mode="one_hot", name=None):
        from minikeras.layers.preprocessing.discretization import Discretization

        name = name or unique_name("float_discretized")
        preprocessor = Discretization(num_bins=num_bins, bin_boundaries=bin_boundaries, name=f"{name}_preprocessor")
        return Feature("float32", preprocessor, output_mode)

    @classmethod
    def integer_categorical(cls, max_tokens=None, num_oov_indices=1, output_mode="one_hot", name=None):
        from minikeras.layers.preprocessing.index_lookup import IntegerLookup

        name = name or unique_name("integer_categorical")
        preprocessor = IntegerLookup(name=f"{name}_preprocessor", max_tokens=max_tokens,
                                     num_oov_indices=num_oov_indices)
        return Feature("int32", preprocessor, output_mode)

    @classmethod
    def string_categorical(cls, max_tokens=None, num_oov_indices=1, output_mode="one_hot", name=None):
        from minikeras.layers.preprocessing.index_lookup import StringLookup

        name = name or unique_name("string_categorical")
        preprocessor = StringLookup(name=f"{name}_preprocessor", max_tokens=max_tokens,
                                    num_oov_indices=num_oov_indices)
        return Feature("string", preprocessor, output_mode)

    @classmethod
    def string_hashed(cls, num_bins, output_mode="one_hot", name=None):
        from minikeras.layers.preprocessing.hashing import Hashing

        name = name or unique_name("string_hashed")
        return Feature("string", Hashing(name=f"{name}_preprocessor", num_bins=num_bins), output_mode)

    @classmethod
    def integer_hashed(cls, num_bins, output_mode="one_hot", name=None):
        from minikeras.layers.preprocessing.hashing import Hashing

        name = name or unique_name("integer_hashed")
        return Feature("int32", Hashing(name=f"{name}_preprocessor", num_bins=num_bins), output_mode)

    def __init__(self, features, output_mode="concat", crosses=None, crossing_dim=32, hashing_dim=32,
                 num_discretization_bins=32, name=None):
        super().__init__(name=name)
        if not features:
            raise ValueError("The `features` argument cannot be None or empty.")
        self.crossing_dim, self.hashing_dim = crossing_dim, hashing_dim
        self.num_discretization_bins = num_discretization_bins
        self.features = {name: self._standardize_feature(name, value) for name, value in features.items()}
        self.crosses = [self._standardize_cross(cross) for cross in crosses or []]
        self.crosses_by_name = {cross.name: cross for cross in self.crosses}
        if output_mode not in {"dict", "concat"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'dict', 'concat'}. "
                             f"Received: output_mode={output_mode}")
        self.output_mode = output_mode
        self.preprocessors = {name: feature.preprocessor for name, feature in self.features.items()}
        self.crossers = {cross.name: _crosser(cross) for cross in self.crosses}
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
            return deserialize_spec(feature, Feature)
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

    def _standardize_cross(self, cross):
        """A ``Cross`` (or its config, or a tuple of names crossed into ``crossing_dim`` bins), checked
        against the features."""
        if isinstance(cross, (Cross, dict)):
            cross = deserialize_spec(cross, Cross)
        else:
            if not self.crossing_dim:
                raise ValueError("When specifying `crosses`, the argument `crossing_dim` (dimensionality of the "
                                 "crossing space) should be specified as well.")
            cross = Cross(cross, crossing_dim=self.crossing_dim)
        unknown = [name for name in cross.feature_names if name not in self.features]
        if unknown:
            raise ValueError("All features referenced in the `crosses` argument should be present in the `features` "
                             f"dict. Received unknown features: {unknown} in cross {cross.feature_names}; the "
                             f"features are {sorted(self.features)}.")
        return cross

    # ------------------------------------------------------------ adapt
    def _list_adaptable_preprocessors(self):
        """The columns whose preprocessor learns state (a Normalization with a
        given mean, or a TextVectorization with a vocabulary, does not)."""
        from minikeras.layers.preprocessing.normalization import Normalization

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
                columns.append(column(batch[name], self.features[name].dtype))
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
        from minikeras.layers.core.input_layer import Input

        self._check_if_adapted()
        if self.encoded_features is None:
            self.inputs = {name: Input(shape=(1,), dtype=feature.dtype, name=name)
                           for name, feature in self.features.items()}
            self.encoded_features = self._encode(self.inputs)
        return self.encoded_features

    def _check_if_built(self):
        if not self._sublayers_built:
            self._check_if_adapted()
            self.get_encoded_features()
            self._sublayers_built = True

    def _encode(self, columns):
        """Preprocess each column, cross the preprocessed values (lookup indices, bins), then merge."""
        preprocessed = {name: self.preprocessors[name](columns[name]) for name in columns}
        crossed = {cross.name: self.crossers[cross.name]([preprocessed[name] for name in cross.feature_names])
                   for cross in self.crosses}
        return self._merge(preprocessed, crossed)

    def _output_names(self):
        """The features sorted by name, then the crosses sorted by name: Keras's output order."""
        return sorted(self.features) + sorted(self.crosses_by_name)

    def _merge(self, preprocessed, crossed):
        """One-hot encode where asked, then concatenate (in ``_output_names`` order) or return the dict."""
        from minikeras.layers.preprocessing.category_encoding import CategoryEncoding
        from minikeras.layers.merging.concatenate import Concatenate

        names = self._output_names()
        encoded = {}
        for name in names:
            spec = self.features.get(name) or self.crosses_by_name[name]
            value = preprocessed[name] if name in preprocessed else crossed[name]
            if spec.output_mode == "one_hot":
                if name not in self.one_hot_encoders:
                    dtype = dtype_name(value)
                    if not dtype.startswith("int"):
                        raise ValueError(f"Feature '{name}' has `output_mode='one_hot'`. Thus its preprocessor should "
                                         f"return an integer dtype. Instead it returns a {dtype} dtype.")
                    layer = self.preprocessors.get(name) or self.crossers[name]
                    self.one_hot_encoders[name] = CategoryEncoding(num_tokens=cardinality(name, layer),
                                                                   output_mode="multi_hot")
                value = self.one_hot_encoders[name](value)
            encoded[name] = value
        if self.output_mode == "dict":
            return encoded
        for name in names:
            dtype = dtype_name(encoded[name])
            if dtype.startswith("int") or dtype.startswith("uint") or dtype == "string":
                raise ValueError(f"Cannot concatenate features because feature '{name}' has not been encoded (it has "
                                 f"dtype {dtype}). Consider using `output_mode='dict'`.")
        if self.concat is None:
            self.concat = Concatenate(axis=-1)
        return self.concat([encoded[name] for name in names])

    def __call__(self, data):
        """Encode ``data``: ``{column name: values}`` (a batch of values per
        column, or one value each, which gives one unbatched sample)."""
        self._check_if_built()
        if not isinstance(data, dict):
            raise ValueError(f"A FeatureSpace can only be called with a dict. Received: data={data} (of type "
                             f"{type(data)}")
        if has_tf_tensors(list(data.values())) and not executing_eagerly():
            return self._call_in_tf_graph(data)
        missing = [name for name in self.features if name not in data]
        if missing:
            raise ValueError(f"FeatureSpace {self.name!r}: the data has no column(s) {missing}; expected "
                             f"{sorted(self.features)}.")
        rebatched = any(numpy.ndim(host(data[name])) == 0 for name in self.features)
        columns = {name: column(data[name], feature.dtype) for name, feature in self.features.items()}
        merged = self._encode(columns)
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

        names, outputs_names = sorted(self.features), self._output_names()
        encoded = self.get_encoded_features()
        symbolic = [encoded[name] for name in outputs_names] if self.output_mode == "dict" else [encoded]
        unbatched = all(len(data[name].shape) == 0 for name in names)

        def compute(*arrays):
            result = self(dict(zip(names, arrays)))
            results = [result[name] for name in outputs_names] if self.output_mode == "dict" else [result]
            return [numpy.asarray(value.numpy()) for value in results]

        outputs = tf.numpy_function(compute, [data[name] for name in names],
                                    [tf.as_dtype(tensor.dtype) for tensor in symbolic], stateful=True)
        for output, tensor in zip(outputs, symbolic):
            output.set_shape(tensor.shape[1:] if unbatched else (None,) + tuple(tensor.shape[1:]))
        return dict(zip(outputs_names, outputs)) if self.output_mode == "dict" else outputs[0]

    # ------------------------------------------------------------ config
    def get_config(self):
        features = {name: serialize_spec(feature) for name, feature in self.features.items()}
        crosses = [serialize_spec(cross) for cross in self.crosses]
        return {"features": features, "output_mode": self.output_mode, "crosses": crosses,
                "crossing_dim": self.crossing_dim, "hashing_dim": self.hashing_dim,
                "num_discretization_bins": self.num_discretization_bins}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def get_build_config(self):
        """Keras's: each preprocessor's build config (its input shape, once built), by feature name."""
        configs = {}
        for name, preprocessor in self.preprocessors.items():
            shape = getattr(preprocessor, "_build_input_shape", None)
            shape = shape if shape is not None else (None, 1) if preprocessor.built else None  # built by adapt()
            configs[name] = {} if shape is None else {"input_shape": list(shape)}
        return configs

    def build_from_config(self, config):
        """Create the preprocessors' weights from ``get_build_config()``'s
        output (their values are loaded next), as Keras does when it loads a
        saved FeatureSpace."""
        for name, layer_config in config.items():
            preprocessor = self.preprocessors.get(name)
            shape = layer_config.get("input_shape") if isinstance(layer_config, dict) else None
            if preprocessor is not None and not preprocessor.built and shape is not None:
                preprocessor.build(tuple(shape))
                preprocessor._build_input_shape, preprocessor.built = tuple(shape), True
        self._is_adapted = True

    def save(self, filepath):
        """Write the FeatureSpace (its preprocessors' state included) to a
        ``.keras`` file in Keras's layout; ``models.load_model(filepath)``
        returns it, adapted (and so does ``keras.models.load_model``)."""
        from minikeras.saving.feature_space_io import save_feature_space

        save_feature_space(self, filepath)


def _crosser(cross):
    from minikeras.layers.preprocessing.hashed_crossing import HashedCrossing

    return HashedCrossing(cross.crossing_dim, name=cross.name)
