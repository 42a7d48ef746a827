"""The data utilities' datasets used as keras.io's examples use them (only
``import keras`` changed to minikeras, sizes made small): ``map`` with
``num_parallel_calls``, ``prefetch(AUTOTUNE)``, ``cache()``,
``cardinality()``, ``take(1)`` to look at a batch, then ``fit``."""
import wave

import numpy
import pytest

import minikeras as keras
from minikeras import layers

AUTOTUNE = keras.data.AUTOTUNE


@pytest.fixture
def photo_folder(tmp_path):
    Image = pytest.importorskip("PIL.Image", reason="Pillow is not installed (pip install pillow)")
    rng = numpy.random.default_rng(0)
    for label, brightness in (("Cat", 60), ("Dog", 190)):
        (tmp_path / "PetImages" / label).mkdir(parents=True)
        for index in range(10):
            pixels = numpy.clip(rng.normal(brightness, 30, (20, 24, 3)), 0, 255).astype("uint8")
            Image.fromarray(pixels).save(tmp_path / "PetImages" / label / f"{index}.jpg")
    return tmp_path / "PetImages"


def test_image_classification_from_scratch(photo_folder):
    # keras.io/examples/vision/image_classification_from_scratch
    image_size = (16, 16)
    batch_size = 4
    train_ds, val_ds = keras.utils.image_dataset_from_directory(
        photo_folder, validation_split=0.2, subset="both", seed=1337, image_size=image_size, batch_size=batch_size)
    assert train_ds.class_names == ["Cat", "Dog"] and len(train_ds.file_paths) == 16
    for images, labels in train_ds.take(1):
        for i in range(4):
            assert numpy.array(images[i]).astype("uint8").shape == (16, 16, 3)
            assert int(labels[i]) in (0, 1) and images[i].numpy().dtype == numpy.float32
    data_augmentation_layers = [layers.RandomFlip("horizontal"), layers.RandomRotation(0.1)]

    def data_augmentation(images):
        for layer in data_augmentation_layers:
            images = layer(images)
        return images

    train_ds = train_ds.map(lambda img, label: (data_augmentation(img), label), num_parallel_calls=AUTOTUNE)
    train_ds = train_ds.prefetch(AUTOTUNE)
    val_ds = val_ds.prefetch(AUTOTUNE)
    assert int(train_ds.cardinality()) == 4 and int(val_ds.cardinality()) == 1

    inputs = keras.Input(shape=image_size + (3,))
    x = layers.Rescaling(1.0 / 255)(inputs)
    x = layers.Conv2D(8, 3, strides=2, activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(1, activation=None)(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(3e-3), loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=[keras.metrics.BinaryAccuracy(name="acc")])
    history = model.fit(train_ds, epochs=3, validation_data=val_ds, verbose=0)
    assert len(history.history["val_acc"]) == 3 and numpy.isfinite(history.history["loss"]).all()
    assert model.predict(val_ds, verbose=0).shape == (4, 1)


@pytest.fixture
def review_folder(tmp_path):
    words = {"pos": ["great", "wonderful", "loved"], "neg": ["awful", "boring", "hated"]}
    for label, vocabulary in words.items():
        (tmp_path / "aclImdb" / "train" / label).mkdir(parents=True)
        for index in range(12):
            text = f"this movie was {vocabulary[index % 3]} <br />really {vocabulary[(index + 1) % 3]}"
            (tmp_path / "aclImdb" / "train" / label / f"{index}.txt").write_text(text)
    return tmp_path / "aclImdb" / "train"


def test_text_classification_from_scratch(review_folder):
    # keras.io/examples/nlp/text_classification_from_scratch
    raw_train_ds, raw_val_ds = keras.utils.text_dataset_from_directory(
        review_folder, batch_size=8, validation_split=0.25, subset="both", seed=1337)
    assert f"Number of batches in raw_train_ds: {raw_train_ds.cardinality()}" == \
        "Number of batches in raw_train_ds: 3"
    assert raw_val_ds.cardinality().numpy() == 1
    for text_batch, label_batch in raw_train_ds.take(1):
        for i in range(5):
            assert text_batch.numpy()[i].startswith("this movie was ")
            assert label_batch.numpy()[i] in (0, 1)

    # keras.io's custom_standardization (tf.strings on the batch) is another row of issue 37; the
    # default standardization lowercases and strips punctuation.
    vectorize_layer = layers.TextVectorization(max_tokens=50, output_mode="int", output_sequence_length=8)
    text_ds = raw_train_ds.map(lambda x, y: x)
    vectorize_layer.adapt(text_ds)

    def vectorize_text(text, label):
        text = numpy.expand_dims(text, -1)  # keras.io: tf.expand_dims (a string tensor; here NumPy's strings)
        return vectorize_layer(text), label

    train_ds = raw_train_ds.map(vectorize_text)
    val_ds = raw_val_ds.map(vectorize_text)
    train_ds = train_ds.cache().prefetch(buffer_size=10)
    val_ds = val_ds.cache().prefetch(buffer_size=10)
    tokens, labels = next(iter(raw_train_ds.map(vectorize_text)))
    assert tokens.shape == (8, 8) and tokens.dtype == numpy.int64
    inputs = keras.Input(shape=(None,), dtype="int64")
    x = layers.Embedding(50, 8)(inputs)
    x = layers.GlobalMaxPooling1D()(x)
    predictions = layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inputs, predictions)
    model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])
    history = model.fit(train_ds, validation_data=val_ds, epochs=3, verbose=0)
    assert len(history.history["val_accuracy"]) == 3
    assert len(model.evaluate(val_ds, verbose=0)) == 2


def test_timeseries_weather_forecasting_through_preprocessing():
    # keras.io/examples/timeseries/timeseries_weather_forecasting
    features = numpy.sin(numpy.arange(400, dtype="float32") / 10.0)[:, None] * numpy.ones((1, 3), "float32")
    past, future, step, sequence_length, batch_size = 24, 6, 2, 12, 16
    train_split = 300
    x_train, y_train = features[:train_split], features[past + future:train_split + past + future, :1]
    dataset_train = keras.preprocessing.timeseries_dataset_from_array(
        x_train, y_train, sequence_length=sequence_length, sampling_rate=step, batch_size=batch_size)
    x_val, y_val = features[train_split:-past - future], features[train_split + past + future:, :1]
    dataset_val = keras.preprocessing.timeseries_dataset_from_array(
        x_val, y_val, sequence_length=sequence_length, sampling_rate=step, batch_size=batch_size)
    for batch in dataset_train.take(1):
        inputs, targets = batch
    assert inputs.numpy().shape == (16, 12, 3) and targets.numpy().shape == (16, 1)
    model = keras.Sequential([keras.Input(shape=(inputs.shape[1], inputs.shape[2])), layers.LSTM(8),
                              layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.01), loss="mse")
    history = model.fit(dataset_train, epochs=2, validation_data=dataset_val, verbose=0)
    assert len(history.history["val_loss"]) == 2


def test_audio_pipeline_with_ops_in_map(tmp_path):
    # keras.io's speaker recognition / the TensorFlow audio tutorial, with ops.squeeze for tf.squeeze
    rng = numpy.random.default_rng(1)
    for label, frequency in (("low", 200.0), ("high", 900.0)):
        (tmp_path / label).mkdir()
        for index in range(6):
            clip = numpy.sin(2 * numpy.pi * frequency * numpy.arange(800) / 8000.0) + rng.normal(0, 0.1, 800)
            with wave.open(str(tmp_path / label / f"{index}.wav"), "wb") as handle:
                handle.setnchannels(1)
                handle.setsampwidth(2)
                handle.setframerate(8000)
                handle.writeframes((clip * 8000).astype("<i2").tobytes())
    train_ds = keras.utils.audio_dataset_from_directory(tmp_path, batch_size=4, output_sequence_length=800, seed=0)
    label_names = numpy.array(train_ds.class_names)
    assert label_names.tolist() == ["high", "low"]

    def squeeze(audio, labels):
        return keras.ops.squeeze(audio, axis=-1), labels

    train_ds = train_ds.map(squeeze, num_parallel_calls=AUTOTUNE).cache().shuffle(10_000).prefetch(AUTOTUNE)
    for example_audio, example_labels in train_ds.take(1):
        assert example_audio.shape == (4, 800) and example_labels.shape == (4,)
    model = keras.Sequential([keras.Input((800,)), layers.Reshape((800, 1)), layers.Conv1D(4, 16, strides=8),
                              layers.GlobalMaxPooling1D(), layers.Dense(2)])
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    assert len(model.fit(train_ds, epochs=2, verbose=0).history["loss"]) == 2


def test_split_dataset_of_a_dataset_then_batch_and_fit():
    # keras.utils.split_dataset on a dataset of samples, each part batched and trained on
    x, y = numpy.random.default_rng(0).normal(size=(40, 3)).astype("float32"), numpy.arange(40) % 2
    dataset = keras.data.Dataset.from_tensor_slices((x, y))
    train_ds, val_ds = keras.utils.split_dataset(dataset, left_size=0.75, shuffle=True, seed=2)
    assert int(train_ds.cardinality()) == 30 and int(val_ds.cardinality()) == 10
    train_ds = train_ds.shuffle(100).batch(8).prefetch(AUTOTUNE)
    model = keras.Sequential([keras.Input((3,)), layers.Dense(2)])
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    assert len(model.fit(train_ds, validation_data=val_ds.batch(8), epochs=2, verbose=0).history["val_loss"]) == 2
    seen = sorted(int(label) for _, labels in train_ds for label in labels) + sorted(int(l) for _, l in val_ds)
    assert sorted(seen) == sorted(y.tolist())


def test_unbatch_shuffle_rebatch_of_a_loader_and_epochs_reshuffle(photo_folder):
    dataset = keras.utils.image_dataset_from_directory(photo_folder, image_size=(4, 4), batch_size=8, seed=3,
                                                       verbose=False)
    samples = dataset.unbatch()
    assert int(samples.cardinality()) == keras.data.UNKNOWN_CARDINALITY  # as tf.data
    rebatched = samples.shuffle(1000, seed=1).batch(5)
    epochs = [[tuple(images.reshape(len(images), -1)[:, 0]) for images, _ in rebatched] for _ in range(2)]
    assert [len(epoch) for epoch in epochs] == [4, 4] and epochs[0] != epochs[1]
    assert sorted(sum(epochs[0], ())) == sorted(sum(epochs[1], ()))
