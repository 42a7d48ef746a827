"""keras.io "CutMix data augmentation for image classification", with only the
import changed: the box is drawn and computed with ops (``keras.random.gamma``
for the Beta sample, ``ops.sqrt``, ``ops.cast``, ``ops.clip``) and its 0-d
integer tensors are passed to ``ops.image.crop_images`` / ``pad_images``,
which take them as their ints, as Keras does eagerly. A small ResNet-style
CNN then learns from the mixed images and soft labels."""
import numpy as np

import minikeras as keras
from minikeras import layers, ops

keras.utils.set_random_seed(0)
IMG_SIZE = 16
seed = keras.random.SeedGenerator(42)
rng = np.random.default_rng(0)
# The class is the colour channel that is bright.
labels = rng.integers(0, 3, 256)
images = (rng.random((256, IMG_SIZE, IMG_SIZE, 3)) * 0.3).astype("float32")
images[np.arange(256), :, :, labels] += 0.7
one_hot = keras.utils.to_categorical(labels, 3).astype("float32")


def sample_beta_distribution(size, concentration_0=0.2, concentration_1=0.2):
    gamma_1_sample = keras.random.gamma(shape=[size], alpha=concentration_1, seed=seed)
    gamma_2_sample = keras.random.gamma(shape=[size], alpha=concentration_0, seed=seed)
    return gamma_1_sample / (gamma_1_sample + gamma_2_sample)


def get_box(lambda_value):
    cut_rat = ops.sqrt(1.0 - lambda_value)
    cut_w = ops.cast(IMG_SIZE * cut_rat, "int32")
    cut_h = ops.cast(IMG_SIZE * cut_rat, "int32")
    cut_x = ops.cast(keras.random.uniform((1,), minval=0, maxval=IMG_SIZE, seed=seed), "int32")
    cut_y = ops.cast(keras.random.uniform((1,), minval=0, maxval=IMG_SIZE, seed=seed), "int32")
    boundaryx1 = ops.clip(cut_x[0] - cut_w // 2, 0, IMG_SIZE)
    boundaryy1 = ops.clip(cut_y[0] - cut_h // 2, 0, IMG_SIZE)
    bbx2 = ops.clip(cut_x[0] + cut_w // 2, 0, IMG_SIZE)
    bby2 = ops.clip(cut_y[0] + cut_h // 2, 0, IMG_SIZE)
    target_h = bby2 - boundaryy1
    if target_h == 0:
        target_h += 1
    target_w = bbx2 - boundaryx1
    if target_w == 0:
        target_w += 1
    return boundaryx1, boundaryy1, target_h, target_w


def cutmix(first, second):
    (image1, label1), (image2, label2) = first, second
    lambda_value = sample_beta_distribution(1, 0.25, 0.25)[0]
    boundaryx1, boundaryy1, target_h, target_w = get_box(lambda_value)
    box = dict(target_height=target_h, target_width=target_w)
    crop2 = ops.image.crop_images(image2, top_cropping=boundaryy1, left_cropping=boundaryx1, **box)
    image2 = ops.image.pad_images(crop2, top_padding=boundaryy1, left_padding=boundaryx1, target_height=IMG_SIZE,
                                  target_width=IMG_SIZE)
    crop1 = ops.image.crop_images(image1, top_cropping=boundaryy1, left_cropping=boundaryx1, **box)
    img1 = ops.image.pad_images(crop1, top_padding=boundaryy1, left_padding=boundaryx1, target_height=IMG_SIZE,
                                target_width=IMG_SIZE)
    image = image1 - img1 + image2
    lambda_value = ops.cast(1 - (target_w * target_h) / (IMG_SIZE * IMG_SIZE), "float32")
    label = lambda_value * label1 + (1 - lambda_value) * label2
    return image, label


partner = rng.permutation(256)
mixed = [cutmix((images[i], one_hot[i]), (images[j], one_hot[j])) for i, j in zip(range(256), partner)]
x_mixed = np.stack([ops.convert_to_numpy(image) for image, _ in mixed])
y_mixed = np.stack([ops.convert_to_numpy(label) for _, label in mixed])
assert x_mixed.shape == (256, IMG_SIZE, IMG_SIZE, 3) and x_mixed.dtype == np.float32
np.testing.assert_allclose(y_mixed.sum(axis=1), 1.0, rtol=1e-5)
assert 0 < np.mean(y_mixed.max(axis=1) < 1) < 1  # some labels mixed, not all
# Where the box is, the pixels are the partner's: the mixed image is one of the two, pixel by pixel.
from_first = np.isclose(x_mixed, images).all(axis=-1)
from_second = np.isclose(x_mixed, images[partner]).all(axis=-1)
assert (from_first | from_second).all()

inputs = layers.Input((IMG_SIZE, IMG_SIZE, 3))
x = layers.Conv2D(8, 3, padding="same", kernel_initializer="he_normal",
                  kernel_regularizer=keras.regularizers.L2(1e-4))(inputs)
x = layers.BatchNormalization()(x)
x = layers.Activation("relu")(x)
y = layers.Conv2D(8, 3, padding="same")(x)
x = layers.Activation("relu")(layers.add([x, layers.BatchNormalization()(y)]))
x = layers.AveragePooling2D(pool_size=4)(x)
outputs = layers.Dense(3, activation="softmax")(layers.Flatten()(x))
model = keras.Model(inputs, outputs)
model.compile(loss="categorical_crossentropy", optimizer=keras.optimizers.Adam(3e-3), metrics=["accuracy"])
model.fit(x_mixed, y_mixed, batch_size=32, epochs=6, verbose=0)
_, accuracy = model.evaluate(images, one_hot, verbose=0)
print("accuracy on the unmixed images", accuracy)
assert accuracy > 0.8, accuracy
print("OK")
