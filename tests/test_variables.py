"""Variable (minikeras/variables.py): state with Keras 3's methods, usable as a Tensor."""
import numpy
import pytest

import minikeras as mk
from minikeras.autograd import gradcheck
from minikeras.variables import Variable


def test_from_value_and_from_initializer():
    v = Variable([1.0, 2.0], name="v")
    assert Variable(numpy.array([1.0, 2.0])).dtype == numpy.float64  # an array keeps its dtype, as in Keras
    assert v.dtype == numpy.float32 and v.shape == (2,) and v.trainable and v.requires_grad and v.path == "v"
    w = Variable("ones", shape=(2, 3), dtype="float64", trainable=False)
    assert w.dtype == numpy.float64 and numpy.all(w.numpy() == 1) and not w.requires_grad and w.name == "variable"
    counter = Variable(numpy.zeros((), dtype="int32"))
    assert counter.dtype == numpy.int32 and not counter.requires_grad


def test_assign_methods_work_in_place_and_keep_dtype():
    v = Variable(numpy.zeros(3, "float32"))
    data = v.data
    v.assign([1.0, 2.0, 3.0]).assign_add(numpy.ones(3)).assign_sub(0.5)
    assert v.data is data and v.dtype == numpy.float32
    numpy.testing.assert_allclose(v.numpy(), [1.5, 2.5, 3.5])
    v.assign_add(mk.tensor([1.0, 1.0, 1.0]))
    numpy.testing.assert_allclose(v.value.numpy(), [2.5, 3.5, 4.5])


def test_bad_values_get_clear_errors():
    v = Variable(numpy.zeros((2, 2), "float32"), name="kernel")
    with pytest.raises(ValueError, match=r"'kernel' has shape \(2, 2\); cannot add .* shape \(3,\)"):
        v.assign_add(numpy.ones(3))
    with pytest.raises(ValueError, match="expects shape"):
        v.assign(numpy.ones((3, 3)))
    with pytest.raises(ValueError, match="needs a shape"):
        Variable("zeros")
    with pytest.raises(ValueError, match="needs an initializer"):
        Variable()
    with pytest.raises(ValueError, match="shape=\\(3,\\) was given"):
        Variable(numpy.zeros(2), shape=(3,))
    with pytest.raises(TypeError, match="unexpected keyword"):
        Variable(numpy.zeros(2), colour="red")


def test_trainable_setter_turns_gradients_off():
    v = Variable(numpy.ones(2))
    v.trainable = False
    assert not v.requires_grad and not v.trainable


def test_gradients_flow_through_a_variable_in_ops():
    v = Variable(numpy.array([[0.5, -1.0], [2.0, 0.25]], dtype="float64"), dtype="float64")
    x = mk.tensor(numpy.array([[1.0, 2.0]]), dtype="float64")
    (mk.ops.matmul(x, v) * v.sum()).sum().backward()
    assert v.grad is not None and v.grad.shape == (2, 2)
    assert gradcheck(lambda a: (mk.ops.matmul(x, a) * a.sum()).sum(), [v])


def test_repr_names_path_shape_dtype():
    text = repr(Variable(numpy.zeros(2, "float32"), name="dense/bias"))
    assert text.startswith("<Variable path=dense/bias, shape=(2,), dtype=float32, value=")


def test_a_variable_never_aliases_the_array_it_was_made_from():
    source = numpy.zeros(3, "float32")
    v = Variable(source)
    v.assign_add(1.0)
    assert numpy.all(source == 0) and numpy.all(v.numpy() == 1)
    broadcast = numpy.broadcast_to(numpy.float32(2.0), (2, 2))  # read-only view
    w = Variable(broadcast)
    w.assign_sub(1.0)
    assert numpy.all(w.numpy() == 1.0)


def test_numpy_and_array_conversions_are_snapshots_that_training_leaves_alone():
    # Keras returns copies: a value read before a training step keeps the value it had.
    model = mk.Sequential([mk.layers.Input((3,)), mk.layers.Dense(2)])
    model.compile(optimizer=mk.optimizers.SGD(0.5), loss="mse")
    kernel = model.layers[0].kernel
    snapshots = [kernel.numpy(), numpy.array(kernel), numpy.asarray(kernel), numpy.array(kernel, copy=True),
                 numpy.asarray(kernel, dtype="float64")]
    before = [snapshot.copy() for snapshot in snapshots]
    model.fit(numpy.ones((8, 3), "float32"), numpy.full((8, 2), 5.0, "float32"), epochs=2, verbose=0)
    assert not numpy.array_equal(kernel.numpy(), before[0])  # training moved the weight...
    for snapshot, value in zip(snapshots, before):
        numpy.testing.assert_array_equal(snapshot, value)  # ...not the snapshots


def test_array_copy_false_follows_numpy_2():
    v = Variable(numpy.zeros(3, "float32"))
    if v.device.host_kernels:  # the CPU: the live buffer, as asked
        live = numpy.asarray(v, copy=False)
        v.assign_add(1.0)
        assert numpy.all(live == 1.0)
    else:  # a GPU's value must come to the host: NumPy's ValueError, as for any array that needs a copy
        with pytest.raises(ValueError, match="copy=False"):
            numpy.asarray(v, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        numpy.asarray(v, dtype="float64", copy=False)


def test_tensor_array_conversion_honours_copy():
    t = mk.tensor([1.0, 2.0])
    copied = numpy.array(t)  # NumPy 2 passes copy=True: never the tensor's own buffer
    t.assign(numpy.array([9.0, 9.0], "float32"))
    numpy.testing.assert_array_equal(copied, [1.0, 2.0])
