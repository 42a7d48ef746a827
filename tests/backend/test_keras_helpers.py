"""keras.backend-style helpers (minikeras/backend/keras_helpers.py)."""
import pytest

import minikeras as mk
from minikeras import backend


def test_defaults_and_setters_round_trip():
    assert backend.backend() == "minikeras"
    assert backend.image_data_format() == "channels_last" and backend.epsilon() == 1e-7
    assert backend.floatx() == "float32"
    try:
        backend.set_image_data_format("channels_first")
        backend.set_epsilon(1e-5)
        backend.set_floatx("float64")
        assert backend.image_data_format() == "channels_first" and backend.epsilon() == 1e-5
        assert backend.floatx() == "float64"
    finally:
        backend.set_image_data_format("channels_last")
        backend.set_epsilon(1e-7)
        backend.set_floatx("float32")


@pytest.mark.parametrize("setter, value", [
    (backend.set_image_data_format, "channels_middle"), (backend.set_epsilon, 0), (backend.set_floatx, "int8"),
])
def test_bad_settings_are_refused(setter, value):
    with pytest.raises(ValueError):
        setter(value)


def test_clear_session_restarts_default_names():
    mk.layers.Dense(1)
    backend.clear_session()
    assert mk.layers.Dense(1).name == "dense" and mk.layers.Dense(1).name == "dense_1"
    mk.utils.clear_session()
    assert mk.layers.Dense(1).name == "dense"
