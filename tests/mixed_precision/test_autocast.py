"""Autocasting, bfloat16 dtype keeping and loss scaling, on every device."""
import numpy
import pytest

import minikeras as mk
from minikeras import layers, ops


class _TwiceKernel(layers.Layer):
    """Reads its kernel twice per call (one cast serves both reads)."""

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], 2), initializer="ones", name="kernel")

    def call(self, inputs):
        return ops.matmul(inputs, self.kernel) + ops.matmul(inputs, self.kernel)


@pytest.mark.parametrize("policy, compute", [("mixed_float16", "float16"), ("mixed_bfloat16", "bfloat16")])
def test_variables_are_read_in_the_compute_dtype_and_get_float32_gradients(policy, compute):
    layer = _TwiceKernel(dtype=policy)
    out = layer(numpy.full((3, 4), 0.5, "float32"))
    assert out.dtype.name == compute and layer.kernel.dtype == numpy.float32
    out.astype("float32").sum().backward()
    assert layer.kernel.grad.dtype == numpy.float32
    numpy.testing.assert_array_equal(layer.kernel.grad.numpy(), numpy.full((4, 2), 3.0))  # 2 reads x 3 rows x 0.5
    parents = [p for p in out._node._parents if p is not None]
    casts = {id(p[0]._parents[1][0]) for p in parents}  # the kernel operand of each matmul
    assert len(casts) == 1, "the kernel was cast more than once in one call"


def test_a_float32_layer_inside_a_mixed_model_computes_in_float32():
    mk.mixed_precision.set_global_policy("mixed_float16")
    model = mk.Sequential([mk.Input((4,)), layers.Dense(3), layers.Dense(2, dtype="float32")])
    assert model.layers[0](numpy.ones((1, 4), "float32")).dtype == numpy.float16
    out = model(numpy.ones((2, 4), "float32"))
    assert out.dtype == numpy.float32
    assert model.dtype_policy.name == "mixed_float16"


def test_autocast_false_leaves_inputs_and_variables_alone():
    layer = layers.Dense(2, dtype="mixed_float16", autocast=False)
    out = layer(numpy.ones((1, 3), "float32"))
    assert out.dtype == numpy.float32


def test_bfloat16_ops_keep_their_dtype():
    x = mk.tensor(numpy.linspace(-2, 2, 12, dtype="float32").reshape(3, 4)).astype("bfloat16")
    for result in (x * 0.5, 1.0 - x, ops.exp(x), ops.matmul(x, ops.transpose(x)), x.sum(axis=0),
                   ops.matmul(ops.reshape(x, (1, 3, 4)), ops.reshape(x, (1, 4, 3))), ops.relu(x)):
        assert result.dtype.name == "bfloat16"
    numpy.testing.assert_allclose(ops.matmul(x, ops.transpose(x)).numpy().astype("float32"),
                                  x.numpy().astype("float32") @ x.numpy().astype("float32").T, rtol=1e-2)
    assert ops.cast(x, "float32").dtype == numpy.float32 and (x + mk.tensor(numpy.ones(4, "float32"))).dtype == \
        numpy.float32


def _tiny_gradient_model(scale_loss):
    layer = layers.Dense(4, dtype="mixed_float16", kernel_initializer="ones")
    x = numpy.full((2, 8), 1e-3, "float32")
    loss = ops.cast(layer(x), "float32").sum() * 1e-5  # d loss / d output = 1e-5: fine in float16...
    loss = loss * 1e-3  # ...1e-8 is below float16's smallest subnormal (6e-8): it flushes to zero
    optimizer = mk.optimizers.LossScaleOptimizer(mk.optimizers.SGD(1.0))
    (optimizer.scale_loss(loss) if scale_loss else loss).backward()
    return layer.kernel.grad.numpy(), optimizer


def test_loss_scaling_keeps_small_float16_gradients_alive():
    unscaled, _ = _tiny_gradient_model(scale_loss=False)
    scaled, optimizer = _tiny_gradient_model(scale_loss=True)
    assert not unscaled.any()
    true_gradient = 2 * 1e-3 * 1e-8  # two rows of x = 1e-3, times d loss / d output
    numpy.testing.assert_allclose(scaled / float(optimizer.dynamic_scale), true_gradient, rtol=2e-2)


@pytest.mark.filterwarnings("ignore:overflow encountered", "ignore:invalid value encountered")
def test_fit_skips_overflowing_steps_and_halves_the_scale():
    mk.mixed_precision.set_global_policy("mixed_float16")
    model = mk.Sequential([mk.Input((4,)), layers.Dense(8, activation="relu"), layers.Dense(1, dtype="float32")])
    optimizer = mk.optimizers.LossScaleOptimizer(mk.optimizers.SGD(0.01), initial_scale=2.0 ** 40)
    model.compile(optimizer=optimizer, loss="mse")
    rng = numpy.random.default_rng(0)
    x, y = rng.normal(size=(16, 4)).astype("float32"), rng.normal(size=(16, 1)).astype("float32")
    before = model.get_weights()
    model.train_on_batch(x, y)  # 2**40 times the loss overflows float16: the step is skipped
    assert float(optimizer.dynamic_scale) == 2.0 ** 39 and optimizer.iterations == 0
    for mine, old in zip(model.get_weights(), before):
        numpy.testing.assert_array_equal(mine, old)
    for _ in range(40):
        model.train_on_batch(x, y)
    assert optimizer.iterations > 0 and float(optimizer.dynamic_scale) < 2.0 ** 39
    assert all(numpy.isfinite(w).all() for w in model.get_weights())


def test_compile_wraps_only_under_mixed_float16():
    for policy, wrapped in (("mixed_float16", True), ("mixed_bfloat16", False), ("float32", False)):
        mk.mixed_precision.set_global_policy(policy)
        model = mk.Sequential([mk.Input((2,)), layers.Dense(1)])
        model.compile("sgd", "mse")
        assert isinstance(model.optimizer, mk.mixed_precision.LossScaleOptimizer) is wrapped
        model.compile("sgd", "mse", auto_scale_loss=False)
        assert not isinstance(model.optimizer, mk.optimizers.LossScaleOptimizer)


def test_loss_scale_optimizer_arguments_and_config():
    inner = mk.optimizers.Adam(0.01)
    optimizer = mk.optimizers.LossScaleOptimizer(inner, initial_scale=64.0, dynamic_growth_steps=10, name="lso")
    assert optimizer.learning_rate == pytest.approx(0.01) and optimizer.iterations == 0
    optimizer.learning_rate = 0.5
    assert inner.learning_rate == 0.5
    again = mk.optimizers.deserialize(mk.optimizers.serialize(optimizer))
    assert type(again) is mk.optimizers.LossScaleOptimizer
    assert (again.initial_scale, again.dynamic_growth_steps, again.name) == (64.0, 10, "lso")
    assert type(again.inner_optimizer) is mk.optimizers.Adam and again.inner_optimizer.learning_rate == 0.5
    with pytest.raises(ValueError, match="does not support `clipnorm`"):
        mk.optimizers.LossScaleOptimizer(inner, clipnorm=1.0)
    with pytest.raises(ValueError, match="dynamic=False"):
        mk.optimizers.LossScaleOptimizer(inner, dynamic=False)
    with pytest.raises(ValueError, match="dynamic_growth_steps"):
        mk.optimizers.LossScaleOptimizer(inner, dynamic_growth_steps=0)
    with pytest.raises(TypeError, match="inner_optimizer"):
        mk.optimizers.LossScaleOptimizer("adam")
