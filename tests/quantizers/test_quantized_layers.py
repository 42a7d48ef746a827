"""Dense, EinsumDense and Embedding quantized (int8, int4, float8) as Keras 3
quantizes them: values against NumPy references of Keras's formulas, the
exact int8 product, gradients, weights, errors, Model.quantize."""
import warnings

import numpy
import pytest

import minikeras as mk
from minikeras import layers, quantizers
from minikeras.device import default_device
from minikeras.ops.nn.int8_product import exact_int8_matmul
from tests.quantizers.keras_fixtures import einsum_layouts

RNG = numpy.random.default_rng(11)


def _built_dense(units=6, inputs=10, **kwargs):
    layer = layers.Dense(units, **kwargs)
    layer.build((None, inputs))
    layer.set_weights([RNG.normal(size=w.shape).astype("float32") for w in layer.weights])
    return layer


def _keras_int8_dense(x, kernel, scale, bias):
    """Keras's int8 Dense in NumPy: per-row input quantization, int32 product, both scales."""
    input_scale = (127 / (numpy.abs(x).max(axis=-1, keepdims=True) + 1e-7)).astype("float32")
    quantized = numpy.clip(numpy.round(x * input_scale), -127, 127).astype(numpy.int64)
    product = quantized @ kernel.astype(numpy.int64)
    return product.astype("float32") / (scale * input_scale) + bias


def test_int8_dense_is_keras_formula_and_near_the_float_layer():
    layer = _built_dense()
    kernel = layer.kernel.numpy()
    x = RNG.normal(size=(7, 10)).astype("float32")
    before = layer(x).numpy()
    layer.quantize("int8")
    assert layer.dtype_policy.name == "int8_from_float32"
    assert [(w.name.split("/")[1], w.dtype.name, w.trainable) for w in layer.weights] == [
        ("bias", "float32", True), ("kernel", "int8", False), ("kernel_scale", "float32", False)]
    expected_scale = 127 / (numpy.abs(kernel).max(axis=0) + 1e-7)
    numpy.testing.assert_allclose(layer.kernel_scale.numpy(), expected_scale, rtol=1e-6)
    numpy.testing.assert_array_equal(layer.kernel.numpy(), numpy.clip(numpy.round(kernel * expected_scale), -127, 127))
    after = layer(x).numpy()
    numpy.testing.assert_allclose(after, _keras_int8_dense(x, layer.kernel.numpy(), layer.kernel_scale.numpy(),
                                                           layer.bias.numpy()), rtol=1e-5, atol=1e-5)
    assert numpy.abs(after - before).max() < 0.02 * numpy.abs(before).max()


def test_the_int8_product_is_exact_past_float32s_integer_range():
    # Sums of 4096 products near 127 * 127 reach 6.6e7 with odd low bits: float32 (spacing 4 there)
    # would round them; the blocks of 1024 keep every partial sum exact.
    device = default_device()
    left = numpy.full((3, 4096), 127, numpy.int8)
    right = numpy.full((4096, 2), 127, numpy.int8)
    right[7, 0], right[::5, 1], left[1, ::3] = 1, -3, -125
    with device.activate():
        product = exact_int8_matmul(device, device.asarray(left), device.asarray(right))
        result = device.to_host(product)
    numpy.testing.assert_array_equal(result, left.astype(numpy.int64) @ right.astype(numpy.int64))
    assert result.dtype == numpy.int32


def test_int8_gradients_pass_straight_through_to_the_inputs():
    layer = _built_dense()
    layer.quantize("int8")
    x = mk.tensor(RNG.normal(size=(4, 10)).astype("float32"), requires_grad=True)
    upstream = RNG.normal(size=(4, 6)).astype("float32")
    (layer(x) * mk.tensor(upstream)).sum().backward()
    float_kernel = layer.kernel.numpy().astype("float32") / layer.kernel_scale.numpy()
    numpy.testing.assert_allclose(x.grad.numpy(), upstream @ float_kernel.T, rtol=1e-5, atol=1e-6)
    numpy.testing.assert_allclose(layer.bias.grad.numpy(), upstream.sum(axis=0), rtol=1e-5)
    assert layer.kernel.grad is None and layer.kernel_scale.grad is None


def test_weight_only_int8_and_rank_3_inputs():
    layer = _built_dense(activation="relu")
    layer.quantize(config=quantizers.Int8QuantizationConfig(activation_quantizer=None))
    x = RNG.normal(size=(2, 3, 10)).astype("float32")
    float_kernel = layer.kernel.numpy().astype("float32") / layer.kernel_scale.numpy()
    numpy.testing.assert_allclose(layer(x).numpy(), numpy.maximum(x @ float_kernel + layer.bias.numpy(), 0),
                                  rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("block_size", [None, 4])
def test_int4_dense_dequantizes_as_keras(block_size):
    layer = _built_dense(units=5)
    kernel = layer.kernel.numpy()
    layer.quantize(config=quantizers.Int4QuantizationConfig(block_size=block_size))
    assert layer.dtype_policy.name == f"int4/{-1 if block_size is None else block_size}_from_float32"
    assert layer.kernel.shape == (10, 3)
    x = RNG.normal(size=(4, 10)).astype("float32")
    values = quantizers.unpack_int4(layer.kernel, 5, axis=-1).numpy().astype("float32")
    if block_size is None:
        dequantized = values / layer.kernel_scale.numpy()
        step = 0.5 / layer.kernel_scale.numpy()  # symmetric: half a level at most
    else:
        groups = numpy.arange(10) // block_size
        dequantized = (values - layer.kernel_zero.numpy()[groups]) * layer.kernel_scale.numpy()[groups]
        step = layer.kernel_scale.numpy()[groups]  # asymmetric: the rounded zero point adds up to half a level
        numpy.testing.assert_array_equal(layer.g_idx.numpy(), groups)
        # Keras's zero point is clipped to [-8, 7]: a group of one sign keeps only part of its range
        # (Keras's scheme, recorded in tests/quantizers/fixtures); the bound holds where it spans zero.
        padded = numpy.zeros((12, 5), "float32")  # Keras pads the last group with zero rows
        padded[:10] = kernel
        low, high = padded.reshape(3, 4, 5).min(axis=1)[groups], padded.reshape(3, 4, 5).max(axis=1)[groups]
        step = numpy.where((low <= 0) & (high >= 0), step, numpy.inf)
    assert numpy.all(numpy.abs(dequantized - kernel) <= step * 1.001 + 1e-6)
    numpy.testing.assert_allclose(layer(x).numpy(), x @ dequantized + layer.bias.numpy(), rtol=1e-4, atol=1e-5)


def test_float8_dense_forward_and_its_variables():
    layer = _built_dense()
    layer.quantize("float8")
    names = [w.name.split("/")[1] for w in layer.weights]
    assert names == ["kernel", "bias", "inputs_scale", "inputs_amax_history", "kernel_scale", "kernel_amax_history",
                     "outputs_grad_scale", "outputs_grad_amax_history"]
    assert all(w.trainable for w in layer.weights) and layer.inputs_amax_history.shape == (1024,)
    assert layer.inputs_scale.overwrite_with_gradient and not layer.kernel.overwrite_with_gradient
    x = RNG.normal(size=(3, 10)).astype("float32")
    import ml_dtypes

    def qdq(v):
        return numpy.clip(v, -448, 448).astype(ml_dtypes.float8_e4m3fn).astype("float32")

    bias = layer.bias.numpy().astype(ml_dtypes.bfloat16).astype("float32")
    numpy.testing.assert_allclose(layer(x).numpy(), qdq(x) @ qdq(layer.kernel.numpy()) + bias, rtol=1e-5, atol=1e-6)


def test_float8_training_overwrites_the_scales_and_keeps_them_out_of_the_slots():
    model = mk.Sequential([layers.Input((10,)), layers.Dense(4)])
    model.quantize("float8")
    model.compile(mk.optimizers.Adam(1e-3), "mse")
    x, y = RNG.normal(size=(8, 10)).astype("float32"), RNG.normal(size=(8, 4)).astype("float32")
    model.train_on_batch(x, y)
    dense = model.layers[0]
    # Step 1 writes max|x| at the head of the history; the scale it used (1) stays until step 2.
    assert dense.inputs_amax_history.numpy()[0] == pytest.approx(numpy.abs(x).max())
    assert dense.inputs_scale.numpy() == 1.0
    model.train_on_batch(x, y)
    assert dense.inputs_scale.numpy() == pytest.approx(numpy.abs(x).max() / 448, rel=1e-6)
    plain = mk.Sequential([layers.Input((10,)), layers.Dense(4)])
    plain.compile(mk.optimizers.Adam(1e-3), "mse")
    plain.train_on_batch(x, y)
    # Adam's two slots for kernel and bias only, none for the six overwritten variables (as Keras).
    assert len(model.optimizer.variables) == len(plain.optimizer.variables)


def test_float8_history_keeps_the_largest_value_over_accumulated_steps():
    model = mk.Sequential([layers.Input((2,)), layers.Dense(1)])
    model.quantize(config=quantizers.Float8QuantizationConfig())
    model.compile(mk.optimizers.SGD(0.1, gradient_accumulation_steps=2), "mse")
    dense = model.layers[0]
    model.train_on_batch(numpy.array([[5.0, 1.0]], "float32"), numpy.ones((1, 1), "float32"))
    assert dense.inputs_amax_history.numpy()[0] == 0.0  # not an update step yet
    model.train_on_batch(numpy.array([[2.0, 1.0]], "float32"), numpy.ones((1, 1), "float32"))
    assert dense.inputs_amax_history.numpy()[0] == 5.0  # the larger of the two steps' values


def test_int8_model_trains_its_bias_only():
    model = mk.Sequential([layers.Input((10,)), layers.Dense(6, activation="relu"), layers.Dense(2)])
    model.quantize("int8")
    model.compile("sgd", "mse")
    kernels = [layer.kernel.numpy().copy() for layer in model.layers]
    biases = [layer.bias.numpy().copy() for layer in model.layers]
    history = model.fit(RNG.normal(size=(32, 10)).astype("float32"), RNG.normal(size=(32, 2)).astype("float32"),
                        epochs=2, batch_size=8, verbose=0)
    assert history.history["loss"][1] < history.history["loss"][0]
    for layer, kernel, bias in zip(model.layers, kernels, biases):
        numpy.testing.assert_array_equal(layer.kernel.numpy(), kernel)
        assert not numpy.array_equal(layer.bias.numpy(), bias)


def test_int8_under_mixed_bfloat16_computes_in_bfloat16():
    layer = layers.Dense(4, dtype="mixed_bfloat16")
    layer.build((None, 6))
    layer.quantize("int8")
    assert layer.dtype_policy.name == "int8_from_mixed_bfloat16"
    out = layer(RNG.normal(size=(2, 6)).astype("float32"))
    assert out.dtype.name == "bfloat16"


@pytest.mark.parametrize("record", einsum_layouts(), ids=lambda record: record["equation"])
def test_einsum_scale_layout_as_keras(record):
    from minikeras.layers.core.einsum_quantization_layout import quantization_layout

    layout = quantization_layout(record["equation"], len(record["input_shape"]))
    mine = [layout.inputs.reduced, layout.kernel.reduced, layout.inputs.transpose, layout.kernel.transpose,
            layout.inputs.expand, layout.kernel.expand, layout.inputs.squeeze, layout.kernel.squeeze,
            layout.gradient_equation]
    assert mine == record["info"]
    layer = layers.EinsumDense(record["equation"], output_shape=record["output_shape"])
    layer.build(tuple(record["input_shape"]))
    assert list(layer.kernel.shape) == record["kernel_shape"]
    kernel = layer.kernel.numpy()
    x = RNG.normal(size=[2] + record["input_shape"][1:]).astype("float32")
    before = layer(x).numpy()
    layer.quantize("int8")
    assert list(layer.kernel_scale.shape) == record["kernel_scale_shape"]
    dequantized = layer.kernel.numpy() / layout.kernel.for_operand(numpy, layer.kernel_scale.numpy())
    assert numpy.abs(dequantized - kernel).max() <= numpy.abs(kernel).max() / 127
    assert numpy.abs(layer(x).numpy() - before).max() < 0.03 * max(1.0, numpy.abs(before).max())


@pytest.mark.parametrize("mode", ["int8", "int4", "float8"])
def test_einsum_with_an_ellipsis_quantizes(mode):
    # Keras 3.15 fails here (a TypeError in its layout analysis); minikeras writes the ellipsis out.
    layer = layers.EinsumDense("...b,bc->...c", output_shape=5, bias_axes="c")
    x = RNG.normal(size=(2, 3, 8)).astype("float32")
    before = layer(x).numpy()
    layer.quantize(mode)
    assert numpy.abs(layer(x).numpy() - before).max() < 0.1 * numpy.abs(before).max()


def test_einsum_input_gradient_as_keras_custom_gradient():
    layer = layers.EinsumDense("abc,cde->abde", output_shape=(None, 2, 3), bias_axes="de")
    x = mk.tensor(RNG.normal(size=(2, 4, 5)).astype("float32"), requires_grad=True)
    layer(x)
    layer.quantize("int8")
    upstream = RNG.normal(size=(2, 4, 2, 3)).astype("float32")
    (layer(x) * mk.tensor(upstream)).sum().backward()
    float_kernel = layer.kernel.numpy() / layer.kernel_scale.numpy()[0]
    numpy.testing.assert_allclose(x.grad.numpy(), numpy.einsum("abde,cde->abc", upstream, float_kernel), rtol=1e-5,
                                  atol=1e-6)


def test_einsum_equations_whose_scales_have_no_place_are_refused():
    layer = layers.EinsumDense("ab,b->a", output_shape=())
    layer.build((None, 4))
    with pytest.raises(ValueError, match="EinsumDense cannot be quantized with equation 'ab,b->a'"):
        layer.quantize("int8")
    assert layer.quantization_mode is None and layer.kernel.dtype.name == "float32"


@pytest.mark.parametrize("mode, config", [("int8", None), ("int4", None),
                                          ("int4", quantizers.Int4QuantizationConfig(block_size=None))])
def test_embedding_lookups_dequantize(mode, config):
    layer = layers.Embedding(20, 8)
    layer.build()
    table = layer.embeddings.numpy()
    layer.quantize(mode, config=config)
    ids = RNG.integers(0, 20, size=(3, 4))
    rows = layer(ids).numpy()
    assert rows.shape == (3, 4, 8) and rows.dtype == numpy.float32
    limit = numpy.abs(table).max(axis=-1, keepdims=True)[ids] / (127 if mode == "int8" else 7)
    assert numpy.all(numpy.abs(rows - table[ids]) <= limit + 1e-7)
    assert layer.embeddings.trainable is False


def test_embedding_refuses_float8_and_the_model_warns():
    layer = layers.Embedding(10, 4)
    layer.build()
    with pytest.raises(NotImplementedError, match=r"Expected one of \('int8', 'int4'\). Received: "
                                                  "quantization_mode=float8"):
        layer.quantize("float8")
    model = mk.Sequential([layers.Input((3,), dtype="int32"), layers.Embedding(10, 4), layers.Dense(2)])
    with pytest.warns(UserWarning, match="quantization_mode=float8"):
        model.quantize("float8")
    assert model.layers[0].quantization_mode is None and model.layers[1].quantization_mode == "float8"


def test_quantize_errors_are_keras_errors():
    with pytest.raises(ValueError, match="Cannot quantize a layer that isn't yet built. Layer 'unbuilt'"):
        layers.Dense(2, name="unbuilt").quantize("int8")
    layer = _built_dense()
    with pytest.raises(ValueError, match=r"Invalid quantization mode. Expected one of \('int8', 'float8', 'int4', "
                                         r"'gptq', 'awq'\). Received: mode=int3"):
        layer.quantize("int3")
    with pytest.raises(ValueError, match="You must provide either `mode` or `config` to `quantize`."):
        layer.quantize()
    with pytest.raises(ValueError, match="Contradictory arguments: mode='int8' but config.mode='float8'"):
        layer.quantize("int8", config=quantizers.Float8QuantizationConfig())
    with pytest.raises(ValueError, match="For GPTQ, you must pass a `GPTQConfig`"):
        layer.quantize("gptq")
    layer.quantize("int8")
    with pytest.raises(ValueError, match="is already quantized with dtype_policy='int8_from_float32'"):
        layer.quantize("float8")
    half = layers.Dense(2, dtype="float16")
    half.build((None, 3))
    with pytest.raises(ValueError, match="doesn't work well with compute_dtype='float16'"):
        half.quantize("int8")
    dropout = layers.Dropout(0.5)
    dropout.build((None, 3))
    with pytest.raises(NotImplementedError, match="Layer Dropout does not have a `quantize` method implemented."):
        dropout.quantize("int8")


def test_subclasses_need_type_check_false_and_overrides_are_checked_too():
    class MyDense(layers.Dense):
        pass

    class Counting(layers.Dense):
        calls = 0

        def quantize(self, mode=None, type_check=True, config=None):
            Counting.calls += 1
            super().quantize(mode, type_check=False, config=config)

    model = mk.Sequential([layers.Input((3,)), MyDense(2)])
    with pytest.warns(UserWarning, match="Layer MyDense does not have a `quantize` method implemented."):
        model.quantize("int8")
    assert model.layers[0].quantization_mode is None
    model.quantize("int8", type_check=False)
    assert model.layers[0].quantization_mode == "int8"
    counting = Counting(2)
    with pytest.raises(ValueError, match="isn't yet built"):  # Keras's checks run before the override
        counting.quantize("int8")
    counting.build((None, 3))
    counting.quantize("int8")
    assert Counting.calls == 1 and counting.dtype_policy.name == "int8_from_float32"


def test_model_quantize_arguments_and_filters():
    def model():
        return mk.Sequential([layers.Input((4,)), layers.Dense(3, name="first"), layers.Dropout(0.1),
                              layers.Dense(2, name="second")])

    with pytest.raises(ValueError, match="Cannot quantize a layer that isn't yet built. Layer 'bare'"):
        mk.Sequential([layers.Dense(2)], name="bare").quantize("int8")
    with pytest.raises(ValueError, match="Unrecognized keyword arguments passed to Sequential: {'bits': 8}"):
        model().quantize("int8", bits=8)
    with pytest.raises(ValueError, match="The `filters` argument must be a regex string"):
        model().quantize("int8", filters=3)
    for filters, expected in (("sec", [None, "int8"]), (["^fir"], ["int8", None]),
                              (lambda layer: layer.name == "first", ["int8", None])):
        each = model()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            each.quantize("int8", filters=filters)
        assert [each.get_layer(name).quantization_mode for name in ("first", "second")] == expected
    nested = mk.Sequential([layers.Input((4,)), model()])
    with pytest.warns(UserWarning, match="Dropout"):
        nested.quantize("int8")
    assert nested.layers[0].get_layer("second").quantization_mode == "int8"


def test_setting_a_quantized_policy_quantizes_a_built_layer():
    layer = _built_dense()
    layer.dtype_policy = mk.dtype_policies.QuantizedFloat8DTypePolicy("float8", "float32", amax_history_length=8)
    assert layer.quantization_mode == "float8" and layer.inputs_amax_history.shape == (8,)
    assert layer.dtype_policy.amax_history_length == 8
    unbuilt = layers.Dense(2)
    unbuilt.dtype_policy = "int8_from_float32"  # applies when built, as Keras's setter
    unbuilt.build((None, 3))
    assert unbuilt.kernel.dtype.name == "int8"


def test_lora_on_an_int8_layer_trains_the_adapters():
    layer = _built_dense()
    layer.quantize("int8")
    layer.enable_lora(2)
    x = RNG.normal(size=(4, 10)).astype("float32")
    before = layer(x).numpy()
    layer.lora_kernel_b.assign(RNG.normal(size=(2, 6)).astype("float32"))
    update = (x @ layer.lora_kernel_a.numpy()) @ layer.lora_kernel_b.numpy()
    numpy.testing.assert_allclose(layer(x).numpy(), before + update, rtol=1e-4, atol=1e-4)
    assert {w.name.split("/")[1] for w in layer.trainable_weights} == {"bias", "lora_kernel_a", "lora_kernel_b"}
