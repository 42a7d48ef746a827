"""keras.io "Understanding masking & padding", with only the import changed:
masks read as ``_keras_mask`` (eager and symbolic), a custom layer that
passes the mask on (supports_masking), one that makes its own
(compute_mask), and one that reads it in call(mask=...) while the
functional model is built."""
import numpy as np

import minikeras as keras
from minikeras import layers, ops

raw_inputs = [[711, 632, 71], [73, 8, 3215, 55, 927], [83, 91, 1, 645, 1253, 927]]
padded_inputs = keras.utils.pad_sequences(raw_inputs, padding="post")

embedding = layers.Embedding(input_dim=5000, output_dim=16, mask_zero=True)
masked_output = embedding(padded_inputs)
mask = ops.convert_to_numpy(masked_output._keras_mask) if hasattr(ops, "convert_to_numpy") \
    else masked_output._keras_mask.numpy()
assert mask.tolist() == (padded_inputs != 0).tolist(), mask

masking_layer = layers.Masking()
unmasked_embedding = ops.cast(ops.tile(ops.expand_dims(padded_inputs, axis=-1), [1, 1, 10]), "float32")
masked_embedding = masking_layer(unmasked_embedding)
assert masked_embedding._keras_mask.numpy().tolist() == (padded_inputs != 0).tolist()


class MyActivation(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True  # passes the input mask on

    def call(self, inputs):
        return ops.relu(inputs)


inputs = keras.Input(shape=(None,), dtype="int32")
x = layers.Embedding(input_dim=5000, output_dim=16, mask_zero=True)(inputs)
x = MyActivation()(x)
assert x._keras_mask is not None, "symbolic mask missing"
outputs = layers.LSTM(32)(x)
model = keras.Model(inputs, outputs)
assert model(padded_inputs).shape == (3, 32)


class TemporalSplit(keras.layers.Layer):
    """Split the input tensor into 2 tensors along the time dimension."""

    def call(self, inputs):
        return ops.split(inputs, 2, axis=1)

    def compute_mask(self, inputs, mask=None):
        if mask is None:
            return None
        return ops.split(mask, 2, axis=1)


first_half, second_half = TemporalSplit()(masked_embedding)
assert first_half._keras_mask.numpy().tolist() == (padded_inputs[:, :3] != 0).tolist()
assert second_half._keras_mask.numpy().tolist() == (padded_inputs[:, 3:] != 0).tolist()


class CustomEmbedding(keras.layers.Layer):
    def __init__(self, input_dim, output_dim, mask_zero=False, **kwargs):
        super().__init__(**kwargs)
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.mask_zero = mask_zero

    def build(self, input_shape):
        self.embeddings = self.add_weight(shape=(self.input_dim, self.output_dim), initializer="random_normal",
                                          dtype="float32")

    def call(self, inputs):
        inputs = ops.cast(inputs, "int32")
        return ops.take(self.embeddings, inputs)

    def compute_mask(self, inputs, mask=None):
        if not self.mask_zero:
            return None
        return ops.not_equal(inputs, 0)


layer = CustomEmbedding(10, 32, mask_zero=True)
x = np.random.random((3, 10)) * 9
x = x.astype("int32")
y = layer(x)
assert y._keras_mask.numpy().tolist() == (x != 0).tolist()


class TemporalSoftmax(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        assert mask is not None  # also while the functional model is built
        broadcast_float_mask = ops.expand_dims(ops.cast(mask, "float32"), -1)
        inputs_exp = ops.exp(inputs) * broadcast_float_mask
        inputs_sum = ops.sum(inputs_exp * broadcast_float_mask, axis=-1, keepdims=True)
        return inputs_exp / inputs_sum


inputs = keras.Input(shape=(None,), dtype="int32")
x = layers.Embedding(input_dim=10, output_dim=32, mask_zero=True)(inputs)
x = layers.Dense(1)(x)
outputs = TemporalSoftmax()(x)

model = keras.Model(inputs, outputs)
y = model(np.random.randint(1, 10, size=(32, 100)))
assert y.shape == (32, 100, 1)
print("OK")
