"""SparseCategoricalCrossentropy's mean as one fused op (issue 21): the same
value and gradient as the per-sample losses and their mean, one kernel
launch per training step's loss on a GPU, and the general path wherever the
fused op does not apply."""
import numpy
import pytest

import minikeras as mk
from minikeras import losses
from minikeras.autograd import gradcheck
from minikeras.device import registry
from minikeras._support import deferred_checks
from minikeras.ops.nn.softmax_cross_entropy_mean import SparseSoftmaxCrossEntropyMean


def _log_softmax(z):
    shifted = z - z.max(axis=-1, keepdims=True)
    return shifted - numpy.log(numpy.exp(shifted).sum(axis=-1, keepdims=True))


@pytest.fixture
def batch(rng):
    return rng.integers(0, 5, 9), rng.normal(0, 3, (9, 5)).astype(numpy.float32)


def _loss_and_grad(loss, labels, logits, scale=None):
    z = mk.tensor(logits, requires_grad=True)
    value = loss(labels, z)
    (value if scale is None else value * scale).backward()
    return value, z.grad.numpy()


def test_the_fused_mean_is_the_mean_of_the_per_sample_losses(batch):
    labels, logits = batch
    value, grad = _loss_and_grad(losses.SparseCategoricalCrossentropy(from_logits=True), labels, logits)
    assert type(value._node) is SparseSoftmaxCrossEntropyMean and value.shape == () and value.dtype == numpy.float32
    log_p = _log_softmax(logits.astype(numpy.float64))
    numpy.testing.assert_allclose(value.item(), -log_p[numpy.arange(9), labels].mean(), rtol=1e-6)
    numpy.testing.assert_allclose(grad, (numpy.exp(log_p) - numpy.eye(5)[labels]) / 9, rtol=1e-5, atol=1e-7)
    # the general path (a reduction of "none", then the mean) gives the same, to float32 rounding
    unfused = losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    z = mk.tensor(logits, requires_grad=True)
    mk.ops.mean(unfused(labels, z)).backward()
    numpy.testing.assert_allclose(value.item(), mk.ops.mean(unfused(labels, logits)).item(), rtol=1e-6)
    numpy.testing.assert_allclose(grad, z.grad.numpy(), rtol=1e-6, atol=1e-8)


def test_a_scaled_fused_mean_scales_its_gradient(batch):
    labels, logits = batch
    loss = losses.SparseCategoricalCrossentropy(from_logits=True)
    _, grad = _loss_and_grad(loss, labels, logits)
    _, scaled = _loss_and_grad(loss, labels, logits, scale=3.0)  # the root is the product: a seed of ones
    numpy.testing.assert_allclose(scaled, 3 * grad, rtol=1e-6)


def test_the_fused_mean_gradchecks_in_float64(batch):
    labels, logits = batch
    loss = losses.SparseCategoricalCrossentropy(from_logits=True)
    assert gradcheck(lambda z: loss(labels, z), [logits.astype(numpy.float64)], atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("case", ["sample_weight", "ignore_class", "probabilities", "sum", "sequence"])
def test_the_general_path_where_the_fused_op_does_not_apply(batch, case):
    labels, logits = batch
    kwargs, call = {"from_logits": True}, {}
    if case == "sample_weight":
        call["sample_weight"] = numpy.linspace(0.5, 1.5, 9).astype(numpy.float32)
    elif case == "ignore_class":
        kwargs["ignore_class"] = 0
    elif case == "probabilities":
        kwargs["from_logits"], logits = False, numpy.exp(_log_softmax(logits))
    elif case == "sum":
        kwargs["reduction"] = "sum"
    else:
        labels, logits = labels.reshape(3, 3), logits.reshape(3, 3, 5)
    value = losses.SparseCategoricalCrossentropy(**kwargs)(labels, mk.tensor(logits, requires_grad=True), **call)
    assert type(value._node) is not SparseSoftmaxCrossEntropyMean


def test_a_subclass_with_its_own_per_sample_losses_keeps_them(batch):
    labels, logits = batch

    class Doubled(losses.SparseCategoricalCrossentropy):
        def call_with_mask(self, y_true, y_pred):
            values, mask = super().call_with_mask(y_true, y_pred)
            return values * 2.0, mask

    value = Doubled(from_logits=True)(labels, mk.tensor(logits))
    plain = losses.SparseCategoricalCrossentropy(from_logits=True)(labels, mk.tensor(logits))
    numpy.testing.assert_allclose(value.item(), 2 * plain.item(), rtol=1e-6)


def test_out_of_range_labels_raise_on_the_fused_path(batch):
    labels, logits = batch
    labels = labels.copy()
    labels[3] = 5
    with pytest.raises(ValueError, match=r"\[0, 5\)"):
        losses.SparseCategoricalCrossentropy(from_logits=True)(labels, mk.tensor(logits))
    with pytest.raises(ValueError, match=r"\[0, 5\)"):  # labels already on the device: the op checks them
        losses.SparseCategoricalCrossentropy(from_logits=True)(mk.tensor(labels), mk.tensor(logits))


def test_the_loss_of_a_training_step_costs_one_launch_on_a_gpu(batch):
    labels, logits = batch
    device = registry.default_device()
    z = mk.tensor(logits, requires_grad=True)
    y = mk.tensor(labels)
    before = device.stats.kernel_launches
    with deferred_checks.deferring():  # as in a training step: the label range is checked when the logs are read
        losses.SparseCategoricalCrossentropy(from_logits=True)(y, z).backward()
        if device.kind == "gpu":  # forward, gradient and backward: one kernel (no seed of ones, no scaling)
            assert device.stats.kernel_launches - before == 1
    deferred_checks.run()
    numpy.testing.assert_allclose(z.grad.numpy().sum(axis=1), 0, atol=1e-6)
