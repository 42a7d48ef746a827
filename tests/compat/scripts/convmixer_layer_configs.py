"""keras.io "Image classification with ConvMixer", with only the import changed:
depthwise and pointwise convolutions over patch embeddings, trained with
AdamW and a ModelCheckpoint that keeps the best whole model (.keras), whose
weights ``load_weights`` reads back; then the example's own way of finding
the 5x5 depthwise kernels to plot: ``layer.get_config()["kernel_size"] ==
(5, 5)``, which Keras 3 answers with tuples (before and after a save)."""
import os
import tempfile

import numpy as np

import minikeras as keras
from minikeras import layers

keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
# 16x16 images; the class is which half (top, bottom) is bright.
y_train = rng.integers(0, 2, 320)
x_train = rng.integers(0, 80, (320, 16, 16, 3)).astype("float32")
x_train[y_train == 0, :8] += 170
x_train[y_train == 1, 8:] += 170


def activation_block(x):
    x = layers.Activation("gelu")(x)
    return layers.BatchNormalization()(x)


def conv_stem(x, filters, patch_size):
    x = layers.Conv2D(filters, kernel_size=patch_size, strides=patch_size)(x)
    return activation_block(x)


def conv_mixer_block(x, filters, kernel_size):
    x0 = x
    x = layers.DepthwiseConv2D(kernel_size=kernel_size, padding="same")(x)
    x = layers.Add()([activation_block(x), x0])
    x = layers.Conv2D(filters, kernel_size=1)(x)
    return activation_block(x)


def get_conv_mixer(image_size=16, filters=16, depth=2, kernel_size=5, patch_size=2, num_classes=2):
    inputs = keras.Input((image_size, image_size, 3))
    x = layers.Rescaling(scale=1.0 / 255)(inputs)
    x = conv_stem(x, filters, patch_size)
    for _ in range(depth):
        x = conv_mixer_block(x, filters, kernel_size)
    x = layers.GlobalAvgPool2D()(x)
    outputs = layers.Dense(num_classes, activation="softmax")(x)
    return keras.Model(inputs, outputs)


def depthwise_5x5(model):
    return [i for i, layer in enumerate(model.layers)
            if isinstance(layer, layers.DepthwiseConv2D) and layer.get_config()["kernel_size"] == (5, 5)]


model = get_conv_mixer()
model.compile(optimizer=keras.optimizers.AdamW(learning_rate=3e-3, weight_decay=1e-4),
              loss="sparse_categorical_crossentropy", metrics=["accuracy"])
with tempfile.TemporaryDirectory() as folder:
    checkpoint_filepath = os.path.join(folder, "checkpoint.keras")
    checkpoint_callback = keras.callbacks.ModelCheckpoint(checkpoint_filepath, monitor="val_accuracy",
                                                          save_best_only=True)
    history = model.fit(x_train[:256], y_train[:256], batch_size=32, epochs=4, verbose=0,
                        validation_data=(x_train[256:], y_train[256:]), callbacks=[checkpoint_callback])
    model.load_weights(checkpoint_filepath)
    _, accuracy = model.evaluate(x_train[256:], y_train[256:], verbose=0)
    print("accuracy", history.history["accuracy"], "val_accuracy", history.history["val_accuracy"], "restored",
          accuracy)
    assert history.history["accuracy"][-1] > 0.9, history.history  # (BatchNormalization's moving statistics
    assert accuracy == max(history.history["val_accuracy"]), accuracy  # lag in so few steps, in Keras too)
    restored = keras.models.load_model(checkpoint_filepath)

patch_embeddings = model.layers[2].get_weights()[0]
assert patch_embeddings.shape == (2, 2, 3, 16), patch_embeddings.shape
found = depthwise_5x5(model)
assert len(found) == 2 and depthwise_5x5(restored) == found, (found, depthwise_5x5(restored))
kernel = model.layers[found[0]].get_weights()[0]
assert kernel.shape == (5, 5, 16, 1), kernel.shape
stem = model.layers[2].get_config()
assert stem["kernel_size"] == (2, 2) and stem["strides"] == (2, 2) and stem["dilation_rate"] == (1, 1), stem
print("OK")
