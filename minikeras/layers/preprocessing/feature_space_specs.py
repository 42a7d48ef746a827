"""What a ``FeatureSpace`` is made of: ``Feature`` (a column's dtype,
preprocessing layer and output mode) and ``Cross`` (columns hashed together
into ``crossing_dim`` bins), with Keras's config schema, and the helpers
that turn a column (a list, a NumPy array, a Tensor or a tf tensor) into
the ``(samples, 1)`` host array the preprocessors take.
"""
import numpy

from minikeras.layers.serialization import deserialize, serialize

__all__ = ["Cross", "Feature", "cardinality", "serialize_spec"]

FEATURE_MODULE = "keras.src.layers.preprocessing.feature_space"  # where Keras defines Feature and Cross


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


class Cross:
    """Columns crossed together: their preprocessed values hashed (Keras's
    ``HashedCrossing``) into ``crossing_dim`` bins, then one-hot encoded or
    kept as bin ids.

    Args:
        feature_names: the two crossed columns.
        crossing_dim: the number of bins.
        output_mode: ``"one_hot"`` (default) or ``"int"``.
    """

    def __init__(self, feature_names, crossing_dim, output_mode="one_hot"):
        if output_mode not in {"int", "one_hot"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'int', 'one_hot'}. "
                             f"Received: output_mode={output_mode}")
        if isinstance(feature_names, str) or not hasattr(feature_names, "__iter__"):
            raise ValueError("A feature cross needs a tuple of feature names, e.g. ('city', 'rooms'). Received: "
                             f"feature_names={feature_names!r}")
        self.feature_names = tuple(feature_names)
        # Keras's HashedCrossing takes exactly two inputs when a FeatureSpace builds its graph.
        if len(self.feature_names) != 2 or not all(isinstance(name, str) for name in self.feature_names):
            raise ValueError("A feature cross crosses exactly two features (Keras's HashedCrossing takes two "
                             f"inputs): give two feature names. Received: feature_names={feature_names!r}")
        if isinstance(crossing_dim, bool) or not isinstance(crossing_dim, (int, numpy.integer)) or crossing_dim <= 0:
            raise ValueError("The `crossing_dim` of a feature cross (the number of bins of the crossing space) must "
                             f"be a positive int. Received: crossing_dim={crossing_dim!r} for cross {feature_names!r}")
        self.crossing_dim = int(crossing_dim)
        self.output_mode = output_mode

    @property
    def name(self):
        return "_X_".join(self.feature_names)

    def get_config(self):
        return {"feature_names": self.feature_names, "crossing_dim": self.crossing_dim,
                "output_mode": self.output_mode}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def serialize_spec(spec):
    """A Feature or Cross in Keras's ``{"module", "class_name", "config", "registered_name"}`` form."""
    name = type(spec).__name__
    return {"module": FEATURE_MODULE, "class_name": name, "config": spec.get_config(), "registered_name": name}


def deserialize_spec(value, cls):
    """A Feature or Cross from its serialized form (or its bare config)."""
    if isinstance(value, cls):
        return value
    if not isinstance(value, dict):
        raise ValueError(f"Expected a {cls.__name__} or its serialized config, received {value!r:.200}.")
    if "class_name" in value and value["class_name"] != cls.__name__:
        raise ValueError(f"Expected a serialized {cls.__name__}, received class_name={value['class_name']!r}.")
    return cls.from_config(dict(value.get("config", value)))


def cardinality(name, preprocessor):
    """How many values a preprocessor's integer output takes: the one-hot width of feature (or cross) ``name``."""
    from minikeras.layers.preprocessing.category_encoding import CategoryEncoding
    from minikeras.layers.preprocessing.discretization import Discretization
    from minikeras.layers.preprocessing.hashed_crossing import HashedCrossing
    from minikeras.layers.preprocessing.hashing import Hashing
    from minikeras.layers.preprocessing.index_lookup import IntegerLookup, StringLookup

    if isinstance(preprocessor, (Hashing, HashedCrossing)):
        return preprocessor.num_bins
    if isinstance(preprocessor, (IntegerLookup, StringLookup)):
        return preprocessor.vocabulary_size()
    if isinstance(preprocessor, CategoryEncoding):
        return preprocessor.num_tokens
    if isinstance(preprocessor, Discretization):
        if preprocessor.num_bins is not None:
            return preprocessor.num_bins
        return len(preprocessor.bin_boundaries) + 1
    raise ValueError(f"Feature '{name}' has `output_mode='one_hot'`. However it isn't a standard feature and the "
                     "dimensionality of its output space is not known, thus it cannot be one-hot encoded. Try using "
                     "`output_mode='int'`.")


def host(value):
    """A column as a NumPy array (Tensors and tf tensors copied to the host)."""
    if hasattr(value, "numpy") and not isinstance(value, numpy.ndarray):
        value = value.numpy()
    return numpy.asarray(value)


def column(value, dtype):
    """A column as a ``(samples, 1)`` array of the feature's dtype (one value: one sample)."""
    array = host(value)
    if array.ndim == 0:
        array = array.reshape(1, 1)
    elif array.ndim == 1:
        array = array[:, None]
    if dtype == "string":
        if array.dtype.kind in "OS":  # bytes (TensorFlow's strings) as text
            decoded = [value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)  # as StringLookup
                       for value in array.ravel()]
            return numpy.array(decoded, dtype=str).reshape(array.shape)
        return array
    return array.astype(dtype)


def executing_eagerly():
    import tensorflow as tf  # only asked about TensorFlow tensors, so TensorFlow is loaded

    return tf.executing_eagerly()


def dtype_name(value):
    dtype = value.dtype
    return dtype if isinstance(dtype, str) else numpy.dtype(dtype).name
