"""Traceback filtering (minikeras/_support/traceback_utils.py), as Keras's:
errors leaving fit/evaluate/predict and layer calls show the user's frames,
not ten frames of the training loop."""
import os
import traceback

import numpy
import pytest

import minikeras as mk
from minikeras import layers

PACKAGE = os.path.dirname(os.path.abspath(mk.__file__)) + os.sep


class Broken(layers.Layer):
    """A user's layer whose call fails in the user's own code."""

    def call(self, inputs):
        raise ValueError("the user's own bug")


def _raised(run):
    with pytest.raises(Exception) as info:
        run()
    return info.value, [frame for frame, _ in traceback.walk_tb(info.value.__traceback__)]


def _library_files(frames):
    return [os.path.relpath(f.f_code.co_filename, PACKAGE) for f in frames
            if os.path.abspath(f.f_code.co_filename).startswith(PACKAGE)]


@pytest.fixture
def filtering():
    yield
    mk.config.enable_traceback_filtering()


def _fit_with_a_broken_train_step():
    class Custom(mk.Model):
        def train_step(self, data):
            x, _ = data
            return {"loss": self.missing_attribute(x)}  # the user's mistake

    inputs = layers.Input(shape=(2,))
    model = Custom(inputs, layers.Dense(1)(inputs))
    model.compile("sgd", "mse")
    model.fit(numpy.ones((4, 2), "float32"), numpy.ones((4, 1), "float32"), verbose=0)


def test_errors_from_fit_keep_the_users_frames_and_drop_the_librarys(filtering):
    assert mk.config.is_traceback_filtering_enabled()  # Keras's default
    error, frames = _raised(_fit_with_a_broken_train_step)
    assert isinstance(error, AttributeError) and "missing_attribute" in str(error)
    names = [frame.f_code.co_name for frame in frames]
    assert "train_step" in names and "_fit_with_a_broken_train_step" in names
    # Only the re-raising wrapper is left of the library (Keras shows its error_handler too).
    assert _library_files(frames) == [os.path.join("_support", "traceback_utils.py")]

    mk.config.disable_traceback_filtering()
    assert not mk.config.is_traceback_filtering_enabled()
    error, frames = _raised(_fit_with_a_broken_train_step)
    library = _library_files(frames)
    assert os.path.join("models", "training.py") in library and len(library) >= 3


def test_a_library_check_keeps_the_frame_that_raised_it_and_its_message(filtering):
    model = mk.Sequential([layers.Input(shape=(2,)), layers.Dense(1)])

    def call_with_a_wrong_shape():
        model.predict(numpy.ones((3, 5), "float32"), verbose=0)

    error, frames = _raised(call_with_a_wrong_shape)
    assert isinstance(error, ValueError) and "expected shape (None, 2), received (3, 5)" in str(error)
    library = _library_files(frames)
    assert len(library) == 2 and library[0] == os.path.join("_support", "traceback_utils.py")
    assert frames[-1].f_code.co_filename.startswith(PACKAGE)  # where the check raised


def test_errors_in_a_users_layer_called_directly_are_filtered_too(filtering):
    layer = Broken()
    error, frames = _raised(lambda: layer(numpy.ones((1, 2), "float32")))
    assert str(error) == "the user's own bug" and frames[-1].f_code.co_name == "call"
    assert len(_library_files(frames)) == 1


def test_the_cause_of_an_error_is_kept(filtering):
    class Wrapping(layers.Layer):
        def call(self, inputs):
            try:
                {}["key"]
            except KeyError as missing:
                raise RuntimeError("wrapped") from missing

    error, _ = _raised(lambda: Wrapping()(numpy.ones((1, 2), "float32")))
    assert isinstance(error.__cause__, KeyError)


def test_a_model_called_directly_shows_one_library_frame(filtering):
    inputs = layers.Input(shape=(2,))
    model = mk.Model(inputs, layers.Dense(1)(inputs))
    error, frames = _raised(lambda: model(numpy.ones((3, 5), "float32")))
    assert isinstance(error, ValueError)
    library = _library_files(frames)
    assert library[0] == os.path.join("_support", "traceback_utils.py") and len(library) == 2
