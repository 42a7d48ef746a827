"""minikeras twins of the models in make_keras_fixtures.py (same layers, names and shapes).

Used by the layout test (what minikeras writes must look like what Keras
wrote) and by check_keras_reads_minikeras.py.
"""
import numpy

import minikeras as mk
from minikeras import layers

INPUT_SHAPES = {"conv_model": [(8, 8, 3)], "recurrent_model": [(6,)], "two_heads": [(4,), (3,)],
                "two_dense": [(3,)]}


class TwoDense(mk.Model):
    """The twin of the fixture script's registered ``minikeras_tests>TwoDense``."""

    def __init__(self, units=4, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.hidden = layers.Dense(units, activation="relu")
        self.out = layers.Dense(2)

    def call(self, inputs):
        return self.out(self.hidden(inputs))

    def get_config(self):
        return {"units": self.units, "name": self.name}


def conv_model():
    inputs = mk.Input((8, 8, 3), name="image")
    x = layers.Conv2D(4, 3, padding="same", activation="relu", name="conv")(inputs)
    x = layers.DepthwiseConv2D(3, depth_multiplier=2, name="depthwise")(x)
    x = layers.SeparableConv2D(4, 3, padding="same", depth_multiplier=2, name="separable")(x)
    x = layers.Conv2DTranspose(3, 3, strides=2, padding="same", name="transpose")(x)
    x = layers.BatchNormalization(name="norm")(x)
    x = layers.MaxPooling2D(2, name="pool")(x)
    x = layers.Flatten(name="flatten")(x)
    return mk.Model(inputs, layers.Dense(5, activation="softmax", name="head")(x), name="conv_model")


def recurrent_model():
    return mk.Sequential([
        mk.Input((6,), dtype="int32"),
        layers.Embedding(20, 4, name="embed"),
        layers.Conv1D(4, 3, padding="same", name="conv1d"),
        layers.LSTM(5, return_sequences=True, name="lstm"),
        layers.GRU(4, return_sequences=True, name="gru"),
        layers.GRU(3, return_sequences=True, reset_after=False, name="gru_v1"),
        layers.SimpleRNN(3, return_sequences=True, name="simple"),
        layers.Bidirectional(layers.LSTM(2, return_sequences=True), name="bidi"),
        layers.TimeDistributed(layers.Dense(3), name="per_step"),
        layers.LayerNormalization(name="layer_norm"),
        layers.GlobalAveragePooling1D(name="average"),
        layers.Dense(2, name="head"),
    ], name="recurrent_model")


def two_heads():
    a = mk.Input((4,), name="a")
    b = mk.Input((3,), name="b")
    inner = mk.Sequential([mk.Input((4,)), layers.Dense(5, activation="tanh", name="inner_dense"),
                           layers.BatchNormalization(name="inner_norm"), layers.Dense(5, name="inner_out"),
                           layers.Activation("relu", name="inner_act")], name="inner")
    left = inner(a)
    right = layers.Dense(5, name="project")(b)
    merged = layers.Concatenate(name="merge")([layers.Add(name="add")([left, right]), right])
    first = layers.Dense(1, name="first")(merged)
    second = layers.Dense(2, activation="softmax", name="second")(right)
    return mk.Model([a, b], [first, second], name="two_heads")


def two_dense():
    model = TwoDense(units=4, name="two_dense")
    model(numpy.zeros((1, 3), "float32"))
    return model


def keras3_layers():
    """The weighted layers of the Keras-compatibility work (merged from the keras-layers branch)."""
    sequence = mk.Input((5, 4), name="sequence")
    x = layers.MultiHeadAttention(num_heads=2, key_dim=3, name="attention")(sequence, sequence)
    x = layers.PReLU(name="prelu")(x)
    x = layers.GroupNormalization(groups=2, name="group_norm")(x)
    x = layers.RNN(layers.GRUCell(3), name="rnn")(x)
    volume = mk.Input((4, 4, 4, 2), name="volume")
    y = layers.Conv3D(2, 2, activation="relu", name="conv3d")(volume)
    y = layers.MaxPooling3D(3, name="pool3d")(y)
    y = layers.Flatten(name="flatten")(y)
    merged = layers.Concatenate(name="merge")([x, y])
    return mk.Model([sequence, volume], layers.Dense(2, name="head")(merged), name="keras3_layers")


BUILDERS = {"conv_model": conv_model, "recurrent_model": recurrent_model, "two_heads": two_heads,
            "two_dense": two_dense, "keras3_layers": keras3_layers}
INPUT_SHAPES["keras3_layers"] = [(5, 4), (4, 4, 4, 2)]
# Layer classes each model needs beyond those every minikeras has had.
NEEDS = {"keras3_layers": ("MultiHeadAttention", "PReLU", "GroupNormalization", "RNN", "GRUCell", "Conv3D",
                           "MaxPooling3D")}


def missing_layers(name):
    """The layer classes ``name`` needs that this minikeras lacks (empty once keras-layers is merged)."""
    return [cls for cls in NEEDS.get(name, ()) if not hasattr(layers, cls)]


def model_params(names):
    """pytest params for ``names``, each skipped, with the reason, when its layers are missing."""
    import pytest

    return [pytest.param(name, marks=pytest.mark.skipif(bool(missing_layers(name)),
                                                        reason=f"minikeras lacks {missing_layers(name)}"))
            for name in names]


def sample_inputs(name, rng, batch=3):
    if name == "recurrent_model":
        return [rng.integers(0, 20, size=(batch,) + shape).astype("int32") for shape in INPUT_SHAPES[name]]
    return [rng.normal(size=(batch,) + shape).astype("float32") for shape in INPUT_SHAPES[name]]


def one_or_many(values):
    return values if len(values) > 1 else values[0]


def as_list(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


def trained(name, rng):
    """The twin, compiled with Adam(0.01) and mse, after one step toward zero targets (as the fixtures)."""
    model = BUILDERS[name]()
    inputs = sample_inputs(name, rng)
    outputs = as_list(model.predict(one_or_many(inputs), verbose=0))
    targets = [numpy.zeros_like(output) for output in outputs]
    model.compile(optimizer=mk.optimizers.Adam(0.01), loss=["mse"] * len(outputs) if len(outputs) > 1 else "mse")
    model.train_on_batch(one_or_many(inputs), one_or_many(targets))
    return model, inputs, targets
