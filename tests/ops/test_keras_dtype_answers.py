"""Result dtypes (and a few shapes) where the Keras-referenced fuzz (issue 36)
found minikeras answering unlike Keras 3.15: each check quotes Keras's
answer (TensorFlow backend, checked against its source and torch backend)."""
import numpy
import pytest

from minikeras import ops


def _array(*shape):
    return numpy.linspace(-1.0, 1.0, int(numpy.prod(shape))).astype("float32").reshape(shape)


def test_the_square_of_bools_is_int32():
    out = ops.square(numpy.array([True, False]))
    assert out.dtype == numpy.int32 and out.numpy().tolist() == [1, 0]  # Keras casts bools to int32; was int8


def test_attention_computes_in_the_dtype_its_inputs_promote_to():
    q = _array(1, 3, 2, 4)
    assert ops.dot_product_attention(q.astype("float16"), q, q).dtype == numpy.float32  # was float16
    assert ops.dot_product_attention(q, q.astype("float64"), q).dtype == numpy.float64  # was float32
    as_bool = ops.dot_product_attention(q > 0, q, q)  # Keras takes bool operands (was refused)
    expected = ops.dot_product_attention((q > 0).astype("float32"), q, q)
    assert as_bool.dtype == numpy.float32
    numpy.testing.assert_allclose(as_bool.numpy(), expected.numpy())


def test_attention_values_may_have_their_own_head_size():
    q = _array(1, 3, 2, 4)
    value = _array(1, 3, 2, 5)
    out = ops.dot_product_attention(q, q, value)  # Keras: (B, T, N, Hv); was refused
    assert out.shape == (1, 3, 2, 5)
    scores = numpy.einsum("btnh,bsnh->bnts", q, q) / 2.0
    weights = numpy.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    numpy.testing.assert_allclose(out.numpy(), numpy.einsum("bnts,bsnh->btnh", weights, value), rtol=1e-5, atol=1e-6)
    assert ops.dot_product_attention(q, q, value[..., :0]).shape == (1, 3, 2, 0)


def test_attention_gradient_with_another_value_head_size():
    import minikeras as mk
    from minikeras.autograd import gradcheck

    tensors = [mk.Tensor(_array(1, 3, 2, 4).astype("float64") * s, requires_grad=True) for s in (1.0, 0.5)]
    value = mk.Tensor(_array(1, 3, 2, 5).astype("float64"), requires_grad=True)
    assert gradcheck(lambda q, k, v: ops.dot_product_attention(q, k, v), tensors + [value])


def test_batch_normalization_keeps_a_float_input_dtype():
    x, stats = _array(2, 3), numpy.array([0.0, 0.5, 1.0], "float32")
    out = ops.batch_normalization(x.astype("float16"), stats, stats + 1, axis=-1)
    assert out.dtype == numpy.float16  # Keras (TensorFlow): x's dtype; was float32
    assert ops.batch_normalization(x, stats.astype("float64"), stats + 1, axis=-1).dtype == numpy.float32
    numpy.testing.assert_allclose(out.numpy(), (x - stats) / numpy.sqrt(stats + 1 + 1e-3), atol=2e-3)


def test_geomspace_is_floatx_whatever_the_endpoints():
    out = ops.geomspace(numpy.array([1.0, 2.0]), numpy.array([4.0, 8.0], "float32"), 3)
    assert out.dtype == numpy.float32  # Keras casts the endpoints to floatx; was float64
    numpy.testing.assert_allclose(out.numpy(), [[1, 2], [2, 4], [4, 8]], rtol=1e-6)
    assert ops.geomspace(1.0, 4.0, 3, dtype="float64").dtype == numpy.float64


def test_a_0_d_integer_bound_does_not_widen_clip():
    out = ops.clip(_array(2, 3), -0.5, numpy.array(3, "int32"))
    assert out.dtype == numpy.float32  # Keras keeps x's dtype; was float64
    numpy.testing.assert_allclose(out.numpy(), numpy.clip(_array(2, 3), -0.5, 3))


@pytest.mark.parametrize("args, dtype, values", [
    ((numpy.int64(3),), "int64", [0, 1, 2]),  # Keras: the dtype of each argument; was int32
    ((numpy.array(3, "int32"),), "int32", [0, 1, 2]),  # was float32
    ((0, 7, numpy.array(3, "int32")), "int32", [0, 3, 6]),
    ((0, 3, None), "int32", [0, 1, 2]),  # step=None is 1 (NumPy, Keras); was refused
    ((3,), "int32", [0, 1, 2]),
    ((0.0, 1.5, 0.5), "float32", [0.0, 0.5, 1.0]),
])
def test_arange_takes_keras_dtypes(args, dtype, values):
    out = ops.arange(*args)
    assert out.dtype == numpy.dtype(dtype) and out.numpy().tolist() == values


def test_the_vandermonde_matrix_of_bools_is_bools():
    out = ops.vander(numpy.array([True, False]))
    assert out.dtype == numpy.bool_ and out.numpy().tolist() == [[True, True], [False, True]]  # was int32


@pytest.mark.parametrize("x", [numpy.float32(-1.0), numpy.array(0.5, "float32"), 2])
def test_the_view_of_a_scalar_is_a_scalar(x):
    out = ops.view(x, "int32")
    assert out.shape == ()  # was (1,)
    assert int(out.numpy()) == int(numpy.asarray(x, "float32" if isinstance(x, float) or hasattr(x, "dtype")
                                                 else "int32").view("int32"))


@pytest.mark.parametrize("axis, expected", [(-1, [1, 0, 1, 0]), (1, [1, 0, 1, 0]), (0, [1, 1])])
def test_multi_hot_is_keras_one_hot_then_max_over_axis_0_of_a_vector(axis, expected):
    # Keras (every backend): max(one_hot(x, n, axis), axis=1 if x.ndim > 1 else 0)
    out = ops.multi_hot(numpy.array([0, 2], "int32"), 4, axis=axis)
    assert out.numpy().tolist() == expected  # axis=0 gave [1, 0, 1, 0], axis=1 was refused
    assert ops.multi_hot(numpy.array([[0, 2], [1, 1]]), 4).numpy().tolist() == [[1, 0, 1, 0], [0, 1, 0, 0]]
    assert float(ops.multi_hot(numpy.array(2, "int32"), 4).numpy()) == 1.0  # a scalar id: the max of its one-hot


def test_bool_ids_are_classes_zero_and_one():
    assert ops.one_hot(numpy.array([True, False]), 3).numpy().tolist() == [[0, 1, 0], [1, 0, 0]]  # was refused
    assert ops.multi_hot(numpy.array([True, True]), 3).numpy().tolist() == [0, 1, 0]
