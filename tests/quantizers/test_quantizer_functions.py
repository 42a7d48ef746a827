"""keras.quantizers' functions and classes against Keras 3.15's recorded answers
(fixtures/record_keras_quantizers.py), float8 rounding against ml_dtypes,
and the fake-quant gradient by finite differences."""
import ml_dtypes
import numpy
import pytest

import minikeras as mk
from minikeras import quantizers as Q
from minikeras.ops.nn.float8 import FLOAT8_FORMATS, round_to_float8
from tests.quantizers.keras_fixtures import cases, names


@pytest.mark.parametrize("label, axis", [("last", -1), ("first", 0), ("all", (0, 1))])
@pytest.mark.parametrize("to_numpy", [False, True])
def test_abs_max_quantize_as_keras(label, axis, to_numpy):
    recorded = cases()
    quantized, scale = Q.abs_max_quantize(recorded["x"], axis=axis, to_numpy=to_numpy)
    assert quantized.dtype == numpy.int8 and scale.dtype == numpy.float32
    numpy.testing.assert_array_equal(quantized.numpy(), recorded[f"abs_max_{label}_{int(to_numpy)}_q"])
    numpy.testing.assert_allclose(scale.numpy(), recorded[f"abs_max_{label}_{int(to_numpy)}_s"], rtol=1e-6)


def test_abs_max_quantizer_int4_range_and_config():
    recorded = cases()
    quantizer = Q.AbsMaxQuantizer(value_range=(-8, 7))
    quantized, scale = quantizer(recorded["x"], axis=0)
    numpy.testing.assert_array_equal(quantized.numpy(), recorded["abs_max_int4_q"])
    numpy.testing.assert_allclose(scale.numpy(), recorded["abs_max_int4_s"], rtol=1e-6)
    for key, quantizer in (("abs_max", Q.AbsMaxQuantizer()), ("abs_max_axis", Q.AbsMaxQuantizer(axis=0,
                                                                                               value_range=(-8, 7)))):
        assert _as_json(Q.serialize(quantizer)) == names()["serialized"][key]
        again = Q.deserialize(_as_json(Q.serialize(quantizer)))
        assert again.get_config() == quantizer.get_config()


def test_abs_max_quantizer_refuses_an_int8_range_outside_int8():
    with pytest.raises(ValueError, match=r"requires value_range to be within the interval \[-128, 127\]"):
        Q.AbsMaxQuantizer(value_range=(-200, 127))
    with pytest.raises(TypeError, match="axis"):
        Q.abs_max_quantize(numpy.ones((2, 2), "float32"), axis="rows")


def test_float8_scale_and_history_as_keras():
    recorded = cases()
    for amax, scale, expected, margin_expected in zip(recorded["f8_amax"], recorded["f8_scale"],
                                                      recorded["f8_new_scale_e4m3"], recorded["f8_new_scale_margin"]):
        numpy.testing.assert_allclose(Q.compute_float8_scale(amax, scale, numpy.float32(448.0)).numpy(), expected,
                                      rtol=1e-6)
        numpy.testing.assert_allclose(Q.compute_float8_scale(amax, scale, numpy.float32(57344.0), margin=2).numpy(),
                                      margin_expected, rtol=1e-6)
    numpy.testing.assert_array_equal(Q.compute_float8_amax_history(recorded["x"], recorded["f8_history"]).numpy(),
                                     recorded["f8_history_next"])


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2"])
def test_quantize_and_dequantize_as_keras(dtype):
    recorded = cases()
    for scale in (1.0, 0.37, 12.5):
        result = Q.quantize_and_dequantize(recorded["qdq_x"], numpy.float32(scale), dtype, "float32")
        numpy.testing.assert_array_equal(result.numpy(), recorded[f"qdq_{dtype}_{scale}"])
    result = Q.quantize_and_dequantize(mk.tensor(recorded["qdq_x"]).astype("bfloat16"), numpy.float32(0.37), dtype,
                                       "bfloat16")
    assert result.dtype.name == "bfloat16"
    numpy.testing.assert_array_equal(result.numpy().astype("float32"), recorded[f"qdq_{dtype}_bf16"])
    with pytest.raises(ValueError, match="float8_e4m3fn"):
        Q.quantize_and_dequantize(recorded["qdq_x"], 1.0, "int8", "float32")


def test_quantize_and_dequantize_gradient_passes_where_not_clipped():
    x = mk.tensor(numpy.array([0.3, 500.0, -600.0, 2.0], "float32"), requires_grad=True)
    Q.quantize_and_dequantize(x, numpy.float32(1.0), "float8_e4m3fn", "float32").sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 0.0, 1.0])


@pytest.mark.parametrize("name", sorted(FLOAT8_FORMATS))
def test_float8_rounding_equals_ml_dtypes_everywhere_in_range(name):
    # Every float8 value, every midpoint (ties to even) and its neighbours, and random values over
    # 18 decades: the emulation that runs on every device equals the real cast.
    dtype = getattr(ml_dtypes, name)
    largest = float(ml_dtypes.finfo(dtype).max)
    grid = numpy.arange(256, dtype=numpy.uint8).view(dtype).astype(numpy.float32)
    grid = numpy.sort(grid[numpy.isfinite(grid)])
    middles = ((grid[:-1].astype(numpy.float64) + grid[1:]) / 2).astype(numpy.float32)
    rng = numpy.random.default_rng(0)
    values = numpy.concatenate([grid, middles, numpy.nextafter(middles, -numpy.inf),
                                numpy.nextafter(middles, numpy.inf), rng.uniform(-largest, largest, 20000),
                                rng.normal(size=20000) * 10.0 ** rng.uniform(-14, 4, 20000)]).astype(numpy.float32)
    values = numpy.clip(values, -largest, largest)
    expected = values.astype(dtype).astype(numpy.float32)
    numpy.testing.assert_array_equal(round_to_float8(numpy, values, name), expected)
    on_device = Q.quantize_and_dequantize(values, numpy.float32(1.0), name, "float32")
    numpy.testing.assert_array_equal(on_device.numpy(), expected)


@pytest.mark.parametrize("label, minimum, maximum, bits, narrow, axis", [
    ("tensor", -1.0, 1.5, 8, False, None), ("narrow4", -0.7, 2.2, 4, True, None),
    ("channel", [-1.0, -2.0, -0.5, 0.1], [1.0, 0.5, 3.0, 2.0], 8, False, -1),
    ("channel0", numpy.linspace(-1, -0.2, 5), numpy.linspace(0.3, 2, 5), 6, False, 0),
])
def test_fake_quant_as_keras_with_its_gradients(label, minimum, maximum, bits, narrow, axis):
    recorded = cases()
    x = mk.tensor(recorded["fq_x"], requires_grad=True)
    low = mk.tensor(numpy.asarray(minimum, "float32"), requires_grad=True)
    high = mk.tensor(numpy.asarray(maximum, "float32"), requires_grad=True)
    out = Q.fake_quant_with_min_max_vars(x, low, high, num_bits=bits, narrow_range=narrow, axis=axis)
    numpy.testing.assert_allclose(out.numpy(), recorded[f"fq_{label}_out"], atol=1e-6)
    (out * mk.tensor(numpy.arange(1, 21, dtype="float32").reshape(5, 4))).sum().backward()
    for name, tensor in (("x", x), ("min", low), ("max", high)):
        numpy.testing.assert_allclose(tensor.grad.numpy(), recorded[f"fq_{label}_grad_{name}"], rtol=1e-6)


def test_fake_quant_gradients_are_the_straight_through_estimator():
    # Not the derivative of the rounded function (zero almost everywhere): TensorFlow's estimator,
    # which Keras defines. Inside the nudged range the gradient passes to x; where x was clamped it
    # goes to min (below) or max (above), summed per channel.
    x = mk.tensor(numpy.array([[-3.0, 0.2, 5.0], [-0.5, 9.0, -7.0]], "float32"), requires_grad=True)
    low = mk.tensor(numpy.array([-1.0, -1.0, -1.0], "float32"), requires_grad=True)
    high = mk.tensor(numpy.array([1.0, 1.0, 1.0], "float32"), requires_grad=True)
    Q.fake_quant_with_min_max_vars(x, low, high, axis=1).sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [[0, 1, 0], [1, 0, 0]])
    numpy.testing.assert_array_equal(low.grad.numpy(), [1, 0, 1])
    numpy.testing.assert_array_equal(high.grad.numpy(), [0, 1, 1])


def test_fake_quant_refuses_mismatched_ranges():
    with pytest.raises(ValueError, match="scalar min_vals and max_vals"):
        Q.fake_quant_with_min_max_vars(numpy.ones((2, 3), "float32"), [0.0, 1.0], 1.0)
    with pytest.raises(ValueError, match="1 or 3 values"):
        Q.fake_quant_with_min_max_vars(numpy.ones((2, 3), "float32"), [0.0, 1.0], [1.0, 2.0], axis=1)
    with pytest.raises(TypeError, match="float inputs"):
        Q.fake_quant_with_min_max_vars(numpy.ones((2, 3), "int32"), 0.0, 1.0)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_pack_and_unpack_int4_as_keras(axis):
    recorded = cases()
    packed, shape, length = Q.pack_int4(recorded["int4_values"], axis=axis)
    numpy.testing.assert_array_equal(packed.numpy(), recorded[f"int4_packed_{axis}"])
    assert shape == recorded[f"int4_packed_{axis}"].shape and length == recorded["int4_values"].shape[axis]
    unpacked = Q.unpack_int4(packed, length, axis=axis)
    numpy.testing.assert_array_equal(unpacked.numpy(), recorded["int4_values"])


def test_int4_packing_refuses_other_dtypes():
    with pytest.raises(TypeError, match="Expected int8 tensor for packing, got int16"):
        Q.pack_int4(numpy.zeros((2, 2), "int16"))
    with pytest.raises(ValueError, match="Expected dtype to be 'int8' or 'uint8'"):
        Q.unpack_int4(numpy.zeros((2, 2), "int8"), 2, dtype="int4")
    with pytest.raises(TypeError, match="Expected int8 or uint8 tensor for unpacking"):
        Q.unpack_int4(numpy.zeros((2, 2), "float32"), 2)


@pytest.mark.parametrize("to_numpy", [False, True])
def test_grouped_quantization_as_keras(to_numpy):
    recorded = cases()
    quantized, scale, zero = Q.abs_max_quantize_grouped_with_zero_point(recorded["grouped_x"], block_size=4,
                                                                        to_numpy=to_numpy)
    numpy.testing.assert_array_equal(quantized.numpy(), recorded[f"grouped_{int(to_numpy)}_q"])
    numpy.testing.assert_allclose(scale.numpy(), recorded[f"grouped_{int(to_numpy)}_s"], rtol=1e-6)
    numpy.testing.assert_array_equal(zero.numpy(), recorded[f"grouped_{int(to_numpy)}_z"])


@pytest.mark.parametrize("key, make", [
    ("int8", lambda: Q.Int8QuantizationConfig()),
    ("int8_weight_only", lambda: Q.Int8QuantizationConfig(weight_quantizer=Q.AbsMaxQuantizer(axis=0),
                                                          activation_quantizer=None)),
    ("int4", lambda: Q.Int4QuantizationConfig()), ("int4_per_channel", lambda: Q.Int4QuantizationConfig(block_size=None)),
    ("float8", lambda: Q.Float8QuantizationConfig()),
])
def test_configs_serialize_as_keras(key, make):
    config = make()
    assert _as_json(Q.serialize(config)) == names()["serialized"][key]
    again = Q.deserialize(names()["serialized"][key])
    assert type(again) is type(config) and again.mode == config.mode
    assert _as_json(Q.serialize(again)) == names()["serialized"][key]


def test_config_errors_are_keras_errors():
    with pytest.raises(ValueError, match="output_dtype='int8'"):
        Q.Int8QuantizationConfig(weight_quantizer=Q.AbsMaxQuantizer(output_dtype="int16", value_range=(-9, 9)))
    with pytest.raises(ValueError, match="block_size must be None, -1, or a positive integer"):
        Q.Int4QuantizationConfig(block_size=0)
    with pytest.raises(ValueError, match="does not support custom quantizers"):
        Q.Int4QuantizationConfig(weight_quantizer=Q.AbsMaxQuantizer(value_range=(-8, 7)))
    with pytest.raises(ValueError, match=r"value_range=\(-8, 7\)"):
        Q.Int4QuantizationConfig(weight_quantizer=Q.AbsMaxQuantizer(), block_size=None)
    with pytest.raises(NotImplementedError, match="Do not instantiate QuantizationConfig directly"):
        Q.QuantizationConfig().mode
    with pytest.raises(NotImplementedError, match="does not implement get_config"):
        Q.Quantizer().get_config()


def test_get_and_deserialize():
    assert Q.get(None) is None
    assert isinstance(Q.get("AbsMaxQuantizer"), Q.AbsMaxQuantizer)
    assert Q.get("abs_max_quantizer", axis=0).axis == (0,)
    quantizer = Q.AbsMaxQuantizer()
    assert Q.get(quantizer) is quantizer
    assert isinstance(Q.get({"class_name": "AbsMaxQuantizer", "config": {"axis": [0]}}), Q.AbsMaxQuantizer)
    for bad in ("nope", 3):
        with pytest.raises(ValueError, match="Could not interpret quantizer identifier"):
            Q.get(bad)
    with pytest.raises(ValueError, match="Unknown quantizer class 'Mine'"):
        Q.deserialize({"class_name": "Mine", "config": {}})


def test_a_registered_quantizer_round_trips_by_its_registered_name():
    @mk.saving.register_keras_serializable(package="tests_quantizers")
    class HalfRange(Q.AbsMaxQuantizer):
        pass

    serialized = Q.serialize(HalfRange(value_range=(-63, 63)))
    assert serialized["registered_name"] == "tests_quantizers>HalfRange"
    again = Q.deserialize(_as_json(serialized))
    assert type(again) is HalfRange and again.value_range == (-63, 63)


def _as_json(value):
    import json

    return json.loads(json.dumps(value))
