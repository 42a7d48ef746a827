"""Tensors as Keras users treat them: ``f"{loss:.2f}"``, other libraries'
arrays as operands of the operators (``mk_tensor + tf_tensor`` in a custom
``train_step``), and TensorFlow-only APIs met in a ported script
(``tf.GradientTape``, ``@tf.function``) raising the library's error that
names the replacement."""
import numpy
import pytest

import minikeras as mk
from minikeras import errors, layers


class ArrayLike:
    """Another library's array, as minikeras sees one: only ``__array__``."""

    def __init__(self, values):
        self.values = numpy.asarray(values, dtype="float32")

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)


def test_format_spec_on_a_scalar_tensor():
    loss = mk.ops.mean(mk.tensor([0.25, 0.5]))
    assert f"{loss:.2f}" == "0.38" and f"loss: {loss:.4f}" == "loss: 0.3750"
    assert "{:>8.1f}".format(mk.tensor([[2.0]])) == "     2.0"
    assert f"{mk.tensor(3):d}" == "3"
    assert f"{mk.tensor([1.0, 2.0])}" == str(mk.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match=r"Tensor.__format__ expects a tensor of one element .* shape \(2,\)"):
        f"{mk.tensor([1.0, 2.0]):.2f}"


def test_array_likes_as_operands_of_the_operators():
    x = mk.tensor([1.0, 2.0, 3.0])
    other = ArrayLike([10.0, 20.0, 30.0])
    numpy.testing.assert_allclose((x + other).numpy(), [11.0, 22.0, 33.0])
    reflected = other - x  # ArrayLike has no __sub__: Python asks the Tensor's __rsub__
    assert isinstance(reflected, mk.Tensor)
    numpy.testing.assert_allclose(reflected.numpy(), [9.0, 18.0, 27.0])
    numpy.testing.assert_allclose((x * other).numpy(), [10.0, 40.0, 90.0])
    numpy.testing.assert_allclose((x / other).numpy(), [0.1, 0.1, 0.1], rtol=1e-6)
    numpy.testing.assert_array_equal((x < other).numpy(), [True, True, True])
    numpy.testing.assert_allclose((mk.tensor([[1.0, 2.0]]) @ ArrayLike([[1.0], [1.0]])).numpy(), [[3.0]])
    numpy.testing.assert_allclose((mk.tensor([7.0, -7.0]) // 2).numpy(), [3.0, -4.0])
    numpy.testing.assert_allclose((mk.tensor([7.0, -7.0]) % 3).numpy(), [1.0, 2.0])
    numpy.testing.assert_allclose((9.0 // mk.tensor([2.0])).numpy(), [4.0])
    # Gradients flow through the minikeras side.
    w = mk.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (w * other).sum().backward()
    numpy.testing.assert_allclose(w.grad.numpy(), [10.0, 20.0, 30.0])
    with pytest.raises(TypeError, match="add: expected a Tensor, an array or a number, received object"):
        x + object()


def test_tf_tensor_operands_in_a_custom_train_step():
    tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed (comparison only)")

    class CustomModel(mk.Model):
        def train_step(self, data):
            x, y = data
            with mk.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
                loss = loss + tf.constant(0.5)  # a TensorFlow term, as ported scripts keep them
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            self.seen.append(f"{loss:.3f}")
            return {"loss": loss}

    inputs = layers.Input(shape=(2,))
    model = CustomModel(inputs, layers.Dense(1, kernel_initializer="zeros")(inputs))
    model.seen = []
    model.compile(optimizer="sgd", loss="mse")
    x = numpy.ones((4, 2), "float32")
    history = model.fit(x, numpy.full((4, 1), 2.0, "float32"), batch_size=4, epochs=2, verbose=0)
    assert model.seen[0] == "4.500"  # mse 4 with zero weights, plus TensorFlow's 0.5
    assert history.history["loss"][1] < history.history["loss"][0]
    assert isinstance(tf.constant([1.0]) + mk.tensor([2.0]), tf.Tensor)  # TensorFlow's operator converts ours
    numpy.testing.assert_allclose(tf.convert_to_tensor(mk.tensor([1.5])).numpy(), [1.5])


def test_tf_gradient_tape_names_minikeras_gradient_tape():
    tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed (comparison only)")
    model = mk.Sequential([layers.Input((3,)), layers.Dense(1)])
    x, y = numpy.ones((2, 3), "float32"), numpy.zeros((2, 1), "float32")
    loss_fn = mk.losses.MeanSquaredError()
    with tf.GradientTape() as tape:  # the TensorFlow-backend guide's loop, ported as is
        logits = model(x, training=True)
        loss_value = loss_fn(y, logits)
    with pytest.raises(errors.TensorFlowAPIError, match=r"Use minikeras\.GradientTape"):
        tape.gradient(loss_value, model.trainable_weights)
    with mk.GradientTape() as tape:  # the replacement the error names
        loss_value = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss_value, model.trainable_weights)
    assert [g.shape for g in grads] == [(3, 1), (1,)]
    assert not hasattr(mk.tensor([1.0]), "_id")  # probes with hasattr still answer False


def test_tf_function_around_minikeras_names_jit_compile():
    tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed (comparison only)")
    model = mk.Sequential([layers.Input((3,)), layers.Dense(1)])
    loss_fn = mk.losses.MeanSquaredError()
    weight = mk.tensor([2.0])

    @tf.function
    def scaled(x):
        return weight * 3.0  # a minikeras result TensorFlow would freeze into the graph

    with pytest.raises(errors.TensorFlowAPIError, match="jit_compile=True"):
        scaled(tf.constant(1.0))

    @tf.function
    def test_step(x, y):
        return loss_fn(y, model(x, training=False))  # symbolic tf.Tensors reach minikeras

    with pytest.raises(Exception, match="jit_compile=True") as raised:
        test_step(numpy.ones((2, 3), "float32"), numpy.zeros((2, 1), "float32"))
    assert "Cannot convert a symbolic" not in str(raised.value)
    # The replacement: fit's step captured by compile(jit_compile=True), or eager calls.
    model.compile(optimizer="sgd", loss="mse", jit_compile=True)
    assert len(model.fit(numpy.ones((4, 3), "float32"), numpy.zeros((4, 1), "float32"), verbose=0,
                         epochs=1).history["loss"]) == 1
