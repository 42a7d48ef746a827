"""image/text/audio_dataset_from_directory, timeseries_dataset_from_array,
split_dataset and the image helpers: Keras's outputs (recorded by
fixtures/record_keras_loaders.py), arguments and errors, and fit taking the
result directly."""
import os
import pathlib
import wave

import numpy
import pytest

import minikeras as mk

Image = pytest.importorskip("PIL.Image", reason="Pillow is not installed (pip install pillow; extra 'image')")
_KERAS = numpy.load(pathlib.Path(__file__).parent / "fixtures" / "keras_loaders.npz")
_IMAGES = ["cats/a.png", "cats/b.png", "dogs/c.png", "dogs/d.png"]


@pytest.fixture
def image_folder(tmp_path):
    for index, name in enumerate(_IMAGES):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        Image.fromarray(_KERAS[f"pixels_{index}"], "RGB").save(tmp_path / name)
    return tmp_path


@pytest.mark.parametrize("setting, arguments", [
    ("bilinear", {}), ("nearest", {"interpolation": "nearest"}), ("crop", {"crop_to_aspect_ratio": True}),
    ("pad", {"pad_to_aspect_ratio": True})])
def test_image_batches_equal_keras(image_folder, setting, arguments):
    dataset = mk.utils.image_dataset_from_directory(image_folder, image_size=(5, 6), batch_size=4, shuffle=False,
                                                    label_mode="categorical", verbose=False, **arguments)
    assert dataset.class_names == ["cats", "dogs"] and len(dataset) == 1
    assert [os.path.relpath(path, image_folder) for path in dataset.file_paths] == _IMAGES
    images, labels = dataset[0]
    assert images.dtype == numpy.float32 and images.shape == (4, 5, 6, 3)
    numpy.testing.assert_allclose(images, _KERAS[f"images_{setting}"], atol=1e-3)
    numpy.testing.assert_array_equal(labels, _KERAS[f"labels_{setting}"])


def test_grayscale_without_labels_and_channels_first(image_folder):
    dataset = mk.utils.image_dataset_from_directory(image_folder, image_size=(4, 4), batch_size=4, shuffle=False,
                                                    color_mode="grayscale", labels=None, verbose=False)
    images = dataset[0]
    assert dataset.class_names is None
    numpy.testing.assert_allclose(images, _KERAS["images_grayscale"], atol=1e-3)
    first = mk.utils.image_dataset_from_directory(image_folder, image_size=(4, 4), batch_size=2, shuffle=False,
                                                  data_format="channels_first", verbose=False)
    assert first[0][0].shape == (2, 3, 4, 4) and len(first) == 2


def test_validation_split_subsets_and_fit(image_folder, capsys):
    train, validation = mk.utils.image_dataset_from_directory(image_folder, image_size=(8, 8), batch_size=2,
                                                              validation_split=0.25, subset="both", seed=7)
    assert "Found 4 files belonging to 2 classes." in capsys.readouterr().out
    assert len(train.file_paths) == 3 and len(validation.file_paths) == 1
    assert not set(train.file_paths) & set(validation.file_paths)
    only_validation = mk.utils.image_dataset_from_directory(image_folder, image_size=(8, 8), validation_split=0.25,
                                                            subset="validation", seed=7, verbose=False)
    assert only_validation.file_paths == validation.file_paths  # the same seed, the same split
    model = mk.Sequential([mk.layers.Rescaling(1 / 255), mk.layers.Flatten(), mk.layers.Dense(2)])
    model.compile(optimizer="adam", loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(train, validation_data=validation, epochs=2, verbose=0)
    assert len(history.history["val_loss"]) == 2
    assert model.predict(validation, verbose=0).shape == (1, 2)


def test_shuffling_is_seeded_and_reshuffles_each_epoch(image_folder):
    def order(seed):
        dataset = mk.utils.image_dataset_from_directory(image_folder, image_size=(2, 2), batch_size=1, seed=seed,
                                                        verbose=False)
        return dataset, [tuple(dataset[i][0].ravel()[:3]) for i in range(4)]

    first, first_order = order(3)
    assert order(3)[1] == first_order
    epochs = []
    for _ in range(4):
        epochs.append([tuple(images.ravel()[:3]) for images, _ in first])
    assert all(sorted(epoch) == sorted(first_order) for epoch in epochs)
    assert len({tuple(epoch) for epoch in epochs}) > 1


def test_image_loader_errors(tmp_path, image_folder):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="No images found in directory"):
        mk.utils.image_dataset_from_directory(tmp_path / "empty", verbose=False)
    with pytest.raises(ValueError, match="seed"):
        mk.utils.image_dataset_from_directory(image_folder, validation_split=0.5, subset="training")
    with pytest.raises(ValueError, match="`subset` is set, `validation_split` must be set"):
        mk.utils.image_dataset_from_directory(image_folder, subset="training", seed=1)
    with pytest.raises(ValueError, match="between 0 and 1"):
        mk.utils.image_dataset_from_directory(image_folder, validation_split=1.5, subset="training", seed=1)
    with pytest.raises(ValueError, match="label_mode"):
        mk.utils.image_dataset_from_directory(image_folder, label_mode="sparse")
    with pytest.raises(ValueError, match="exactly 2"):
        mk.utils.image_dataset_from_directory(image_folder, label_mode="binary", class_names=["cats"],
                                              verbose=False)
    with pytest.raises(ValueError, match="did not match the names of the subdirectories"):
        mk.utils.image_dataset_from_directory(image_folder, class_names=["cats", "birds"])
    with pytest.raises(ValueError, match="lengths of `labels` to match"):
        mk.utils.image_dataset_from_directory(image_folder, labels=[0, 1], verbose=False)
    with pytest.raises(ValueError, match="image_size"):
        mk.utils.image_dataset_from_directory(image_folder, image_size=(1, 2, 3))
    with pytest.raises(ValueError, match="color_mode"):
        mk.utils.image_dataset_from_directory(image_folder, color_mode="cmyk")
    with pytest.raises(ValueError, match="does not exist"):
        mk.utils.image_dataset_from_directory(tmp_path / "nowhere")
    binary = mk.utils.image_dataset_from_directory(image_folder, label_mode="binary", image_size=(2, 2),
                                                   shuffle=False, verbose=False, labels=[0, 1, 1, 0])
    assert binary[0][1].tolist() == [[0.0], [1.0], [1.0], [0.0]] and binary.class_names == ["0", "1"]


def test_text_dataset(tmp_path):
    for name, text in [("neg/1.txt", "bad movie"), ("neg/2.txt", "awful"), ("pos/1.txt", "great film"),
                       ("pos/skip.md", "ignored")]:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    dataset = mk.utils.text_dataset_from_directory(tmp_path, batch_size=8, shuffle=False, max_length=5,
                                                   verbose=False)
    texts, labels = dataset[0]
    assert texts.tolist() == ["bad m", "awful", "great"] and labels.tolist() == [0, 0, 1]
    assert labels.dtype == numpy.int32 and dataset.class_names == ["neg", "pos"]
    (tmp_path / "none").mkdir()
    with pytest.raises(ValueError, match="No text files found"):
        mk.utils.text_dataset_from_directory(tmp_path / "none", verbose=False)


def test_audio_dataset_equals_keras(tmp_path):
    for index, name in enumerate(["low/a.wav", "high/b.wav"]):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        with wave.open(str(tmp_path / name), "wb") as handle:
            handle.setnchannels(1)
            handle.setsampwidth(2)
            handle.setframerate(8000)
            handle.writeframes(_KERAS[f"wav_{index}"].tobytes())
    dataset = mk.utils.audio_dataset_from_directory(tmp_path, batch_size=2, shuffle=False, verbose=False)
    clips, labels = dataset[0]
    numpy.testing.assert_allclose(clips, _KERAS["audio"], atol=1e-7)
    numpy.testing.assert_array_equal(labels, _KERAS["audio_labels"])
    fixed = mk.utils.audio_dataset_from_directory(tmp_path, batch_size=2, shuffle=False, verbose=False,
                                                  output_sequence_length=7)
    assert fixed[0][0].shape == (2, 7, 1)
    resampled = mk.utils.audio_dataset_from_directory(tmp_path, batch_size=1, shuffle=False, verbose=False,
                                                      sampling_rate=16000)
    assert resampled[0][0].shape == (1, 12, 1)  # 6 samples at 8 kHz
    with pytest.raises(ValueError, match="ragged"):
        mk.utils.audio_dataset_from_directory(tmp_path, ragged=True)


@pytest.mark.parametrize("case, arguments", [
    ("plain", dict(sequence_length=4)), ("strided", dict(sequence_length=3, sequence_stride=2, sampling_rate=3)),
    ("range", dict(sequence_length=2, start_index=3, end_index=15))])
def test_timeseries_windows_equal_keras(case, arguments):
    data, targets = numpy.arange(40, dtype="float32").reshape(20, 2), numpy.arange(100, 120)
    dataset = mk.utils.timeseries_dataset_from_array(data, targets, batch_size=64, **arguments)
    windows, window_targets = dataset[0]
    numpy.testing.assert_array_equal(windows, _KERAS[f"windows_{case}"])
    numpy.testing.assert_array_equal(window_targets, _KERAS[f"targets_{case}"])


def test_timeseries_shuffle_batches_errors_and_fit():
    data = numpy.arange(30, dtype="float32")[:, None]
    dataset = mk.utils.timeseries_dataset_from_array(data, data[:, 0] + 1, sequence_length=5, batch_size=4,
                                                     shuffle=True, seed=2)
    assert len(dataset) == 7  # 26 windows
    windows, targets = dataset[0]
    numpy.testing.assert_array_equal(targets, windows[:, 0, 0] + 1)
    model = mk.Sequential([mk.layers.Flatten(), mk.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    assert len(model.fit(dataset, epochs=1, verbose=0).history["loss"]) == 1
    with pytest.raises(ValueError, match="sampling_rate"):
        mk.utils.timeseries_dataset_from_array(data, None, 3, sampling_rate=0)
    with pytest.raises(ValueError, match="end_index"):
        mk.utils.timeseries_dataset_from_array(data, None, 3, start_index=5, end_index=4)


def test_split_dataset_and_normalize():
    x, y = numpy.arange(20, dtype="float32").reshape(10, 2), numpy.arange(10)
    left, right = mk.utils.split_dataset((x, y), left_size=0.8, shuffle=True, seed=1)
    assert len(left) == 8 and len(right) == 2
    # Keras 3.15 on numpy.arange(10), left_size=0.8, shuffle=True, seed=1 gives these
    assert [int(left[i][1]) for i in range(8)] == [6, 8, 9, 7, 5, 3, 0, 4] and [int(right[i][1]) for i in (0, 1)] \
        == [1, 2]
    batches = left.batch(3)
    assert len(batches) == 3 and batches[0][0].shape == (3, 2)
    with pytest.raises(ValueError, match="At least one"):
        mk.utils.split_dataset(x)
    with pytest.raises(ValueError, match="left_size"):
        mk.utils.split_dataset(x, left_size=10)
    numpy.testing.assert_allclose(mk.utils.normalize(numpy.array([[3.0, 4.0], [0.0, 0.0]])),
                                  [[0.6, 0.8], [0.0, 0.0]])
    numpy.testing.assert_allclose(mk.utils.normalize(numpy.array([[1.0, 1.0]]), order=1), [[0.5, 0.5]])


def test_image_helpers_round_trip(tmp_path):
    pixels = _KERAS["pixels_0"]
    image = mk.utils.array_to_img(pixels, scale=False)
    assert image.size == (13, 9) and image.mode == "RGB"
    array = mk.utils.img_to_array(image)
    assert array.dtype == numpy.float32 and array.shape == (9, 13, 3)
    numpy.testing.assert_array_equal(array, pixels)
    assert mk.utils.img_to_array(image, data_format="channels_first").shape == (3, 9, 13)
    mk.utils.save_img(tmp_path / "x.png", pixels, scale=False)
    loaded = mk.utils.load_img(tmp_path / "x.png")
    numpy.testing.assert_array_equal(mk.utils.img_to_array(loaded), pixels)
    assert mk.utils.load_img(tmp_path / "x.png", color_mode="grayscale", target_size=(4, 5)).size == (5, 4)
    scaled = mk.utils.img_to_array(mk.utils.array_to_img(numpy.full((2, 2, 1), 0.5) + numpy.eye(2)[:, :, None]))
    assert scaled.max() == 255 and scaled.min() == 0
    with pytest.raises(ValueError, match="rank 3"):
        mk.utils.array_to_img(numpy.zeros((2, 2)))
