"""minikeras.config is both tf.config (devices, memory) and keras.config
(floatx, epsilon, image format, run limits, logging): the two sets of names
must not collide, and each name must mean its library's thing."""
import json
import pathlib
import warnings

import numpy
import pytest

import minikeras as mk

_RECORDED = json.loads((pathlib.Path(__file__).parent / "fixtures" / "keras_names.json").read_text())


def test_keras_config_and_tf_config_names_do_not_collide():
    keras_names, tf_names = set(_RECORDED["names"]["config"]), set(_RECORDED["tf_config"])
    assert not keras_names & tf_names
    for name in ("list_physical_devices", "set_visible_devices", "LogicalDeviceConfiguration"):
        assert hasattr(mk.config, name) and name in tf_names
    for name in ("floatx", "set_epsilon", "image_data_format", "max_epochs", "enable_interactive_logging"):
        assert hasattr(mk.config, name) and name in keras_names


def test_floatx_epsilon_image_data_format_round_trip_and_are_checked():
    assert mk.config.floatx() == "float32" and mk.config.epsilon() == 1e-7
    try:
        mk.config.set_floatx("float64")
        mk.config.set_epsilon(1e-5)
        mk.config.set_image_data_format("channels_first")
        assert (mk.config.floatx(), mk.backend.floatx()) == ("float64", "float64")
        assert mk.backend.epsilon() == 1e-5 and mk.backend.image_data_format() == "channels_first"
        assert mk.backend.result_type(int, float) == "float64"  # weak types resolve at floatx's precision
    finally:
        mk.config.set_floatx("float32")
        mk.config.set_epsilon(1e-7)
        mk.config.set_image_data_format("channels_last")
    with pytest.raises(ValueError):
        mk.config.set_floatx("int8")
    with pytest.raises(ValueError):
        mk.config.set_image_data_format("channels_middle")


def _fit(**kwargs):
    model = mk.Sequential([mk.layers.Dense(1, input_shape=(2,))])
    model.compile(optimizer="sgd", loss="mse")
    x, y = numpy.ones((40, 2), "float32"), numpy.ones((40, 1), "float32")
    return model, model.fit(x, y, batch_size=4, verbose=0, **kwargs)


def test_max_epochs_and_max_steps_per_epoch_cap_fit_with_a_warning():
    assert mk.config.max_epochs() is None and mk.config.max_steps_per_epoch() is None
    try:
        mk.config.set_max_epochs(2)
        mk.config.set_max_steps_per_epoch(3)
        with pytest.warns(UserWarning, match="Limiting epochs to 2"):
            model, history = _fit(epochs=5)
        assert history.epoch == [0, 1] and model.optimizer.iterations == 6  # 2 epochs of 3 steps
        with pytest.warns(UserWarning, match="Limiting steps_per_epoch to 3"):
            model.predict(numpy.ones((40, 2), "float32"), batch_size=4, verbose=0)
    finally:
        mk.config.set_max_epochs(None)
        mk.config.set_max_steps_per_epoch(None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model, history = _fit(epochs=2)
    assert model.optimizer.iterations == 20
    with pytest.raises(ValueError):
        mk.config.set_max_epochs(0)


def test_disabled_interactive_logging_sends_the_progress_line_to_logging(capsys, caplog):
    assert mk.config.is_interactive_logging_enabled() and mk.utils.is_interactive_logging_enabled()
    try:
        mk.config.disable_interactive_logging()
        assert not mk.utils.is_interactive_logging_enabled()
        with caplog.at_level("INFO", logger="minikeras"):
            _fit(epochs=1, **{})
            model = mk.Sequential([mk.layers.Dense(1, input_shape=(2,))])
            model.compile(optimizer="sgd", loss="mse")
            model.fit(numpy.ones((8, 2), "float32"), numpy.ones((8, 1), "float32"), epochs=1, verbose=1)
    finally:
        mk.config.enable_interactive_logging()
    assert capsys.readouterr().out == ""
    assert any("loss" in record.getMessage() for record in caplog.records)
    model.fit(numpy.ones((8, 2), "float32"), numpy.ones((8, 1), "float32"), epochs=1, verbose=1)
    assert "loss" in capsys.readouterr().out
