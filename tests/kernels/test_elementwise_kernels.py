"""Fused elementwise kernels and the multi-tensor Adam update, against
independent NumPy formulas, each one launch on the simulated GPU."""
import numpy
import pytest

from minikeras import kernels


def test_bias_relu_adds_the_bias_and_clamps_in_place(kernel_device, upload, launches, rng):
    out_host = rng.normal(size=(5, 7)).astype("float32")
    bias_host = rng.normal(size=7).astype("float32")
    for bias, relu, expected in ((bias_host, True, numpy.maximum(out_host + bias_host, 0)),
                                 (bias_host, False, out_host + bias_host), (None, True, numpy.maximum(out_host, 0))):
        out = upload(out_host)
        with launches(kernel_device, 1):
            result = kernels.get("bias_relu", kernel_device)(out, None if bias is None else upload(bias), relu)
        assert result is out
        numpy.testing.assert_allclose(kernel_device.to_host(out), expected, rtol=1e-6)


def test_relu_backward_masks_by_the_output_sign(kernel_device, upload, launches, rng):
    grad, out = rng.normal(size=(4, 6)), numpy.maximum(rng.normal(size=(4, 6)), 0)
    target = upload(numpy.empty_like(grad))
    with launches(kernel_device, 1):
        kernels.get("relu_backward", kernel_device)(upload(grad), upload(out), target)
    numpy.testing.assert_array_equal(kernel_device.to_host(target), numpy.where(out > 0, grad, 0.0))


@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_updates_every_variable_in_one_launch(kernel_device, upload, launches, rng, amsgrad):
    alpha, beta_1, beta_2, epsilon = 0.01, 0.9, 0.999, 1e-7
    shapes = [(3, 4), (4,), (2, 2, 5)]
    host = [{name: rng.normal(size=shape) ** (2 if name in ("v", "vh") else 1) for name in ("g", "m", "v", "vh", "w")}
            for shape in shapes]
    groups = []
    for arrays in host:
        work, update = upload(numpy.empty_like(arrays["w"])), upload(numpy.empty_like(arrays["w"]))
        groups.append((upload(arrays["g"]), upload(arrays["m"]), upload(arrays["v"]),
                       upload(arrays["vh"]) if amsgrad else None, upload(arrays["w"]), work, update))
    with launches(kernel_device, 1):
        kernels.get("adam_update", kernel_device)(groups, alpha, beta_1, beta_2, epsilon)
    for arrays, group in zip(host, groups):
        m = beta_1 * arrays["m"] + (1 - beta_1) * arrays["g"]
        v = beta_2 * arrays["v"] + (1 - beta_2) * arrays["g"] ** 2
        if amsgrad:
            v = numpy.maximum(v, arrays["vh"])
            numpy.testing.assert_allclose(kernel_device.to_host(group[3]), v, rtol=1e-12)
        numpy.testing.assert_allclose(kernel_device.to_host(group[1]), m, rtol=1e-12)
        numpy.testing.assert_allclose(kernel_device.to_host(group[4]), arrays["w"] - alpha * m / (numpy.sqrt(v) + epsilon),
                                      rtol=1e-12)


def test_an_unknown_kernel_name_lists_the_registered_ones(kernel_device):
    with pytest.raises(KeyError, match="no fused kernel named 'nope'.*adam_update"):
        kernels.get("nope", kernel_device)


def test_a_kernel_refuses_a_dtype_it_has_no_source_for():
    with pytest.raises(TypeError, match="float32 and float64"):
        kernels.cuda_source("", "float16")


@pytest.mark.parametrize("momentum,nesterov", [(0.0, False), (0.9, False), (0.9, True)])
def test_sgd_updates_every_variable_in_one_launch(kernel_device, upload, launches, rng, momentum, nesterov):
    learning_rate = 0.1
    host = [(rng.normal(size=shape), rng.normal(size=shape), rng.normal(size=shape)) for shape in ((2, 3), (5,))]
    groups = [(upload(g), upload(v) if momentum else None, upload(w), upload(numpy.empty_like(w)),
               upload(numpy.empty_like(w))) for g, v, w in host]
    with launches(kernel_device, 1):
        kernels.get("sgd_update", kernel_device)(groups, learning_rate, momentum, nesterov)
    for (g, v, w), group in zip(host, groups):
        if not momentum:
            expected = w - learning_rate * g
        else:
            v = momentum * v - learning_rate * g
            numpy.testing.assert_allclose(kernel_device.to_host(group[1]), v, rtol=1e-12)
            expected = w + (momentum * v - learning_rate * g if nesterov else v)
        numpy.testing.assert_allclose(kernel_device.to_host(group[2]), expected, rtol=1e-12)


def test_weight_decay_of_every_variable_in_one_launch(kernel_device, upload, launches, rng):
    host = [rng.normal(size=shape) for shape in ((3, 3), (4,), (2, 5))]
    groups = [(upload(w), upload(numpy.empty_like(w))) for w in host]
    with launches(kernel_device, 1):
        kernels.get("weight_decay_update", kernel_device)(groups, 0.004, 0.01)
    for w, (weights, _) in zip(host, groups):
        numpy.testing.assert_allclose(kernel_device.to_host(weights), w - w * 0.004 * 0.01, rtol=1e-14)


@pytest.mark.parametrize("centered,momentum", [(False, 0.0), (True, 0.5)])
def test_rmsprop_updates_every_variable_in_one_launch(kernel_device, upload, launches, rng, centered, momentum):
    learning_rate, rho, epsilon = 0.01, 0.9, 1e-7
    # Velocities well above the squared averages: a real centered state (sqrt of a positive number).
    host = [{name: rng.normal(size=shape) ** 2 + 2 if name == "v" else rng.normal(size=shape) * 0.5
             for name in "gvamw"} for shape in ((2, 3), (4,))]
    groups = [(upload(h["g"]), upload(h["v"]), upload(h["a"]) if centered else None,
               upload(h["m"]) if momentum else None, upload(h["w"]), upload(numpy.empty_like(h["w"])),
               upload(numpy.empty_like(h["w"]))) for h in host]
    with launches(kernel_device, 1):
        kernels.get("rmsprop_update", kernel_device)(groups, learning_rate, rho, epsilon, momentum)
    for h, group in zip(host, groups):
        v = rho * h["v"] + (1 - rho) * h["g"] ** 2
        denominator = v + epsilon
        if centered:
            average = rho * h["a"] + (1 - rho) * h["g"]
            denominator = v - average ** 2 + epsilon
        increment = learning_rate * h["g"] / numpy.sqrt(denominator)
        step = momentum * h["m"] + increment if momentum else increment
        numpy.testing.assert_allclose(kernel_device.to_host(group[4]), h["w"] - step, rtol=1e-10)
