"""bfloat16 counts as a float in ops that branch on "is this a float?"
(its NumPy dtype.kind is "V", not "f"), and 16-bit limits come from
``dtypes.finfo``, which answers for bfloat16 too."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from minikeras.backend.dtypes import finfo


def _bf16(values):
    return mk.tensor(numpy.asarray(values, "float32")).astype("bfloat16")


def test_finfo_answers_for_every_float_dtype():
    assert float(finfo("bfloat16").max) == pytest.approx(3.3895e38, rel=1e-4)
    assert float(finfo("float16").max) == 65504.0
    assert finfo(numpy.float32).bits == 32


def test_saturate_cast_clips_to_16_bit_ranges():
    out = ops.saturate_cast(_bf16([1e30, -1e30, 1.0]), "float16")
    numpy.testing.assert_array_equal(out.numpy(), [65504.0, -65504.0, 1.0])
    assert ops.saturate_cast(mk.tensor(numpy.array([1e39])), "bfloat16").numpy().astype("float64")[0] < numpy.inf


def test_nan_and_infinity_predicates_and_rounding_on_bfloat16():
    x = _bf16([numpy.nan, -numpy.inf, numpy.inf, -1.75])
    numpy.testing.assert_array_equal(ops.isneginf(x).numpy(), [False, True, False, False])
    numpy.testing.assert_array_equal(ops.isposinf(x).numpy(), [False, False, True, False])
    assert ops.trunc(_bf16([-1.75])).numpy().astype("float32")[0] == -1.0
    summed = ops.nancumsum(_bf16([1.0, numpy.nan, 2.0]))
    assert summed.dtype.name == "bfloat16"
    numpy.testing.assert_array_equal(summed.numpy().astype("float32"), [1.0, 1.0, 3.0])


@pytest.mark.parametrize("op", [ops.linspace, ops.geomspace])
def test_spaces_in_bfloat16(op):
    out = op(1.0, 8.0, 4, dtype="bfloat16")
    assert out.dtype.name == "bfloat16"
    assert out.numpy().astype("float32")[-1] == 8.0


def test_take_refuses_bfloat16_indices_as_it_refuses_float_ones():
    with pytest.raises(TypeError, match="indices must be integers"):
        ops.take(mk.tensor(numpy.arange(4.0)), _bf16([1.0, 2.0]))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16_bit_attention_is_the_float32_result_rounded_once(dtype):
    q = mk.tensor(numpy.random.default_rng(0).standard_normal((2, 64, 2, 32)).astype("float32")).astype(dtype)
    out = ops.dot_product_attention(q, q, q)
    assert out.dtype.name == dtype
    wide = q.astype("float32")
    expected = ops.dot_product_attention(wide, wide, wide).numpy()
    step = 2.0 ** -8 if dtype == "bfloat16" else 2.0 ** -11  # half a unit in the last place at 1
    numpy.testing.assert_allclose(out.numpy().astype("float32"), expected, atol=2 * step, rtol=step)


def test_sparse_softmax_cross_entropy_takes_bfloat16_class_ids_as_float_ones():
    from minikeras.ops.nn.softmax import sparse_softmax_cross_entropy

    logits = mk.tensor(numpy.array([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]], "float32"))
    expected = sparse_softmax_cross_entropy(logits, mk.tensor(numpy.array([2, 0]))).numpy()
    numpy.testing.assert_array_equal(sparse_softmax_cross_entropy(logits, _bf16([2.0, 0.0])).numpy(), expected)
