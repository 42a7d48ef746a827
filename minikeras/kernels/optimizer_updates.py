"""Multi-tensor optimizer updates: every variable of a device in one launch.

PyTorch's ``Adam(fused=True)`` updates all parameters in one or a few
launches (``multi_tensor_apply``), where the per-variable NumPy-style update
costs a dozen kernels per variable (72 for a 6-variable MLP). Here the
CUDA kernel receives up to ``TENSORS_PER_LAUNCH`` variables' pointers and
sizes as arguments (no pointer table to upload, so no host-to-device copy
per step) and walks their concatenated elements in one grid-stride loop;
more variables take more launches of the same kernel.

The reference is the CPU's per-variable update, split over its op threads
by ``device.elementwise_blocks`` with the optimizer's scratch buffers; the
kernel repeats its operations in the same order and precision
(``scalar_t``), so both round alike.
"""
import numpy

from minikeras.kernels.kernel import Kernel, blocks_for, register

TENSORS_PER_LAUNCH = 16


def _tensor_arguments(fields, kinds):
    return ", ".join(f"{kind} {field}{k}" for k in range(TENSORS_PER_LAUNCH) for field, kind in zip(fields, kinds))


def _pointer_table(name, field):
    values = ", ".join(f"{field}{k}" for k in range(TENSORS_PER_LAUNCH))
    return f"    const unsigned long long {name}[{TENSORS_PER_LAUNCH}] = {{{values}}};\n"


_ADAM_FIELDS = ("weights", "gradient", "momentum", "velocity", "velocity_hat", "size")
_ADAM_KINDS = ("unsigned long long",) * 5 + ("long long",)

ADAM_SOURCE = (
    "extern \"C\" __global__ void adam_update(int tensors, scalar_t alpha, scalar_t keep_1, scalar_t keep_2,\n"
    "                                        scalar_t epsilon, int amsgrad,\n        "
    + _tensor_arguments(_ADAM_FIELDS, _ADAM_KINDS) + ") {\n"
    + "".join(_pointer_table(f"{field}_table", field) for field in _ADAM_FIELDS[:5])
    + f"    const long long size_table[{TENSORS_PER_LAUNCH}] = {{"
    + ", ".join(f"size{k}" for k in range(TENSORS_PER_LAUNCH)) + "};\n"
    + r"""    long long total = 0;
    for (int t = 0; t < tensors; ++t) total += size_table[t];
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)blockDim.x * gridDim.x) {
        int t = 0;
        long long j = i;
        while (j >= size_table[t]) { j -= size_table[t]; ++t; }
        scalar_t* weights = (scalar_t*)weights_table[t];
        const scalar_t g = ((const scalar_t*)gradient_table[t])[j];
        scalar_t* momentum = (scalar_t*)momentum_table[t];
        scalar_t* velocity = (scalar_t*)velocity_table[t];
        /* The reference's operations, in its order: m += (g - m) * (1 - b1); v += (g*g - v) * (1 - b2). */
        scalar_t m = momentum[j];
        m += (g - m) * keep_1;
        momentum[j] = m;
        scalar_t v = velocity[j];
        v += (g * g - v) * keep_2;
        velocity[j] = v;
        if (amsgrad) {
            scalar_t* velocity_hat = (scalar_t*)velocity_hat_table[t];
            if (velocity_hat[j] > v) v = velocity_hat[j];
            velocity_hat[j] = v;
        }
        weights[j] -= (m * alpha) / (sqrt(v) + epsilon);
    }
}
"""
)


def adam_reference(device, groups, alpha, beta_1, beta_2, epsilon):
    """Adam's update of every ``(gradient, momentum, velocity, velocity_hat,
    weights, work, update)`` group, in place (``work``/``update``: scratch
    arrays shaped like the variable)."""
    xp = device.xp
    for group in groups:
        device.elementwise_blocks(lambda *pieces: adam_math(xp, alpha, beta_1, beta_2, epsilon, *pieces), group)


def adam_math(xp, alpha, beta_1, beta_2, epsilon, gradient, momentum, velocity, velocity_hat, weights, work, update):
    """Adam on matching arrays (whole variables or equal slices)."""
    xp.subtract(gradient, momentum, out=work)
    work *= 1.0 - beta_1
    momentum += work
    xp.multiply(gradient, gradient, out=work)
    work -= velocity
    work *= 1.0 - beta_2
    velocity += work
    if velocity_hat is not None:
        xp.maximum(velocity_hat, velocity, out=velocity_hat)
        velocity = velocity_hat
    xp.sqrt(velocity, out=work)
    work += epsilon
    xp.multiply(momentum, alpha, out=update)
    update /= work
    weights -= update


def _adam_launch(launcher, device, groups, alpha, beta_1, beta_2, epsilon):
    xp = device.xp
    launcher.check(*(group[4].dtype for group in groups))
    by_dtype = {}
    for group in groups:
        by_dtype.setdefault(numpy.dtype(group[4].dtype).name, []).append(group)
    for dtype, same in by_dtype.items():
        scalar = numpy.dtype(dtype).type
        amsgrad = same[0][3] is not None
        for start in range(0, len(same), TENSORS_PER_LAUNCH):
            chunk = same[start:start + TENSORS_PER_LAUNCH]
            tensors = []
            for gradient, momentum, velocity, velocity_hat, weights, _, _ in chunk:
                gradient = xp.ascontiguousarray(gradient)
                hat = velocity_hat if velocity_hat is not None else velocity
                tensors.append([numpy.uint64(a.data.ptr) for a in (weights, gradient, momentum, velocity, hat)]
                               + [numpy.int64(weights.size)])
            total = sum(int(t[-1]) for t in tensors)
            tensors += [[numpy.uint64(0)] * 5 + [numpy.int64(0)]] * (TENSORS_PER_LAUNCH - len(tensors))
            arguments = (numpy.int32(len(chunk)), scalar(alpha), scalar(1.0 - beta_1), scalar(1.0 - beta_2),
                         scalar(epsilon), numpy.int32(amsgrad)) + tuple(value for t in tensors for value in t)
            grid, block = blocks_for(total)
            launcher.run(dtype, grid, block, arguments)


register(Kernel("adam_update", adam_reference, ADAM_SOURCE, _adam_launch))
