"""Keras 3's top-level names, used as Keras's guides use them: subclassing
``keras.Layer``/``Loss``/``Metric``, ``keras.name_scope``,
``keras.StatelessScope``, ``keras.Function``, ``keras.Operation``,
``keras.version()``, ``keras.remat``."""
import warnings

import numpy
import pytest

import minikeras as keras
from minikeras import ops


def test_classes_are_the_namespaces_own():
    assert keras.Layer is keras.layers.Layer and keras.Loss is keras.losses.Loss
    assert keras.Metric is keras.metrics.Metric and keras.Optimizer is keras.optimizers.Optimizer
    assert keras.Initializer is keras.initializers.Initializer
    assert keras.Regularizer is keras.regularizers.Regularizer
    assert keras.InputSpec is keras.layers.InputSpec and isinstance(keras.Input((2,)), keras.KerasTensor)
    assert isinstance(keras.version(), str) and keras.version() == keras.__version__
    assert {"Layer", "tree", "data", "name_scope", "Function"} <= set(dir(keras))


def test_subclassing_layer_loss_metric_initializer_regularizer_from_the_top_level():
    class Linear(keras.Layer):  # the "Making new layers and models via subclassing" guide
        def __init__(self, units=4, **kwargs):
            super().__init__(**kwargs)
            self.units = units

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer=Ones(),
                                     regularizer=L1Half(), trainable=True)

        def call(self, inputs):
            return ops.matmul(inputs, self.w)

    class Ones(keras.Initializer):
        def __call__(self, shape, dtype=None):
            return ops.ones(shape, dtype=dtype)

    class L1Half(keras.Regularizer):
        def __call__(self, x):
            return 0.5 * ops.sum(ops.abs(x))

    class MeanAbsolute(keras.Loss):
        def call(self, y_true, y_pred):
            return ops.mean(ops.abs(y_true - y_pred), axis=-1)

    class Count(keras.Metric):
        def __init__(self, name="count", **kwargs):
            super().__init__(name=name, **kwargs)
            self.total = self.add_variable(shape=(), initializer="zeros", name="total")

        def update_state(self, y_true, y_pred, sample_weight=None):
            self.total.assign_add(ops.cast(ops.shape(y_true)[0], "float32"))

        def result(self):
            return self.total

    layer = Linear(2)
    out = layer(numpy.ones((3, 5), "float32"))
    numpy.testing.assert_allclose(out.numpy(), numpy.full((3, 2), 5.0))
    assert float(layer.losses[0]) == 5.0  # 0.5 * sum(|ones(5, 2)|)
    model = keras.Sequential([keras.Input((5,)), Linear(1)])
    model.compile(optimizer="sgd", loss=MeanAbsolute(), metrics=[Count()])
    logs = model.evaluate(numpy.ones((6, 5), "float32"), numpy.zeros((6, 1), "float32"), batch_size=3,
                          return_dict=True, verbose=0)
    assert logs["count"] == 6.0 and logs["loss"] == pytest.approx(5.0 + 2.5)


def test_name_scope_gives_variable_paths():
    with keras.name_scope("encoder"):
        with keras.name_scope("block_1"):
            scale = keras.Variable(1.0, name="scale")
        with keras.name_scope("block_2", override_parent="decoder"):
            shift = keras.Variable(0.0, name="shift")
    assert scale.path == "encoder/block_1/scale" and shift.path == "decoder/block_2/shift"
    assert keras.Variable(2.0, name="free").path == "free"
    owner = object()
    with keras.name_scope("dense", caller=owner):
        with keras.name_scope("dense", caller=owner):  # the same caller reopening: no new level
            kernel = keras.Variable(numpy.zeros(2), name="kernel")
    assert kernel.path == "dense/kernel"
    with pytest.raises(ValueError, match="cannot contain character `/`"):
        keras.name_scope("a/b")


def test_stateless_scope_leaves_variables_unchanged():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, kernel_initializer="zeros")])
    x = numpy.ones((1, 2), "float32")
    # keras.StatelessScope's docstring example
    state_mapping = [(k, ops.ones(k.shape, k.dtype)) for k in model.weights]
    with keras.StatelessScope(state_mapping) as scope:
        outputs = model(x)
        model.weights[1].assign_add(numpy.ones(1, "float32"))
    numpy.testing.assert_allclose(outputs.numpy(), [[3.0]])  # ones kernel, ones bias
    numpy.testing.assert_allclose(model(x).numpy(), [[0.0]])  # the variables are unchanged
    numpy.testing.assert_allclose(scope.get_current_value(model.weights[1]).numpy(), [2.0])
    numpy.testing.assert_allclose(scope.get_current_value(model.weights[0]).numpy(), [[1.0], [1.0]])
    counter = keras.Variable(numpy.zeros(2), name="counter")
    with keras.StatelessScope() as scope:
        counter.assign(numpy.full(2, 5.0))
        numpy.testing.assert_allclose(counter.numpy(), [5.0, 5.0])  # reads see the update inside
    numpy.testing.assert_allclose(counter.numpy(), [0.0, 0.0])
    numpy.testing.assert_allclose(scope.get_current_value(counter).numpy(), [5.0, 5.0])
    assert scope.get_current_value(keras.Variable(1.0)) is None
    with pytest.raises(ValueError, match="must be Variable instances"):
        keras.StatelessScope([(numpy.zeros(2), numpy.zeros(2))])
    with pytest.raises(ValueError, match="shape that matches"):
        keras.StatelessScope([(counter, numpy.zeros(3))])


def test_function_and_operation():
    class Double(keras.Operation):
        def call(self, x):
            return ops.multiply(x, 2.0)

    inputs = keras.Input((3,))
    doubled = Double()(inputs)
    outputs = keras.layers.Dense(1, kernel_initializer="ones", use_bias=False)(doubled + 1.0)
    function = keras.Function(inputs, outputs, name="double_then_sum")
    numpy.testing.assert_allclose(function(numpy.ones((2, 3), "float32")).numpy(), [[9.0], [9.0]])
    assert function.name == "double_then_sum" and len(function.inputs) == 1 and len(function.outputs) == 1
    assert [type(op).__name__ for op in function.operations] == ["InputLayer", "Double", "SymbolicOperation",
                                                                 "Dense"]
    assert function.compute_output_shape((None, 3)) == (None, 1)
    assert isinstance(keras.layers.Dense(2), keras.Operation) and issubclass(keras.layers.Dense, keras.Operation)
    assert not isinstance(3, keras.Operation)
    model = keras.Model(inputs, outputs)
    assert [layer.name for layer in model.layers if isinstance(layer, Double)] == []  # an op, not a layer
    with pytest.raises(ValueError, match="`inputs` argument cannot be empty"):
        keras.Function([], outputs)


def test_remat_and_remat_scope_as_keras_numpy_backend():
    def block(x):
        return ops.relu(x) * 2.0

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rematerialized = keras.remat(block)
    assert rematerialized is block and "not supported" in str(caught[0].message)
    with keras.RematScope(mode="larger_than", output_size_threshold=10):
        model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2)])
        assert model(numpy.ones((1, 2), "float32")).shape == (1, 2)
    with pytest.raises(ValueError, match="Invalid mode 'sometimes'"):
        keras.RematScope(mode="sometimes")
    with keras.SymbolicScope():
        from minikeras.scopes import in_symbolic_scope

        assert in_symbolic_scope()
    assert not in_symbolic_scope()
