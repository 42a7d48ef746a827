"""utils.to_categorical on Tensors (an explicit host copy, never numpy.asarray of device data)."""
import numpy

import minikeras as mk
from minikeras import utils


def test_to_categorical_takes_tensors():
    out = utils.to_categorical(mk.tensor(numpy.array([2, 0])), num_classes=3)
    numpy.testing.assert_array_equal(out, [[0, 0, 1], [1, 0, 0]])


def test_to_categorical_like_keras():
    out = utils.to_categorical([[1], [0], [3]])
    assert out.shape == (3, 4) and out.dtype == numpy.float32
    numpy.testing.assert_array_equal(out.argmax(axis=1), [1, 0, 3])


def test_to_categorical_errors():
    import pytest

    with pytest.raises(ValueError, match="integer"):
        utils.to_categorical([0.5, 1.0])
    with pytest.raises(ValueError, match=r"\[0, 2\)"):
        utils.to_categorical([0, 2], num_classes=2)
