"""keras.preprocessing as Keras 3 keeps it: the dataset utilities, the
image helpers (with smart_resize) and pad_sequences under their old
addresses, used as keras.io's scripts use them."""
import numpy
import pytest

import minikeras as keras


def test_the_aliases_are_the_utilities():
    assert keras.preprocessing.image_dataset_from_directory is keras.utils.image_dataset_from_directory
    assert keras.preprocessing.text_dataset_from_directory is keras.utils.text_dataset_from_directory
    assert keras.preprocessing.timeseries_dataset_from_array is keras.utils.timeseries_dataset_from_array
    assert keras.preprocessing.sequence.pad_sequences is keras.utils.pad_sequences
    for name in ("array_to_img", "img_to_array", "load_img", "save_img"):
        assert getattr(keras.preprocessing.image, name) is getattr(keras.utils, name)


def test_timeseries_through_preprocessing_the_keras_io_way():
    data = numpy.arange(100, dtype="float32")[:, None]
    dataset = keras.preprocessing.timeseries_dataset_from_array(data[:-10], data[10:], sequence_length=10,
                                                                batch_size=32)
    for batch in dataset.take(1):
        inputs, targets = batch
    numpy.testing.assert_array_equal(inputs.numpy()[3, :, 0], numpy.arange(3, 13))
    numpy.testing.assert_array_equal(targets.numpy()[3], [13.0])  # the step after the window
    assert int(dataset.cardinality()) == 3


def test_smart_resize_crops_the_centre_then_resizes():
    image = numpy.arange(4 * 8 * 1, dtype="float32").reshape(4, 8, 1)
    resized = keras.preprocessing.image.smart_resize(image, (2, 2), interpolation="nearest")
    # The centred 4x4 crop (columns 2-5), then nearest with half-pixel centres: rows 1, 3; columns 3, 5.
    numpy.testing.assert_array_equal(resized[:, :, 0], [[11.0, 13.0], [27.0, 29.0]])
    batch = keras.preprocessing.image.smart_resize(numpy.stack([image, image + 1]), (2, 2), interpolation="nearest")
    assert batch.shape == (2, 2, 2, 1) and batch.dtype == numpy.float32
    numpy.testing.assert_array_equal(batch[1], resized + 1)
    first = keras.preprocessing.image.smart_resize(image.transpose(2, 0, 1), (2, 2), interpolation="nearest",
                                                   data_format="channels_first")
    numpy.testing.assert_array_equal(first[0], resized[:, :, 0])
    with pytest.raises(ValueError, match="incorrect rank"):
        keras.preprocessing.image.smart_resize(numpy.zeros((4, 4)), (2, 2))


def test_smart_resize_equals_keras_live():
    keras_module = pytest.importorskip("keras", reason="Keras 3 is not installed (comparison only)")
    image = numpy.random.default_rng(0).uniform(0, 255, (37, 53, 3)).astype("float32")
    for size in ((20, 20), (30, 10), (64, 80)):
        theirs = numpy.asarray(keras_module.preprocessing.image.smart_resize(image, size))
        numpy.testing.assert_allclose(keras.preprocessing.image.smart_resize(image, size), theirs, atol=2e-3)
