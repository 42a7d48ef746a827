"""utils.set_random_seed seeds Python, NumPy and minikeras at once."""
import random as python_random

import numpy
import pytest

import minikeras as mk
from minikeras import utils


def _draws():
    model = mk.Sequential([mk.layers.Input(shape=(3,)), mk.layers.Dense(2)])
    return (python_random.random(), numpy.random.rand(), mk.random.uniform((3,)).numpy(),
            model.get_weights()[0])


def test_same_seed_same_everything():
    utils.set_random_seed(11)
    first = _draws()
    utils.set_random_seed(11)
    second = _draws()
    assert first[0] == second[0] and first[1] == second[1]
    numpy.testing.assert_array_equal(first[2], second[2])
    numpy.testing.assert_array_equal(first[3], second[3])
    utils.set_random_seed(12)
    assert _draws()[0] != first[0]


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True])
def test_bad_seed(seed):
    with pytest.raises(ValueError, match="non-negative int"):
        utils.set_random_seed(seed)

