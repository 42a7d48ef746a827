"""ops.weight_penalty: the value, float64 gradients, errors."""
import numpy
import pytest

from minikeras import ops
from tests.ops.op_check import check_op


@pytest.mark.parametrize("l1, l2", [(0.01, 0.0), (0.0, 0.3), (0.05, 0.2)])
def test_weight_penalty(rng, l1, l2):
    w = rng.normal(size=(3, 4))
    w = w + numpy.sign(w) * 0.05  # |w| has a kink at 0
    check_op(lambda t: ops.weight_penalty(t, l1, l2),
             lambda a: l1 * numpy.abs(a).sum() + l2 * (a * a).sum(), [w])


def test_weight_penalty_refuses_integers():
    with pytest.raises(TypeError, match="weight_penalty needs a floating-point x, received dtype int"):
        ops.weight_penalty(numpy.ones((2, 2), "int32"), 0.1, 0.1)
