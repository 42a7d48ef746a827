"""Sparse softmax cross-entropy, forward and backward, each one fused kernel."""
import numpy

from minikeras import kernels


def _log_softmax(logits):
    top = logits.max(axis=1, keepdims=True)
    return logits - top - numpy.log(numpy.exp(logits - top).sum(axis=1, keepdims=True))


def test_forward_gives_the_loss_and_the_probabilities(kernel_device, upload, launches, rng):
    logits = rng.normal(size=(6, 5)) * 30  # large logits: the shift must keep exp finite
    labels = numpy.array([0, 4, 2, 2, 1, 3])
    with launches(kernel_device, 1):
        loss, probabilities = kernels.get("sparse_softmax_cross_entropy", kernel_device)(
            upload(logits), upload(labels), True)
    log_p = _log_softmax(logits)
    numpy.testing.assert_allclose(kernel_device.to_host(loss), -log_p[numpy.arange(6), labels], rtol=1e-12)
    numpy.testing.assert_allclose(kernel_device.to_host(probabilities), numpy.exp(log_p), rtol=1e-12)
    with kernel_device.activate():
        loss, probabilities = kernels.get("sparse_softmax_cross_entropy", kernel_device)(
            upload(logits), upload(labels), False)
    assert probabilities is None


def test_backward_is_softmax_minus_one_hot_times_the_gradient(kernel_device, upload, launches, rng):
    logits, labels, grad = rng.normal(size=(4, 3)), numpy.array([2, 0, 1, 1]), rng.normal(size=4)
    probabilities = numpy.exp(_log_softmax(logits))
    with launches(kernel_device, 1):
        grad_logits = kernels.get("sparse_softmax_cross_entropy_backward", kernel_device)(
            upload(probabilities), upload(labels), upload(grad))
    expected = (probabilities - numpy.eye(3)[labels]) * grad[:, None]
    numpy.testing.assert_allclose(kernel_device.to_host(grad_logits), expected, rtol=1e-12, atol=1e-15)


def test_the_mean_kernel_gives_the_mean_loss_and_its_gradient_in_one_launch(kernel_device, upload, launches, rng):
    logits = rng.normal(size=(7, 4)) * 20
    labels = numpy.array([0, 3, 2, 2, 1, 3, 0])
    with launches(kernel_device, 1):
        loss, grad_logits = kernels.get("sparse_softmax_cross_entropy_mean", kernel_device)(
            upload(logits), upload(labels), True)
    log_p = _log_softmax(logits)
    assert kernel_device.to_host(loss).shape == ()
    numpy.testing.assert_allclose(kernel_device.to_host(loss), -log_p[numpy.arange(7), labels].mean(), rtol=1e-12)
    expected = (numpy.exp(log_p) - numpy.eye(4)[labels]) / 7
    numpy.testing.assert_allclose(kernel_device.to_host(grad_logits), expected, rtol=1e-12, atol=1e-15)
    with launches(kernel_device, 1):
        _, grad_logits = kernels.get("sparse_softmax_cross_entropy_mean", kernel_device)(
            upload(logits), upload(labels), False)
    assert grad_logits is None


def test_the_mean_kernel_gives_nan_for_an_unchecked_out_of_range_label(kernel_device, upload):
    with kernel_device.activate():
        loss, grad_logits = kernels.get("sparse_softmax_cross_entropy_mean", kernel_device)(
            upload(numpy.zeros((2, 3))), upload(numpy.array([1, 5])), True)
    assert numpy.isnan(kernel_device.to_host(loss))
    # the out-of-range row gets the softmax's gradient only, nothing is written outside it
    numpy.testing.assert_allclose(kernel_device.to_host(grad_logits), [[1 / 6, -1 / 3, 1 / 6], [1 / 6] * 3])
