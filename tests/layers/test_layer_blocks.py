"""Issue 25's layers: forward parity with Keras 3.15 on copied weights
(recorded; live where Keras is installed), Keras's config keys, and the
shared layer check (shapes, devices, config and save round trips, float64
gradients) on every device."""
import json

import numpy
import pytest

import minikeras as mk
from minikeras import layers
from tests.layers.keras_blocks_layer_cases import CASES, CONFIGS, FIXTURE, build_layer, keras_output
from tests.layers.keras_layer_cases import call_case
from tests.layers.layer_check import run_layer_test

TOLERANCE = {"atol": 2e-5, "rtol": 2e-4}


@pytest.fixture(scope="module")
def recorded():
    with numpy.load(FIXTURE) as data:
        return {key: data[key] for key in data.files}


def minikeras_output(name, weights):
    class_name, config, inputs, call_kwargs = CASES[name]
    layer = build_layer(layers, class_name, config)
    call_case(layer, inputs, call_kwargs)
    assert [tuple(w.shape) for w in layer.weights] == [w.shape for w in weights], f"{class_name}: weights differ"
    layer.set_weights(weights)
    return call_case(layer, inputs, call_kwargs).numpy(), layer


def _weights(recorded, name):
    weights, index = [], 0
    while f"{name}/weight{index}" in recorded:
        weights.append(recorded[f"{name}/weight{index}"])
        index += 1
    return weights


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_recorded_keras_output(name, recorded):
    output, _ = minikeras_output(name, _weights(recorded, name))
    numpy.testing.assert_allclose(output, recorded[f"{name}/output"], **TOLERANCE)


@pytest.mark.parametrize("name", sorted(CASES))
def test_config_has_keras_keys_and_values(name, recorded):
    with open(CONFIGS) as handle:
        theirs = json.load(handle)[name]
    _, layer = minikeras_output(name, _weights(recorded, name))
    ours = json.loads(json.dumps({k: v for k, v in layer.get_config().items() if k not in ("name", "dtype")},
                                 default=str))
    assert set(ours) == set(theirs)
    for key, value in CASES[name][1].items():
        if isinstance(value, dict) and "__layer__" in value:  # a wrapped layer: its own case covers its config
            assert ours[key]["class_name"] == theirs[key]["class_name"]
            continue
        if isinstance(value, list) and value and isinstance(value[0], dict) and "__layer__" in value[0]:
            assert [spec["class_name"] for spec in ours[key]] == [spec["class_name"] for spec in theirs[key]]
            continue
        assert ours[key] == theirs[key], f"{name}: {key} is {ours[key]!r}, Keras has {theirs[key]!r}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_live_keras_output(name):
    pytest.importorskip("tensorflow")
    pytest.importorskip("keras")
    expected, weights, _ = keras_output(name)
    numpy.testing.assert_allclose(minikeras_output(name, weights)[0], expected, **TOLERANCE)


LAYER_CHECKS = {
    "identity": (lambda **kw: layers.Identity(**kw), (2, 4, 3)),
    "rms_norm": (lambda **kw: layers.RMSNormalization(**kw), (2, 4, 3)),
    "rms_norm_axes": (lambda **kw: layers.RMSNormalization(axis=[1, 2], epsilon=1e-3, **kw), (2, 4, 3)),
    "unit_norm": (lambda **kw: layers.UnitNormalization(axis=[1, 2], **kw), (2, 4, 3)),
    "zero_padding3d": (lambda **kw: layers.ZeroPadding3D((1, 2, 0), **kw), (2, 2, 3, 2, 2)),
    "cropping3d": (lambda **kw: layers.Cropping3D(((1, 0), (0, 1), (1, 0)), **kw), (2, 3, 3, 2, 2)),
    "upsampling3d": (lambda **kw: layers.UpSampling3D((1, 2, 2), **kw), (2, 2, 2, 2, 2)),
    "global_avg_pool3d": (lambda **kw: layers.GlobalAveragePooling3D(**kw), (2, 2, 3, 2, 2)),
    "global_max_pool3d": (lambda **kw: layers.GlobalMaxPool3D(keepdims=True, **kw), (2, 2, 3, 2, 2)),
    "conv1d_transpose": (lambda **kw: layers.Conv1DTranspose(3, 3, strides=2, output_padding=1, **kw), (2, 5, 2)),
    "depthwise_conv1d": (lambda **kw: layers.DepthwiseConv1D(3, depth_multiplier=2, padding="same", **kw),
                         (2, 5, 2)),
    "separable_conv1d": (lambda **kw: layers.SeparableConvolution1D(3, 2, strides=2, **kw), (2, 6, 2)),
    "adaptive_avg_2d": (lambda **kw: layers.AdaptiveAveragePooling2D((2, 3), **kw), (2, 5, 4, 2)),
    "adaptive_max_1d": (lambda **kw: layers.AdaptiveMaxPooling1D(3, **kw), (2, 7, 2)),
    "adaptive_avg_3d": (lambda **kw: layers.AdaptiveAveragePooling3D(2, **kw), (1, 3, 4, 5, 2)),
    "spectral_norm": (lambda **kw: layers.SpectralNormalization(layers.Dense(3, dtype=kw.get("dtype")), **kw),
                      (2, 4)),
}


@pytest.mark.parametrize("name", sorted(LAYER_CHECKS))
def test_layer_check(name, tmp_path):
    make_layer, shape = LAYER_CHECKS[name]
    run_layer_test(make_layer, input_shape=shape, tmp_path=tmp_path)


def test_alpha_dropout_trains_only_and_keeps_selu_statistics():
    x = mk.tensor(numpy.random.default_rng(0).normal(size=(400, 50)).astype("float32"))
    layer = layers.AlphaDropout(0.2, seed=3)
    assert layer(x) is x or numpy.array_equal(layer(x).numpy(), x.numpy())
    out = layer(x, training=True).numpy()
    assert abs(out.mean()) < 0.05 and abs(out.std() - 1) < 0.05  # self-normalizing
    saturated = -1.6732632423543772 * 1.0507009873554805
    a = ((1 - 0.2) * (1 + 0.2 * saturated**2)) ** -0.5
    dropped = numpy.isclose(out, a * saturated - a * saturated * 0.2)
    assert 0.15 < dropped.mean() < 0.25
    again = layers.AlphaDropout(0.2, seed=3)(x, training=True).numpy()
    numpy.testing.assert_array_equal(out, again)
    with pytest.raises(ValueError, match="between 0 and 1"):
        layers.AlphaDropout(1.5)


def test_bad_arguments():
    with pytest.raises(TypeError, match="axis"):
        layers.UnitNormalization(axis="last")
    with pytest.raises(ValueError, match="out of bounds"):
        layers.RMSNormalization(axis=4)(numpy.ones((2, 3), "float32"))
    with pytest.raises(ValueError, match="ZeroPadding3D"):
        layers.ZeroPadding3D((1, 2))
    with pytest.raises(ValueError, match="output_padding"):
        layers.Conv1DTranspose(2, 3, strides=2, output_padding=2)


def test_aliases_resolve_in_configs():
    for alias, cls in (("GlobalAvgPool3D", layers.GlobalAveragePooling3D), ("GlobalMaxPool3D", layers.GlobalMaxPooling3D),
                       ("Convolution1DTranspose", layers.Conv1DTranspose),
                       ("SeparableConvolution1D", layers.SeparableConv1D)):
        assert getattr(layers, alias) is cls


def test_layers_serialize_and_deserialize():
    dense = layers.Dense(3, activation="relu", name="head")
    data = layers.serialize(dense)
    assert data["module"] == "keras.layers" and data["class_name"] == "Dense" and data["registered_name"] is None
    clone = layers.deserialize(data)
    assert type(clone) is layers.Dense and clone.get_config() == dense.get_config()
    assert isinstance(layers.deserialize({"class_name": "RMSNormalization", "config": {"epsilon": 1e-3}}),
                      layers.RMSNormalization)
    with pytest.raises(ValueError, match="Unknown layer class"):
        layers.deserialize({"class_name": "os.system", "config": {}})

    class Doubler(layers.Layer):
        def call(self, inputs):
            return inputs * 2.0

    assert isinstance(layers.deserialize(layers.serialize(Doubler()), custom_objects={"Doubler": Doubler}), Doubler)


@pytest.mark.parametrize("equation, output_shape, bias_axes, shape", [
    ("ab,bc->ac", 3, "c", (2, 4)), ("abc,cde->abde", (None, 2, 3), "de", (2, 3, 4)),
    ("...b,bc->...c", 3, None, (2, 2, 3, 4)), ("ab...,bc->ac...", 2, "c", (2, 3, 4))])
def test_einsum_dense_layer_check(equation, output_shape, bias_axes, shape, tmp_path):
    run_layer_test(lambda **kw: layers.EinsumDense(equation, output_shape, bias_axes=bias_axes, activation="tanh",
                                                   **kw), input_shape=shape, tmp_path=tmp_path)


def test_einsum_dense_initializer_fans_follow_the_equation():
    layer = layers.EinsumDense("abc,cde->abde", output_shape=(None, 8, 16), kernel_initializer="glorot_normal")
    layer.build((None, 5, 64))
    # Keras's fans: fan_in = 64 (contracted), fan_out = 8 * 16 (reaching the output).
    expected_std = numpy.sqrt(2.0 / (64 + 128))  # a plain (64, 8, 16) kernel would give sqrt(2 / 1536)
    assert abs(layer.kernel.numpy().std() / expected_std - 1) < 0.05


@pytest.mark.parametrize("config, call_kwargs", [
    ({"head_dim": 2, "num_query_heads": 4, "num_key_value_heads": 2}, {}),
    ({"head_dim": 2, "num_query_heads": 2, "num_key_value_heads": 1, "use_gate": True, "sliding_window": 2},
     {"use_causal_mask": True}),
])
def test_grouped_query_attention_gradients_and_save(config, call_kwargs, tmp_path):
    rng = numpy.random.default_rng(4)
    query, value = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4))
    layer = layers.GroupQueryAttention(dtype="float64", **config)
    layer(query, value, **call_kwargs)
    weights = layer.trainable_weights
    tensors = [mk.Tensor(query, requires_grad=True), mk.Tensor(value, requires_grad=True)] + [
        mk.Tensor(w.numpy() + rng.normal(0, 0.3, w.shape), requires_grad=True) for w in weights]
    names = [name for name in vars(layer) if any(vars(layer)[name] is w for w in weights)]
    attributes = {name: vars(layer)[name] for name in names}

    def attend(q, v, *values):
        for weight, tensor in zip(weights, values):
            for name, held in attributes.items():
                if held is weight:
                    setattr(layer, name, tensor)
        try:
            return layer(q, v, **call_kwargs)
        finally:
            for name, held in attributes.items():
                setattr(layer, name, held)

    assert mk.autograd.gradcheck(attend, tensors)
    inputs = [layers.Input((3, 4)), layers.Input((5, 4))]
    model = mk.Model(inputs, layers.GroupQueryAttention(**config)(inputs[0], inputs[1]))
    data = [query.astype("float32"), value.astype("float32")]
    before = model.predict(data, verbose=0)
    model.save(tmp_path / "gqa.keras")
    loaded = mk.models.load_model(tmp_path / "gqa.keras")
    numpy.testing.assert_allclose(loaded.predict(data, verbose=0), before, rtol=1e-6)
    assert layers.deserialize(layers.serialize(layer)).get_config() == layer.get_config()
    with pytest.raises(ValueError, match="divisible"):
        layers.GroupQueryAttention(2, 3, 2)


def test_additive_attention_gradients_and_config():
    rng = numpy.random.default_rng(5)
    layer = layers.AdditiveAttention(dtype="float64")
    query, value = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4))
    layer([query, value])
    assert [w.shape for w in layer.weights] == [(4,)]
    assert mk.autograd.gradcheck(lambda q, v: layer([q, v], use_causal_mask=True),
                                 [mk.Tensor(query, requires_grad=True), mk.Tensor(value, requires_grad=True)])
    assert "score_mode" not in layer.get_config()
    assert layers.AdditiveAttention.from_config(layer.get_config()).use_scale


def test_discretization_adapt_matches_keras_quantiles():
    data = numpy.random.default_rng(8).normal(size=(300, 2)).astype("float32")
    layer = layers.Discretization(num_bins=4, epsilon=0.05)
    layer.adapt(data)
    # Keras 3.15's boundaries on this data (its streaming summary, epsilon=0.05), in one batch and in two.
    numpy.testing.assert_allclose(layer.bin_boundaries, [-0.653594434261322, -0.036949992179870605,
                                                         0.6632938981056213], rtol=1e-6)
    batched = layers.Discretization(num_bins=4, epsilon=0.05)
    batched.adapt([data[:100], data[100:]])
    numpy.testing.assert_allclose(batched.bin_boundaries, [-0.653594434261322, -0.03456569463014603,
                                                           0.7113368511199951], rtol=1e-6)
    clone = layers.Discretization.from_config(layer.get_config())
    assert clone.bin_boundaries == layer.bin_boundaries
    numpy.testing.assert_array_equal(clone(data).numpy(), layer(data).numpy())


def test_preprocessing_bad_arguments():
    with pytest.raises(ValueError, match="num_tokens must be set"):
        layers.CategoryEncoding()
    with pytest.raises(ValueError, match="output_mode"):
        layers.CategoryEncoding(3, output_mode="tf_idf")
    with pytest.raises(ValueError, match="either"):
        layers.Discretization()
    with pytest.raises(ValueError, match="Cannot adapt"):
        layers.Discretization(bin_boundaries=[0.0]).adapt(numpy.zeros(3))


def test_spectral_normalization_bounds_the_spectral_norm():
    layer = layers.SpectralNormalization(layers.Dense(6), power_iterations=1)
    x = numpy.random.default_rng(2).normal(size=(4, 5)).astype("float32")
    layer(x)
    layer.layer.kernel.assign(layer.layer.kernel.numpy() * 10.0)
    for _ in range(20):  # power iteration converges over training calls
        layer(x, training=True)
    assert abs(numpy.linalg.norm(layer.layer.kernel.numpy(), 2) - 1.0) < 1e-3
    frozen = layer.layer.kernel.numpy().copy()
    layer(x)  # inference leaves the kernel alone
    numpy.testing.assert_array_equal(layer.layer.kernel.numpy(), frozen)
    assert [w.name.split("/")[-1] for w in layer.weights] == ["kernel", "vector_u", "bias"]
    with pytest.raises(ValueError, match="power_iterations"):
        layers.SpectralNormalization(layers.Dense(2), power_iterations=0)
    with pytest.raises(ValueError, match="nor 'embeddings'"):
        layers.SpectralNormalization(layers.Flatten())(x)


@pytest.mark.parametrize("tie_weights", [True, False])
def test_reversible_embedding_round_trip_and_gradients(tie_weights, tmp_path):
    layer = layers.ReversibleEmbedding(7, 4, tie_weights=tie_weights, logit_soft_cap=3.0, mask_zero=True,
                                       dtype="float64")
    tokens = numpy.array([[1, 0, 6], [3, 3, 2]])
    hidden = layer(tokens)
    assert hidden.shape == (2, 3, 4) and layer.compute_mask(mk.tensor(tokens)).numpy().tolist() == [
        [True, False, True], [True, True, True]]
    logits = layer(hidden, reverse=True)
    assert logits.shape == (2, 3, 7) and numpy.abs(logits.numpy()).max() < 3.0
    kernel_name = "embeddings" if tie_weights else "reverse_embeddings"
    weight = getattr(layer, kernel_name)

    def reverse(x, kernel):
        setattr(layer, kernel_name, kernel)
        try:
            return layer(x, reverse=True)
        finally:
            setattr(layer, kernel_name, weight)

    rng = numpy.random.default_rng(1)
    assert mk.autograd.gradcheck(reverse, [mk.Tensor(rng.normal(size=(2, 3, 4)), requires_grad=True),
                                           mk.Tensor(weight.numpy(), requires_grad=True)])
    clone = layers.deserialize(layers.serialize(layer))
    clone(tokens)
    clone.set_weights(layer.get_weights())
    numpy.testing.assert_allclose(clone(hidden, reverse=True).numpy(), logits.numpy())


def test_pipeline_trains_by_default_and_round_trips(tmp_path):
    pipeline = layers.Pipeline([layers.Rescaling(1 / 255.0), layers.RandomFlip("horizontal", seed=1)])
    images = numpy.random.default_rng(0).uniform(0, 255, (8, 5, 6, 3)).astype("float32")
    inference = pipeline(images, training=False).numpy()
    numpy.testing.assert_allclose(inference, images / 255.0, rtol=1e-6)
    augmented = pipeline(images).numpy()  # training=True by default: some images come back mirrored
    mirrored = [numpy.allclose(a, i[:, ::-1]) and not numpy.allclose(a, i) for a, i in zip(augmented, inference)]
    assert any(mirrored) and all(m or numpy.allclose(a, i) for m, a, i in zip(mirrored, augmented, inference))
    clone = layers.deserialize(layers.serialize(pipeline))
    assert [type(layer) for layer in clone.layers] == [type(layer) for layer in pipeline.layers]
    model = mk.Sequential([layers.Input((5, 6, 3)), layers.Pipeline([layers.Rescaling(0.5)]), layers.Dense(2)])
    before = model.predict(images, verbose=0)
    model.save(tmp_path / "pipeline.keras")
    numpy.testing.assert_allclose(mk.models.load_model(tmp_path / "pipeline.keras").predict(images, verbose=0),
                                  before, rtol=1e-6)
    with pytest.raises(ValueError, match="list of layers"):
        layers.Pipeline(layers.Dense(2))


def test_colour_augmentations_are_random_per_image_seeded_and_training_only():
    images = numpy.random.default_rng(3).uniform(0, 255, (200, 2, 2, 3)).astype("float32")
    gray = layers.RandomGrayscale(factor=0.3, seed=4)(images, training=True).numpy()
    is_gray = numpy.isclose(gray[..., 0], gray[..., 1]).all(axis=(1, 2))
    assert 0.2 < is_gray.mean() < 0.4
    numpy.testing.assert_array_equal(layers.RandomGrayscale(factor=0.3, seed=4)(images, training=True).numpy(), gray)
    inverted = layers.RandomInvert(factor=0.5, seed=2)(images, training=True).numpy()
    flipped = numpy.isclose(inverted, 255.0 - images).all(axis=(1, 2, 3))
    assert 0.15 < flipped.mean() < 0.35  # probability drawn in (0, 0.5): 0.25 on average
    numpy.testing.assert_array_equal(layers.RandomInvert(seed=2)(images, training=False).numpy(), images)


def test_auto_contrast_layer_check(tmp_path):
    run_layer_test(lambda **kw: layers.AutoContrast(value_range=(0, 1), **kw), input_shape=(2, 3, 4, 2),
                   tmp_path=tmp_path)


def test_solarization_and_posterization_draw_per_image():
    images = numpy.random.default_rng(6).uniform(0, 255, (64, 3, 3, 3)).astype("float32")
    solarized = layers.Solarization(threshold_factor=(0.5, 0.5), seed=1)(images, training=True).numpy()
    # The threshold is drawn from (0.5, 127.5): pixels at or above it are inverted.
    inverted = numpy.isclose(solarized, 255.0 - images)
    assert inverted.any() and (~inverted).any()
    assert numpy.all(inverted | numpy.isclose(solarized, images))
    posterized = layers.RandomPosterization((1, 8), seed=3)(images, training=True).numpy()
    low_bits = posterized.astype(numpy.uint8) & 1
    assert (low_bits == 0).all()  # at most 7 bits kept: [1, 8) excludes 8
    numpy.testing.assert_array_equal(layers.RandomPosterization(2)(images, training=False).numpy(), images)
    with pytest.raises(ValueError, match="range \\[1, 8\\]"):
        layers.RandomPosterization(9)
    with pytest.raises(ValueError, match="range \\[0, 1\\]"):
        layers.Solarization(addition_factor=2.0)


def test_random_brightness_offsets_per_image_within_range():
    images = numpy.full((50, 2, 2, 1), 100.0, "float32")
    out = layers.RandomBrightness(0.2, seed=5)(images, training=True).numpy()
    offsets = out[:, 0, 0, 0] - 100.0
    assert numpy.allclose(out, out[:, :1, :1, :])  # one offset per image
    assert offsets.min() >= -51.0 and offsets.max() <= 51.0 and offsets.std() > 10
    assert layers.RandomBrightness((-1.0, -1.0))(images, training=True).numpy().max() == 0.0  # clipped
    with pytest.raises(ValueError, match="factor"):
        layers.RandomBrightness(1.5)


def test_stacked_cells_in_rnn_train_save_and_accept_a_list(tmp_path):
    rng = numpy.random.default_rng(9)
    x, y = rng.normal(size=(16, 5, 3)).astype("float32"), rng.normal(size=(16, 2)).astype("float32")
    model = mk.Sequential([layers.Input((5, 3)), layers.RNN([layers.LSTMCell(4), layers.SimpleRNNCell(2)])])
    assert isinstance(model.layers[0].cell, layers.StackedRNNCells)
    assert [tuple(w.shape) for w in model.weights] == [(3, 16), (4, 16), (16,), (4, 2), (2, 2), (2,)]
    model.compile("adam", "mse")
    first = model.evaluate(x, y, verbose=0)
    model.fit(x, y, epochs=5, batch_size=8, verbose=0)
    assert model.evaluate(x, y, verbose=0) < first
    before = model.predict(x, verbose=0)
    model.save(tmp_path / "stacked.keras")
    numpy.testing.assert_allclose(mk.models.load_model(tmp_path / "stacked.keras").predict(x, verbose=0), before,
                                  rtol=1e-5)
    layer = layers.RNN(layers.StackedRNNCells([layers.GRUCell(3, dtype="float64"),
                                               layers.GRUCell(2, dtype="float64")]), dtype="float64")
    layer(x.astype("float64"))
    assert mk.autograd.gradcheck(lambda t: layer(t), [mk.Tensor(x[:2, :3].astype("float64"), requires_grad=True)])
