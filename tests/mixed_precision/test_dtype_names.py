""""float16" and "bfloat16" are accepted wherever a dtype is (bfloat16 through ml_dtypes)."""
import numpy
import pytest

import minikeras as mk

MAKERS = {
    "zeros": lambda dtype: mk.ops.zeros((2, 3), dtype=dtype),
    "full": lambda dtype: mk.ops.full((2,), 1.5, dtype=dtype),
    "arange": lambda dtype: mk.ops.arange(3, dtype=dtype),
    "tensor": lambda dtype: mk.tensor([1.0, 2.0], dtype=dtype),
    "cast": lambda dtype: mk.ops.cast(mk.tensor([1.0]), dtype),
    "astype": lambda dtype: mk.tensor([1.0]).astype(dtype),
    "normal": lambda dtype: mk.random.normal((2,), dtype=dtype),
    "uniform_seeded": lambda dtype: mk.random.uniform((2,), dtype=dtype, seed=3),
    "variable": lambda dtype: mk.Variable([1.0, 2.0], dtype=dtype),
    "initializer": lambda dtype: mk.initializers.GlorotUniform(seed=1)((2, 2), dtype=dtype),
    "input": lambda dtype: mk.layers.Input((2,), dtype=dtype),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("maker", sorted(MAKERS))
def test_16_bit_dtype_names_are_accepted(maker, dtype):
    made = MAKERS[maker](dtype)
    assert str(made.dtype) == dtype


def test_standardize_dtype_and_is_float_dtype():
    assert mk.backend.standardize_dtype("bfloat16") == "bfloat16"
    assert mk.backend.standardize_dtype(numpy.float16) == "float16"
    assert mk.backend.standardize_dtype(float) == "float32"
    assert mk.backend.standardize_dtype(None) == "float32"
    assert mk.backend.is_float_dtype(mk.tensor([1.0]).astype("bfloat16").dtype)
    assert not mk.backend.is_float_dtype("int32")
    with pytest.raises(ValueError, match="Invalid dtype"):
        mk.backend.standardize_dtype("float17")


def test_bfloat16_tensors_take_gradients():
    x = mk.Tensor(numpy.array([1.0, 2.0], "float32"), requires_grad=True)
    y = x.astype("bfloat16")
    z = mk.Tensor(y.numpy(), requires_grad=True)
    (z * z).sum().backward()
    (y * y).sum().backward()
    assert z.grad.dtype.name == "bfloat16" and x.grad.dtype == numpy.float32
    numpy.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
