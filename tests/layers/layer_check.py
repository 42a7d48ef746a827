"""The shared layer check (in the spirit of Keras's ``run_layer_test``).

``run_layer_test`` builds a layer, calls it, and checks what every layer
owes: the output shape and dtype, that outputs and weights live on the
device the test runs for, ``compute_output_shape`` against the real
output, the weight counts, the config round trip (``from_config(
get_config())`` rebuilds a layer that computes the same thing from the same
weights), the model save/load round trip through the saving code (so the
class is registered and its weights are found again), the forward pass
under the 16-bit policies (mixed_float16, mixed_bfloat16: outputs in the
compute dtype, close to float32's, gradients reaching the float32 weights),
and the gradients by finite differences in float64.

Every device: tests/layers runs once per device under test (tests/conftest.py
makes each one the default device in turn: ``cpu:0``, real GPUs, or the
strict simulated GPU in CI's second run), so every check here runs there.
"""
import warnings

import numpy

from minikeras import Sequential
from minikeras.autograd import Tensor, gradcheck, no_grad
from minikeras.device import default_device
from minikeras.layers import Input
from minikeras.models import load_model


def _outputs(value):
    return [value] if isinstance(value, Tensor) else list(value)


def run_layer_test(make_layer, input_data=None, expected_output_shape=None, expected_output=None, tmp_path=None,
                   gradient=True, training=False, call_kwargs=None, atol=1e-5, rtol=1e-4, input_shape=None,
                   expected_num_trainable_weights=None, expected_num_non_trainable_weights=None,
                   expected_num_losses=None):
    """Check a layer end to end; returns the (float32) layer it built.

    Args:
        make_layer: ``make_layer(dtype=...) -> Layer`` (a fresh layer each
            call), or a Layer class (built with its defaults).
        input_data: a NumPy array (one input); or None with ``input_shape``.
        input_shape: the shape of seeded normal float32 data used when
            ``input_data`` is None.
        expected_output_shape: the output's shape, if given.
        expected_output: the output's value, if given (float32 tolerance).
        tmp_path: a directory for the save/load round trip (skipped if None).
        gradient: gradcheck in float64 with respect to the input (float
            inputs) and the trainable weights.
        training: the ``training`` flag of every call.
        call_kwargs: extra keyword arguments of every call.
        expected_num_trainable_weights, expected_num_non_trainable_weights,
        expected_num_losses: checked when given.
    """
    if isinstance(make_layer, type):
        layer_class = make_layer
        make_layer = lambda **kw: layer_class(**kw)  # noqa: E731
    if input_data is None:
        if input_shape is None:
            raise ValueError("run_layer_test needs input_data or input_shape.")
        input_data = numpy.random.default_rng(3).normal(size=input_shape).astype(numpy.float32)
    call_kwargs = dict(call_kwargs or {})
    layer = make_layer(dtype="float32")
    output = layer(input_data, training=training, **call_kwargs)
    first = _outputs(output)[0]
    if expected_output_shape is not None:
        assert tuple(first.shape) == tuple(expected_output_shape)
    _check_device(layer, _outputs(output))
    _check_output_shape(layer, numpy.shape(input_data), first.shape)
    for expected, actual, what in ((expected_num_trainable_weights, layer.trainable_weights, "trainable weights"),
                                   (expected_num_non_trainable_weights, layer.non_trainable_weights,
                                    "non-trainable weights"),
                                   (expected_num_losses, layer.losses, "losses")):
        if expected is not None:
            assert len(actual) == expected, f"{type(layer).__name__}: {len(actual)} {what}, expected {expected}"
    if expected_output is not None:
        numpy.testing.assert_allclose(first.numpy(), expected_output, atol=atol, rtol=rtol)
    if first.dtype.kind == "f":
        assert first.dtype == numpy.float32, f"{type(layer).__name__} returned {first.dtype} for float32"
    assert layer.built

    # Config round trip: same class, same config, same output on the same weights.
    config = layer.get_config()
    twin = type(layer).from_config(config)
    assert type(twin) is type(layer)
    twin(input_data, training=training, **call_kwargs)
    twin.set_weights(layer.get_weights())
    assert twin.get_config() == {**config, "name": twin.name} or twin.get_config() == config
    if not training:
        numpy.testing.assert_allclose(_outputs(twin(input_data, training=False, **call_kwargs))[0].numpy(),
                                      first.numpy(), atol=1e-6)

    # Save/load round trip through a model file.
    if tmp_path is not None and not call_kwargs:
        data = numpy.asarray(input_data)
        model = Sequential([Input(shape=data.shape[1:], dtype=data.dtype.name), make_layer(dtype="float32")])
        with no_grad():
            before = _outputs(model(data))[0].numpy()
        path = str(tmp_path / f"{type(layer).__name__}.h5")
        model.save(path)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="No training configuration")
            loaded = load_model(path)
        assert type(loaded.layers[0]) is type(layer)
        for mine, theirs in zip(model.get_weights(), loaded.get_weights()):
            numpy.testing.assert_array_equal(mine, theirs)
        if not training:
            numpy.testing.assert_allclose(_outputs(loaded(data))[0].numpy(), before, atol=1e-6)

    _check_16_bit_policies(make_layer, layer, input_data, first, training, call_kwargs)

    # Gradients in float64: input (if float) and trainable weights.
    if gradient:
        layer64 = make_layer(dtype="float64")
        data = numpy.asarray(input_data)
        as64 = data.astype(numpy.float64) if data.dtype.kind == "f" else data
        layer64(as64, training=training, **call_kwargs)
        rng = numpy.random.default_rng(7)
        layer64.set_weights([w + rng.normal(0, 0.2, w.shape) if w.dtype.kind == "f" else w
                             for w in layer.get_weights()])
        weights = layer64.trainable_weights

        def function(*tensors):
            x = tensors[0] if data.dtype.kind == "f" else as64
            values = tensors[1:] if data.dtype.kind == "f" else tensors
            return _outputs(_call_with(layer64, weights, values, x, training, call_kwargs))[0]

        inputs = ([Tensor(as64, requires_grad=True)] if data.dtype.kind == "f" else []) + \
                 [Tensor(w.numpy(), requires_grad=True) for w in weights]
        if inputs:
            assert gradcheck(function, inputs, atol=atol, rtol=rtol)
    return layer


# Largest |16-bit output - float32 output| allowed, relative to max |float32 output|:
# a few steps of each type (float16's is 2**-10, bfloat16's 2**-7) over a layer's roundings.
_16_BIT_TOLERANCE = {"mixed_float16": 1e-2, "mixed_bfloat16": 6e-2}


def _check_16_bit_policies(make_layer, layer, input_data, first, training, call_kwargs):
    """The layer under mixed_float16 and mixed_bfloat16, with the float32
    layer's weights: float32 variables, floating outputs in the compute dtype
    (or float32 where the layer keeps float32), values near float32's
    (deterministic calls), and gradients reaching the variables in float32."""
    weights = layer.get_weights()
    expected = first.numpy()
    for policy, tolerance in _16_BIT_TOLERANCE.items():
        half = make_layer(dtype=policy)
        half(input_data, training=training, **call_kwargs)
        half.set_weights(weights)
        assert all(w.dtype.name == "float32" for w in half.weights if w.dtype.kind == "f")
        output = _outputs(half(input_data, training=training, **call_kwargs))[0]
        compute = half.compute_dtype
        if expected.dtype.kind == "f":
            assert output.dtype.name in (compute, "float32"), \
                f"{type(layer).__name__} under {policy} returned {output.dtype}, expected {compute}"
            got = output.numpy().astype(numpy.float32)
            assert numpy.array_equal(numpy.isfinite(got), numpy.isfinite(expected)), f"{type(layer).__name__} {policy}"
            if not training and expected.size:
                finite = numpy.isfinite(expected)
                scale = max(float(numpy.abs(expected[finite]).max(initial=0.0)), 1.0)
                error = float(numpy.abs(got[finite] - expected[finite]).max(initial=0.0))
                assert error <= tolerance * scale, f"{type(layer).__name__} under {policy}: error {error}"
        if output.requires_grad and half.trainable_weights:
            output.astype("float32").sum().backward()
            for weight in half.trainable_weights:
                assert weight.grad is None or weight.grad.dtype == weight.dtype


def _check_device(layer, outputs):
    """Outputs and weights on the device this run of the test is for."""
    device = default_device()
    for output in outputs:
        assert output.device is device, f"{type(layer).__name__} output on {output.device}, expected {device}"
    for weight in layer.weights:
        assert weight.device is device, f"{type(layer).__name__} weight {weight.name} on {weight.device}"


def _check_output_shape(layer, input_shape, output_shape):
    """``compute_output_shape`` (batch left unknown) agrees with the call."""
    try:
        predicted = layer.compute_output_shape((None,) + tuple(input_shape[1:]))
    except NotImplementedError:
        return
    if predicted is None:  # a layer that predicts nothing (generic RNN)
        return
    if predicted and isinstance(predicted[0], (tuple, list)):
        predicted = predicted[0]
    predicted = tuple(predicted)
    assert len(predicted) == len(output_shape), f"{type(layer).__name__}: predicted {predicted}, got {output_shape}"
    for want, got in zip(predicted[1:], tuple(output_shape)[1:]):
        assert want is None or want == got, f"{type(layer).__name__}: predicted {predicted}, got {output_shape}"


def _call_with(layer, weights, values, x, training, call_kwargs):
    """Call ``layer`` with its trainable weights replaced by ``values`` (so
    gradcheck's tensors are the ones differentiated)."""
    from minikeras.layers.base import walk_layers

    owners = []
    for weight, value in zip(weights, values):
        for owner in [layer] + walk_layers(layer):
            for attribute, held in list(vars(owner).items()):
                if held is weight:
                    owners.append((owner, attribute, held))
                    setattr(owner, attribute, value)
    try:
        return layer(x, training=training, **call_kwargs)
    finally:
        for owner, attribute, held in owners:
            setattr(owner, attribute, held)
