"""Every public op names itself in the argument errors raised under it
(``minikeras/ops/_entry.py``), and window sizes a 32-bit kernel cannot take
are refused before any kernel, on every device (issue 27)."""
import pickle

import numpy
import pytest

import minikeras as mk
from minikeras import ops


def test_an_op_written_over_another_names_itself_first():
    x = mk.tensor(numpy.ones((2, 3), "float32"))
    with pytest.raises(TypeError, match=r"^amax: max: axis must be an int or a tuple of ints, received float 1.5"):
        ops.amax(x, axis=1.5)
    with pytest.raises(TypeError, match=r"^nanargmax: argmax: axis must be an int or None, received True"):
        ops.nanargmax(x, axis=True)
    # Two levels down (vsplit -> array_split -> split): the op the user called wins, once.
    with pytest.raises(ValueError, match=r"^vsplit: split: "):
        ops.vsplit(mk.tensor(numpy.ones((4, 3), "float32")), 3)


def test_an_error_that_already_names_the_op_is_unchanged():
    with pytest.raises(TypeError, match=r"^sum: axis must be an int or a tuple of ints, received float 1.5\.$"):
        ops.sum(mk.tensor(numpy.ones(3, "float32")), 1.5)


def test_a_layer_still_names_itself_around_the_op():
    class Peak(mk.layers.Layer):
        def call(self, inputs):
            return ops.amax(inputs, axis=1.5)

    with pytest.raises(TypeError, match=r"^Peak 'peak': amax: max: axis must be an int"):
        Peak(name="peak")(mk.tensor(numpy.ones((2, 3), "float32")))


def test_wrapping_keeps_identities_and_pickling():
    assert ops.swish is ops.silu and ops.numpy.amax is ops.amax and ops.nn.relu is ops.relu
    from minikeras.ops.math import statistics

    assert statistics.amax is ops.amax
    assert pickle.loads(pickle.dumps(ops.amax)) is ops.amax


@pytest.mark.parametrize("call", [
    lambda x: ops.avg_pool1d(x, 2, strides=10**12),
    lambda x: ops.max_pool1d(x, 2**31),
    lambda x: ops.average_pool(x, 2, strides=(2**31,)),
    lambda x: ops.conv1d(x, numpy.ones((2, 2, 3), "float32"), strides=2**40),
    lambda x: ops.conv1d(x, numpy.ones((2, 2, 3), "float32"), dilation_rate=2**31),
])
def test_window_sizes_past_int32_are_refused_before_any_kernel(call):
    x = mk.tensor(numpy.ones((1, 6, 2), "float32"))
    with pytest.raises(ValueError, match=r"must be at most 2147483647 \(window kernels take 32-bit sizes\)"):
        call(x)


def test_window_sizes_past_int32_are_refused_by_2d_3d_ops_and_layers():
    images = mk.tensor(numpy.ones((1, 4, 4, 2), "float32"))
    with pytest.raises(ValueError, match="max_pool2d: strides must be at most 2147483647"):
        ops.max_pool2d(images, 2, strides=(1, 2**31))
    with pytest.raises(ValueError, match="avg_pool3d: pool_size must be at most 2147483647"):
        ops.avg_pool3d(mk.tensor(numpy.ones((1, 2, 2, 2, 1), "float32")), 2**33)
    with pytest.raises(ValueError, match="MaxPooling2D: strides must be at most 2147483647"):
        mk.layers.MaxPooling2D(2, strides=10**12)
    assert ops.avg_pool1d(mk.tensor(numpy.ones((1, 6, 2), "float32")), 2, strides=2**31 - 1).shape == (1, 1, 2)


def test_a_dilated_window_past_int32_is_refused_even_when_each_size_fits():
    # 3 taps 2**30 apart span 2**31 + 1 positions; SAME padding would pad by about that much.
    x = mk.tensor(numpy.ones((1, 5, 2), "float32"))
    with pytest.raises(ValueError, match=r"conv1d: the dilated window \(1, 2147483649\) and its padding .* must stay "
                                         r"at most 2147483647"):
        ops.conv1d(x, numpy.ones((3, 2, 1), "float32"), padding="same", dilation_rate=2**30)
