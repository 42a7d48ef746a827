"""``fit(..., epochs=1)`` prints no ``Epoch 1/1`` line, as Keras 3 (tf.keras
2 printed it; Keras 3's ProgbarLogger prints ``Epoch i/n`` only when
``epochs > 1``). Compared with Keras 3.15 live where it is installed."""
import numpy
import pytest

import minikeras as mk


def _lines(fit_module, capsys):
    model = fit_module.Sequential([fit_module.Input((2,)), fit_module.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = numpy.ones((8, 2), "float32"), numpy.ones((8, 1), "float32")
    capsys.readouterr()
    model.fit(x, y, epochs=1, verbose=2)
    one = capsys.readouterr().out
    model.fit(x, y, epochs=2, verbose=2)
    two = capsys.readouterr().out
    return one, two


def test_epoch_lines_as_keras_3_live(capsys):
    keras = pytest.importorskip("keras", reason="Keras 3 is not installed (comparison only)")
    theirs = _lines(keras, capsys)
    ours = _lines(mk, capsys)
    assert "Epoch" not in theirs[0] and "Epoch" not in ours[0]
    assert theirs[1].count("Epoch ") == ours[1].count("Epoch ") == 2 and "Epoch 2/2" in ours[1]
