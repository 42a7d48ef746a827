"""utils.to_categorical on Tensors (an explicit host copy, never numpy.asarray of device data)."""
import numpy

import minikeras as mk
from minikeras import utils


def test_to_categorical_takes_tensors():
    out = utils.to_categorical(mk.tensor(numpy.array([2, 0])), num_classes=3)
    numpy.testing.assert_array_equal(out, [[0, 0, 1], [1, 0, 0]])
