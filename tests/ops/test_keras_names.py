"""ops.shape / ops.one_hot / ops.convert_to_tensor and tensor == / != under Keras 3's names."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops


def test_shape_is_callable_on_tensors_arrays_and_lists():
    assert ops.shape(mk.tensor(numpy.zeros((2, 3, 4)))) == (2, 3, 4)
    assert ops.shape(numpy.zeros((5,))) == (5,)
    assert ops.shape([[1, 2, 3], [4, 5, 6]]) == (2, 3)
    assert all(type(size) is int for size in ops.shape(mk.tensor(numpy.zeros((2, 3)))))


def test_shape_ops_are_still_there():
    # ops.shape the function shadows the module's name; its ops stay exported.
    assert ops.reshape(mk.tensor(numpy.arange(6.0)), (2, 3)).shape == (2, 3)


@pytest.mark.parametrize("spelling", ["positional", "num_classes", "depth"])
def test_one_hot_keras_signature(spelling):
    ids = numpy.array([[0, 2], [1, 3]])
    if spelling == "positional":
        out = ops.one_hot(ids, 3)
    else:
        out = ops.one_hot(ids, **{spelling: 3})
    expected = numpy.zeros((2, 2, 3), "float32")
    expected[0, 0, 0] = expected[0, 1, 2] = expected[1, 0, 1] = 1  # id 3 is out of range: zero row
    numpy.testing.assert_array_equal(out.numpy(), expected)
    assert out.dtype == numpy.float32


def test_one_hot_axis_dtype_and_lists():
    out = ops.one_hot([1, 0], num_classes=2, axis=0, dtype="float64")
    numpy.testing.assert_array_equal(out.numpy(), [[0, 1], [1, 0]])
    assert out.dtype == numpy.float64


def test_one_hot_errors():
    with pytest.raises(ValueError, match="num_classes"):
        ops.one_hot([1, 2])
    with pytest.raises(ValueError, match="give one"):
        ops.one_hot([1, 2], num_classes=3, depth=4)
    with pytest.raises(ValueError, match="sparse"):
        ops.one_hot([1, 2], 3, sparse=True)


def test_convert_to_tensor_dtypes_like_keras():
    assert ops.convert_to_tensor([1, 2]).dtype == numpy.int32
    assert ops.convert_to_tensor([1.5, 2]).dtype == numpy.float32
    assert ops.convert_to_tensor(3.0).dtype == numpy.float32
    assert ops.convert_to_tensor(numpy.zeros(2, "float64")).dtype == numpy.float64
    assert ops.convert_to_tensor([1, 2], dtype="float16").dtype == numpy.float16
    numpy.testing.assert_array_equal(ops.convert_to_tensor([[1, 2]]).numpy(), [[1, 2]])


def test_convert_to_tensor_keeps_or_casts_tensors():
    x = mk.tensor([1.0, 2.0])
    assert ops.convert_to_tensor(x) is x
    assert ops.convert_to_tensor(x, dtype="float32") is x
    assert ops.convert_to_tensor(x, dtype="int32").dtype == numpy.int32


def test_convert_to_tensor_errors():
    with pytest.raises(ValueError, match="numbers"):
        ops.convert_to_tensor(["a", "b"])
    with pytest.raises(ValueError, match="sparse"):
        ops.convert_to_tensor([1], sparse=True)


def test_equality_operators_are_elementwise():
    a = mk.tensor([1.0, 2.0, 3.0])
    b = mk.tensor([1.0, 5.0, 3.0])
    equal, not_equal = a == b, a != b
    assert isinstance(equal, mk.Tensor) and equal.dtype == numpy.bool_
    numpy.testing.assert_array_equal(equal.numpy(), [True, False, True])
    numpy.testing.assert_array_equal(not_equal.numpy(), [False, True, False])
    numpy.testing.assert_array_equal((a == 2.0).numpy(), [False, True, False])
    numpy.testing.assert_array_equal((2.0 != a).numpy(), [True, False, True])
    numpy.testing.assert_array_equal((a < b).numpy(), [False, True, False])


def test_tensors_stay_hashable_by_identity():
    a, b = mk.tensor([1.0]), mk.tensor([1.0])
    assert len({a, b}) == 2
    assert {a: 1}[a] == 1
