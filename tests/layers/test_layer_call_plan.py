"""The call plan (layers/call_plan.py): a built layer called again with the
same input signature replays what the full call protocol decided. Each
change that feeds those decisions must give what a fresh layer gives, bit
for bit, and the planned path must behave as the full one (errors, name
scopes, masks, the training flag)."""
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.autograd import is_grad_enabled
from minikeras.layers.input_spec import InputSpec


def _batch(shape=(4, 6), dtype="float32", seed=0):
    return mk.tensor(numpy.random.default_rng(seed).standard_normal(shape).astype(dtype))


def _planned_dense(units=5, **kwargs):
    layer = layers.Dense(units, **kwargs)
    x = _batch()
    layer(x)
    layer(x)
    assert layer._call_plan is not None
    return layer, x


def _fresh_copy(layer, **kwargs):
    """A new Dense with ``layer``'s weights, built by one full-protocol call."""
    fresh = layers.Dense(layer.units, activation=layer.activation, **kwargs)
    fresh.build((None, layer.kernel.shape[0]))
    fresh.set_weights(layer.get_weights())
    return fresh


def _same(a, b):
    a, b = numpy.asarray(a), numpy.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_the_second_call_takes_the_plan_without_the_full_protocol():
    layer, x = _planned_dense()
    expected = layer(x).numpy()
    full_calls = []
    original = layer._checked_call
    layer._checked_call = lambda *args, **kwargs: full_calls.append(1) or original(*args, **kwargs)
    assert _same(layer(x), expected)
    assert full_calls == []
    layer(_batch((3, 6)))  # another batch size: another signature, the full path (and its plan)
    assert full_calls == [1]


def test_changing_the_dtype_policy_gives_the_fresh_layers_result():
    layer, x = _planned_dense(activation="relu")
    layer.dtype_policy = "mixed_float16"
    assert layer._call_plan is None
    fresh = _fresh_copy(layer, dtype="mixed_float16")
    out, again, expected = layer(x), layer(x), fresh(x)
    assert out.dtype == numpy.float16
    assert _same(out, expected) and _same(again, expected)


def test_a_float64_input_is_cast_as_a_fresh_layer_casts_it():
    layer, _ = _planned_dense()
    x64 = _batch(dtype="float64")
    layer(x64)
    out = layer(x64)  # planned: the cast is replayed
    assert out.dtype == numpy.float32
    assert _same(out, _fresh_copy(layer)(x64))


def test_setting_input_spec_is_checked_on_the_next_call():
    layer, x = _planned_dense()
    layer.input_spec = InputSpec(axes={-1: 7})
    assert layer._call_plan is None
    with pytest.raises(ValueError, match="expects the last input axis to be 7") as planned:
        layer(x)
    fresh = _fresh_copy(layer)
    fresh.input_spec = InputSpec(axes={-1: 7})
    with pytest.raises(ValueError) as full:
        fresh(x)
    assert str(planned.value).replace(layer.name, "*") == str(full.value).replace(fresh.name, "*")


def test_toggling_trainable_gives_the_fresh_layers_result_and_gradients():
    layer, x = _planned_dense()
    layer.trainable = False
    assert layer._call_plan is None
    fresh = _fresh_copy(layer)
    fresh.trainable = False
    assert _same(layer(x), fresh(x))
    out = layer(x)
    assert not out.requires_grad  # frozen weights, a plain input: nothing to record
    layer.trainable = True
    out = layer(x)
    out.sum().backward()
    fresh.trainable = True
    reference = fresh(x)
    reference.sum().backward()
    assert _same(out, reference) and _same(layer.kernel.grad, fresh.kernel.grad)


def test_a_mask_appearing_takes_the_full_path_and_passes_the_mask_on():
    layer, x = _planned_dense()
    mask = mk.tensor(numpy.array([True, False, True, True]))
    x._keras_mask = mask
    out = layer(x)
    fresh_out = _fresh_copy(layer)(x)
    assert _same(out, fresh_out)
    assert out._keras_mask is not None and _same(out._keras_mask, fresh_out._keras_mask)
    x._keras_mask = None
    assert layer(x)._keras_mask is None  # the mask is gone: none passed on


class _TrainingScale(layers.Layer):
    """Doubles its input while training (a plain stand-in for Dropout)."""

    def call(self, inputs, training=None):
        return inputs * 2.0 if training else inputs


def test_training_true_and_false_on_a_planned_layer():
    layer = _TrainingScale()
    x = _batch()
    layer(x, training=False)
    layer(x, training=False)
    assert layer._call_plan is not None
    assert _same(layer(x, training=True), x.numpy() * 2.0)
    assert _same(layer(x, training=False), x)
    assert _same(layer(x), x)


def test_the_outer_training_flag_reaches_a_planned_sublayer():
    inner = _TrainingScale()

    class Outer(layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.inner = inner

        def call(self, inputs):  # no training argument: the inner layer inherits the outer call's flag
            return self.inner(inputs)

    outer = Outer()
    x = _batch()
    outer(x, training=False)
    outer(x, training=False)
    assert inner._call_plan is not None and outer._call_plan is not None
    assert _same(outer(x, training=True), x.numpy() * 2.0)
    assert _same(outer(x, training=False), x)


def test_dropout_planned_and_fresh_agree_for_both_training_values():
    x = _batch((8, 16))
    planned = layers.Dropout(0.5, seed=3)
    planned(x, training=False)
    planned(x, training=False)
    fresh = layers.Dropout(0.5, seed=3)
    assert _same(planned(x, training=True), fresh(x, training=True))
    assert _same(planned(x, training=False), x)


def test_a_weight_made_inside_a_planned_call_gets_the_layers_path():
    class Lazy(layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.make_inner = False
            self.inner = None

        def call(self, inputs):
            if self.make_inner and self.inner is None:
                self.inner = layers.Dense(2, name="inner")
            return inputs if self.inner is None else self.inner(inputs)

    lazy = Lazy(name="lazy")
    x = _batch()
    lazy(x)
    lazy(x)
    assert lazy._call_plan is not None
    lazy.make_inner = True
    lazy(x)
    assert lazy.inner.kernel.path == "lazy/inner/kernel"


def test_an_error_in_a_planned_call_reads_as_on_the_full_path():
    class Picky(layers.Layer):
        fail = False

        def call(self, inputs):
            if self.fail:
                mk.ops.reshape(inputs, (5, 5))  # a library check: named by the layer on the way out
            return inputs

    picky = Picky(name="picky")
    x = _batch()
    picky(x)
    picky(x)
    assert picky._call_plan is not None
    picky.fail = True
    with pytest.raises(ValueError) as planned:
        picky(x)
    del picky.__dict__["_call_plan"]
    with pytest.raises(ValueError) as full:
        picky(x)
    assert str(planned.value) == str(full.value)
    assert str(planned.value).startswith("Picky 'picky'")


def test_an_outer_autocast_scope_takes_the_full_path():
    class Mixed(layers.Layer):
        def __init__(self, inner, **kwargs):
            super().__init__(dtype="mixed_float16", **kwargs)
            self.inner = inner

        def call(self, inputs):
            return self.inner(inputs)

    inner = layers.Dense(3, dtype="float32")
    x = _batch()
    inner(x)
    inner(x)
    assert inner._call_plan is not None
    out = Mixed(inner)(x)  # inside a float16 scope the float32 layer opens its own: float32 out
    assert out.dtype == numpy.float32
    assert _same(out, Mixed(_fresh_copy(inner, dtype="float32"))(x))
    assert _same(inner(x), _fresh_copy(inner, dtype="float32")(x))  # and outside it again


def test_predict_on_batch_records_no_graph():
    seen = []

    class Probe(layers.Layer):
        def call(self, inputs):
            seen.append((is_grad_enabled(), inputs.requires_grad, inputs._node is None))
            return inputs

    model = mk.Sequential([layers.Input((6,)), layers.Dense(4), Probe()])
    x = numpy.random.default_rng(0).standard_normal((3, 6)).astype("float32")
    model(x, training=True)
    assert seen[-1] == (True, True, False)  # a call outside predict records the Dense's op
    for _ in range(3):  # the full path, then the planned one
        out = model.predict_on_batch(x)
        assert seen[-1] == (False, False, True)
    assert _same(out, model.predict(x, verbose=0))
    assert is_grad_enabled()


def test_a_device_array_input_takes_the_plan(device, monkeypatch):
    """A model on a GPU hands its first layer the batch as a device array (a CuPy array): that
    signature is planned as a NumPy array's is, and the planned call gives the full call's result."""
    layer = layers.Dense(3, activation="relu")
    layer.build((None, 6))
    with device.activate():
        array = device.asarray(numpy.random.default_rng(0).standard_normal((4, 6)).astype("float32"))
    first = layer(array)
    assert layer._call_plan is not None and layer._call_plan.input_type is type(array)
    monkeypatch.setattr(type(layer), "_call_unplanned", lambda *args, **kwargs: pytest.fail("the full protocol ran"))
    second = layer(array)
    assert second.device is device and _same(first.numpy(), second.numpy())
