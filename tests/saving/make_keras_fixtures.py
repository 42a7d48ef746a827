"""Writes Keras-made files that the minikeras tests load (run in an env with TensorFlow/Keras 3).

    /path/to/env-with-keras/bin/python tests/saving/make_keras_fixtures.py

For each model below it writes, in tests/saving/fixtures/keras/:
    <name>.keras          model.save()         (Keras 3 zip)
    <name>.weights.h5     model.save_weights() (Keras 3 layout)
    <name>.h5             model.save()         (legacy tf.keras HDF5 layout)
    <name>.npz            the fixed input(s) ``x0, x1, ...``, Keras's output(s) ``y0, y1, ...`` and its
                          outputs ``after0, ...`` after one more training step (Adam, zero targets)
and layer_configs.json: Keras's serialized spec of one instance of every layer class minikeras has.
Every model is compiled with Adam and trained for one step first, so the files hold optimizer state and
weights that are not their initial values. Between them the models use every layer with weights that
minikeras has. The tests never need Keras: they only read these files.
"""
import json
import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy  # noqa: E402
from keras import layers  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "keras")


def conv_model():
    inputs = keras.Input((8, 8, 3), name="image")
    x = layers.Conv2D(4, 3, padding="same", activation="relu", name="conv")(inputs)
    x = layers.DepthwiseConv2D(3, depth_multiplier=2, name="depthwise")(x)
    x = layers.SeparableConv2D(4, 3, padding="same", depth_multiplier=2, name="separable")(x)
    x = layers.Conv2DTranspose(3, 3, strides=2, padding="same", name="transpose")(x)
    x = layers.BatchNormalization(name="norm")(x)
    x = layers.MaxPooling2D(2, name="pool")(x)
    x = layers.Flatten(name="flatten")(x)
    outputs = layers.Dense(5, activation="softmax", name="head")(x)
    return keras.Model(inputs, outputs, name="conv_model"), [(8, 8, 3)], "float"


def recurrent_model():
    return keras.Sequential([
        keras.Input((6,), dtype="int32"),
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
    ], name="recurrent_model"), [(6,)], "int"


def functional_model():
    a = keras.Input((4,), name="a")
    b = keras.Input((3,), name="b")
    # A nested model with non-trainable weights: tf.keras's .h5 lists them after all the trainable ones.
    inner = keras.Sequential([keras.Input((4,)), layers.Dense(5, activation="tanh", name="inner_dense"),
                              layers.BatchNormalization(name="inner_norm"), layers.Dense(5, name="inner_out"),
                              layers.Activation("relu", name="inner_act")], name="inner")
    left = inner(a)
    right = layers.Dense(5, name="project")(b)
    merged = layers.Concatenate(name="merge")([layers.Add(name="add")([left, right]), right])
    first = layers.Dense(1, name="first")(merged)
    second = layers.Dense(2, activation="softmax", name="second")(right)
    return keras.Model([a, b], [first, second], name="two_heads"), [(4,), (3,)], "float"


def keras3_layers_model():
    """The weighted layers of the Keras-compatibility work: attention, PReLU, GroupNormalization, RNN(cell), Conv3D."""
    sequence = keras.Input((5, 4), name="sequence")
    x = layers.MultiHeadAttention(num_heads=2, key_dim=3, name="attention")(sequence, sequence)
    x = layers.PReLU(name="prelu")(x)
    x = layers.GroupNormalization(groups=2, name="group_norm")(x)
    x = layers.RNN(layers.GRUCell(3), name="rnn")(x)
    volume = keras.Input((4, 4, 4, 2), name="volume")
    y = layers.Conv3D(2, 2, activation="relu", name="conv3d")(volume)
    y = layers.MaxPooling3D(3, name="pool3d")(y)
    y = layers.Flatten(name="flatten")(y)
    merged = layers.Concatenate(name="merge")([x, y])
    return keras.Model([sequence, volume], layers.Dense(2, name="head")(merged), name="keras3_layers"), \
        [(5, 4), (4, 4, 4, 2)], "float"


@keras.saving.register_keras_serializable(package="minikeras_tests")
class TwoDense(keras.Model):
    """A registered subclassed model; tests/saving/test_keras_fixtures.py has its minikeras twin."""

    def __init__(self, units=4, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.hidden = layers.Dense(units, activation="relu")
        self.out = layers.Dense(2)

    def call(self, inputs):
        return self.out(self.hidden(inputs))

    def get_config(self):
        return {"units": self.units, "name": self.name}


def subclassed_model():
    model = TwoDense(units=4, name="two_dense")
    model(numpy.zeros((1, 3), "float32"))
    return model, [(3,)], "float"


# One instance of every layer class minikeras has, with arguments away from the defaults where it
# matters; tests/saving/test_keras_layer_configs.py reads Keras's config of each.
LAYER_CASES = {
    "Dense": dict(units=3, activation="relu", use_bias=False), "Activation": dict(activation="tanh"),
    "Dropout": dict(rate=0.3), "Flatten": {}, "Reshape": dict(target_shape=(2, 3)), "Permute": dict(dims=(2, 1)),
    "RepeatVector": dict(n=2), "ActivityRegularization": dict(l1=0.01), "GaussianNoise": dict(stddev=0.2),
    "GaussianDropout": dict(rate=0.2), "SpatialDropout1D": dict(rate=0.1), "SpatialDropout2D": dict(rate=0.1),
    "SpatialDropout3D": dict(rate=0.1), "Embedding": dict(input_dim=5, output_dim=2, mask_zero=False),
    "Add": {}, "Subtract": {}, "Multiply": {}, "Average": {}, "Maximum": {}, "Minimum": {},
    "Concatenate": dict(axis=1), "Dot": dict(axes=1, normalize=True),
    "BatchNormalization": dict(momentum=0.9, epsilon=0.01, center=False),
    "LayerNormalization": dict(axis=-1, epsilon=0.01, scale=False),
    "Conv1D": dict(filters=2, kernel_size=3, strides=2, padding="same", dilation_rate=1),
    "Conv2D": dict(filters=2, kernel_size=(3, 2), padding="valid", activation="relu"),
    "Conv2DTranspose": dict(filters=2, kernel_size=3, strides=2, padding="same"),
    "DepthwiseConv2D": dict(kernel_size=3, depth_multiplier=2), "SeparableConv2D": dict(filters=2, kernel_size=3),
    "MaxPooling1D": dict(pool_size=2), "MaxPooling2D": dict(pool_size=(2, 2), strides=1),
    "AveragePooling1D": dict(pool_size=3), "AveragePooling2D": dict(pool_size=2, padding="same"),
    "GlobalAveragePooling1D": {}, "GlobalAveragePooling2D": dict(keepdims=True), "GlobalMaxPooling1D": {},
    "GlobalMaxPooling2D": {}, "UpSampling1D": dict(size=3), "UpSampling2D": dict(size=(2, 3)),
    "ZeroPadding1D": dict(padding=2), "ZeroPadding2D": dict(padding=(1, 2)), "Cropping1D": dict(cropping=(1, 2)),
    "Cropping2D": dict(cropping=((1, 0), (0, 2))),
    "LSTM": dict(units=2, return_sequences=True, go_backwards=True, dropout=0.1, unit_forget_bias=False),
    "GRU": dict(units=2, reset_after=False, return_state=True), "SimpleRNN": dict(units=2, activation="relu"),
    "Bidirectional": "wrap", "TimeDistributed": "wrap",
    # Layers of the Keras-compatibility work (tests use the ones minikeras has).
    "PReLU": {}, "ELU": dict(alpha=0.5), "LeakyReLU": dict(negative_slope=0.2), "ReLU": dict(max_value=6.0),
    "Softmax": dict(axis=-1), "GroupNormalization": dict(groups=2), "Conv3D": dict(filters=2, kernel_size=3),
    "MaxPooling3D": dict(pool_size=2), "AveragePooling3D": dict(pool_size=2),
    "MultiHeadAttention": dict(num_heads=2, key_dim=3), "Attention": {}, "Masking": dict(mask_value=0.0),
    "Rescaling": dict(scale=0.5, offset=1.0), "Resizing": dict(height=4, width=5),
    "CenterCrop": dict(height=2, width=2), "Normalization": dict(axis=-1), "RandomFlip": dict(mode="horizontal"),
    "RandomContrast": dict(factor=0.2), "RandomRotation": dict(factor=0.1),
    "RandomTranslation": dict(height_factor=0.1, width_factor=0.1), "RandomZoom": dict(height_factor=0.1),
    "IntegerLookup": {}, "StringLookup": {}, "TextVectorization": dict(max_tokens=10), "GRUCell": dict(units=2),
    "LSTMCell": dict(units=2), "SimpleRNNCell": dict(units=2), "RNN": "wrap",
    # Issue 25's building blocks.
    "AdaptiveAveragePooling1D": dict(output_size=3), "AdaptiveAveragePooling2D": dict(output_size=(2, 3)),
    "AdaptiveAveragePooling3D": dict(output_size=2), "AdaptiveMaxPooling1D": dict(output_size=4),
    "AdaptiveMaxPooling2D": dict(output_size=3), "AdaptiveMaxPooling3D": dict(output_size=(1, 2, 3)),
    "AdditiveAttention": dict(use_scale=False), "AlphaDropout": dict(rate=0.2), "AutoContrast": dict(value_range=(0, 1)),
    "CategoryEncoding": dict(num_tokens=4, output_mode="count"), "Conv1DTranspose": dict(filters=2, kernel_size=3),
    "Cropping3D": dict(cropping=((1, 0), (0, 1), (1, 1))), "DepthwiseConv1D": dict(kernel_size=3, depth_multiplier=2),
    "Discretization": dict(bin_boundaries=[0.0, 1.0]), "EinsumDense": dict(equation="ab,bc->ac", output_shape=3,
                                                                           bias_axes="c"),
    "GlobalAveragePooling3D": {}, "GlobalMaxPooling3D": dict(keepdims=True),
    "GroupedQueryAttention": dict(head_dim=2, num_query_heads=4, num_key_value_heads=2), "Identity": {},
    "Pipeline": "wrap", "RMSNormalization": dict(epsilon=1e-3), "RandomBrightness": dict(factor=0.2),
    "RandomGrayscale": dict(factor=0.3), "RandomInvert": dict(factor=0.5), "RandomPosterization": dict(factor=4),
    "ReversibleEmbedding": dict(input_dim=5, output_dim=2, tie_weights=False), "SeparableConv1D": dict(filters=2,
                                                                                                   kernel_size=3),
    "Solarization": dict(addition_factor=0.1), "SpectralNormalization": "wrap", "StackedRNNCells": "wrap",
    "UnitNormalization": dict(axis=[1, 2]), "UpSampling3D": dict(size=(1, 2, 2)), "Wrapper": "wrap",
    "ZeroPadding3D": dict(padding=(1, 2, 0)),
    # Issue 25's image augmentation layers.
    "RandomCrop": dict(height=3, width=4, seed=5), "RandomErasing": dict(factor=0.5, fill_value=[1, 2, 3]),
    "RandomSaturation": dict(factor=(0.3, 0.7)), "RandomHue": dict(factor=0.4, value_range=(0, 1)),
    "RandomColorJitter": dict(brightness_factor=0.1, hue_factor=0.2), "RandomColorDegeneration": dict(factor=0.3),
    "RandomSharpness": dict(factor=0.6), "RandomGaussianBlur": dict(kernel_size=5, sigma=(0.2, 0.8)),
    "RandomShear": dict(x_factor=(0.1, 0.4), fill_mode="constant"), "RandomPerspective": dict(scale=0.4),
    "RandomElasticTransform": dict(scale=0.5, interpolation="nearest"), "MixUp": dict(alpha=0.3),
    "CutMix": dict(factor=0.6), "RandAugment": dict(num_ops=3, factor=0.4), "AugMix": dict(num_chains=2, all_ops=False),
    "Equalization": dict(bins=64), "ContrastLimitedAdaptiveHistogramEqualization": dict(tile_grid_size=(4, 4)),
    "MaxNumBoundingBoxes": dict(max_number=5, bounding_box_format="xyxy"),

    # Issue 25's second batch.
    "ConvLSTM1D": dict(filters=2, kernel_size=3), "ConvLSTM2D": dict(filters=2, kernel_size=(3, 2), padding="same",
                                                                     return_sequences=True),
    "ConvLSTM3D": dict(filters=1, kernel_size=2, go_backwards=True), "Conv3DTranspose": dict(filters=2, kernel_size=3,
                                                                                             strides=2),
    "Hashing": dict(num_bins=5, salt=3), "HashedCrossing": dict(num_bins=4, output_mode="one_hot"),
    "MelSpectrogram": dict(num_mel_bins=20, fft_length=512),
    "STFTSpectrogram": dict(mode="magnitude", frame_length=64),
}


def layer_configs():
    """Keras's serialized spec of each LAYER_CASES layer."""
    found = {}
    for name, arguments in LAYER_CASES.items():
        if name == "RNN":
            layer = layers.RNN(layers.GRUCell(2), return_sequences=True)
        elif name == "Pipeline":
            layer = layers.Pipeline([layers.Rescaling(0.5), layers.Dense(2)])
        elif name == "StackedRNNCells":
            layer = layers.StackedRNNCells([layers.LSTMCell(2), layers.GRUCell(3)])
        elif name in ("SpectralNormalization", "Wrapper"):
            layer = getattr(layers, name)(layers.Dense(2))
        elif arguments == "wrap":
            inner = layers.GRU(2, return_sequences=True) if name == "Bidirectional" else layers.Dense(2)
            layer = getattr(layers, name)(inner, **({"merge_mode": "sum"} if name == "Bidirectional" else {}))
        else:  # Keras exports GroupedQueryAttention under the name GroupQueryAttention
            layer = getattr(layers, {"GroupedQueryAttention": "GroupQueryAttention"}.get(name, name))(**arguments)
        found[name] = keras.saving.serialize_keras_object(layer)
    return found


def inputs_for(shapes, kind, rng, batch=3):
    if kind == "int":
        return [rng.integers(0, 20, size=(batch,) + shape).astype("int32") for shape in shapes]
    return [rng.normal(size=(batch,) + shape).astype("float32") for shape in shapes]


def main():
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "layer_configs.json"), "w") as handle:
        json.dump(layer_configs(), handle, indent=1, sort_keys=True)
    keras.utils.set_random_seed(0)
    rng = numpy.random.default_rng(0)
    for build in (conv_model, recurrent_model, functional_model, subclassed_model, keras3_layers_model):
        model, shapes, kind = build()
        name = model.name
        inputs = inputs_for(shapes, kind, rng)
        outputs = model(inputs if len(inputs) > 1 else inputs[0])
        outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
        targets = [numpy.zeros(tuple(output.shape), "float32") for output in outputs]
        model.compile(optimizer=keras.optimizers.Adam(0.01), loss=["mse"] * len(targets))
        model.train_on_batch(inputs if len(inputs) > 1 else inputs[0], targets if len(targets) > 1 else targets[0])
        outputs = model.predict(inputs if len(inputs) > 1 else inputs[0], verbose=0)
        outputs = outputs if isinstance(outputs, list) else [outputs]
        model.save(os.path.join(OUT, f"{name}.keras"))
        model.save_weights(os.path.join(OUT, f"{name}.weights.h5"))
        if build is not subclassed_model:  # the legacy format cannot hold a subclassed model
            model.save(os.path.join(OUT, f"{name}.h5"))
        # One more step from the saved state: minikeras must continue the same way.
        model.train_on_batch(inputs if len(inputs) > 1 else inputs[0], targets if len(targets) > 1 else targets[0])
        after = model.predict(inputs if len(inputs) > 1 else inputs[0], verbose=0)
        after = after if isinstance(after, list) else [after]
        arrays = {f"x{index}": value for index, value in enumerate(inputs)}
        arrays.update({f"y{index}": value for index, value in enumerate(outputs)})
        arrays.update({f"after{index}": value for index, value in enumerate(after)})
        numpy.savez(os.path.join(OUT, f"{name}.npz"), keras_version=keras.__version__, **arrays)
        print(name, [o.shape for o in outputs])


if __name__ == "__main__":
    main()
