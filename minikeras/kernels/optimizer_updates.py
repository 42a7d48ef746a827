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


def _pointer_table(name, field):
    values = ", ".join(f"{field}{k}" for k in range(TENSORS_PER_LAUNCH))
    return f"    const unsigned long long {name}[{TENSORS_PER_LAUNCH}] = {{{values}}};\n"


def multi_tensor_source(name, scalar_parameters, fields, body):
    """A multi-tensor kernel: ``tensors`` and the step-wide ``scalar_parameters``,
    then per tensor k the pointers ``<field>k`` and ``sizek``; ``body`` runs
    once per element with ``t`` (the tensor), ``j`` (the index in it) and
    ``<field>_table`` (the pointers, as integers) in scope."""
    parameters = ", ".join(f"unsigned long long {field}{k}, long long size{k}" if field == fields[-1]
                           else f"unsigned long long {field}{k}"
                           for k in range(TENSORS_PER_LAUNCH) for field in fields)
    return (
        f'extern "C" __global__ void {name}(int tensors, {scalar_parameters},\n        {parameters}) {{\n'
        + "".join(_pointer_table(f"{field}_table", field) for field in fields)
        + f"    const long long size_table[{TENSORS_PER_LAUNCH}] = {{"
        + ", ".join(f"size{k}" for k in range(TENSORS_PER_LAUNCH)) + "};\n"
        + r"""    long long total = 0;
    for (int t = 0; t < tensors; ++t) total += size_table[t];
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)blockDim.x * gridDim.x) {
        int t = 0;
        long long j = i;
        while (j >= size_table[t]) { j -= size_table[t]; ++t; }
""" + body + "    }\n}\n")


ADAM_SOURCE = multi_tensor_source(
    "adam_update", "scalar_t alpha_value, unsigned long long alpha_at, scalar_t keep_1, scalar_t keep_2, "
    "scalar_t epsilon, int amsgrad", ("weights", "gradient", "momentum", "velocity", "velocity_hat"), r"""
        const scalar_t alpha = alpha_at ? *(const scalar_t*)alpha_at : alpha_value;
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
""")


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


def step_value(value, scalar):
    """A per-step scalar as a kernel's two arguments ``(value, pointer)``:
    ``(value, 0)`` for a number, ``(0, address)`` for a 0-d device array of
    the kernel's dtype, read by the kernel when it runs (a captured step's,
    ``optimizers/_step_scalars.py``)."""
    if isinstance(value, (int, float, numpy.generic)):
        return scalar(value), numpy.uint64(0)
    if numpy.dtype(value.dtype) != numpy.dtype(scalar):
        raise TypeError(f"a device step scalar of dtype {value.dtype} for a kernel in {numpy.dtype(scalar)}.")
    return scalar(0), numpy.uint64(value.data.ptr)


def _multi_tensor_launch(launcher, device, groups, pointers, scalars):
    """Launch a multi-tensor kernel over ``groups``, TENSORS_PER_LAUNCH at a time.

    Args:
        groups: the per-variable tuples the reference takes.
        pointers: ``pointers(group)`` -> the group's arrays in the kernel's
            per-tensor order (a None stands for an unused one); the first
            is the variable's weights (its size and dtype).
        scalars: ``scalars(scalar_type)`` -> the step-wide arguments after
            ``tensors`` in the signature.
    """
    xp = device.xp
    launcher.check(*(pointers(group)[0].dtype for group in groups))
    by_dtype = {}
    for group in groups:
        by_dtype.setdefault(numpy.dtype(pointers(group)[0].dtype).name, []).append(group)
    for dtype, same in by_dtype.items():
        for start in range(0, len(same), TENSORS_PER_LAUNCH):
            chunk = same[start:start + TENSORS_PER_LAUNCH]
            # The arrays stay referenced until the launch is queued: a contiguous copy freed
            # earlier could be handed to the next copy before this kernel reads it.
            alive, tensors = [], []
            for group in chunk:
                arrays = [None if a is None else xp.ascontiguousarray(a) for a in pointers(group)]
                alive.append(arrays)
                tensors.append([numpy.uint64(0 if a is None else a.data.ptr) for a in arrays]
                               + [numpy.int64(arrays[0].size)])
            total = sum(int(t[-1]) for t in tensors)
            width = len(tensors[0])
            tensors += [[numpy.uint64(0)] * (width - 1) + [numpy.int64(0)]] * (TENSORS_PER_LAUNCH - len(tensors))
            arguments = ((numpy.int32(len(chunk)),) + tuple(scalars(numpy.dtype(dtype).type))
                         + tuple(value for t in tensors for value in t))
            grid, block = blocks_for(total)
            launcher.run(dtype, grid, block, arguments)
            del alive


def _adam_launch(launcher, device, groups, alpha, beta_1, beta_2, epsilon):
    amsgrad = groups[0][3] is not None

    def pointers(group):
        gradient, momentum, velocity, velocity_hat, weights, _, _ = group
        return weights, gradient, momentum, velocity, velocity_hat

    _multi_tensor_launch(launcher, device, groups, pointers, lambda scalar: (
        *step_value(alpha, scalar), scalar(1.0 - beta_1), scalar(1.0 - beta_2), scalar(epsilon),
        numpy.int32(amsgrad)))


register(Kernel("adam_update", adam_reference, ADAM_SOURCE, _adam_launch))


# ----------------------------------------------------------------------- SGD
SGD_SOURCE = multi_tensor_source(
    "sgd_update", "scalar_t learning_rate_value, unsigned long long learning_rate_at, scalar_t momentum, "
    "int use_momentum, int nesterov", ("weights", "gradient", "velocity"), r"""
        const scalar_t learning_rate = learning_rate_at ? *(const scalar_t*)learning_rate_at : learning_rate_value;
        scalar_t* weights = (scalar_t*)weights_table[t];
        /* The reference's operations, in its order. */
        const scalar_t scaled = ((const scalar_t*)gradient_table[t])[j] * learning_rate;
        if (!use_momentum) {
            weights[j] -= scaled;
        } else {
            scalar_t* velocity = (scalar_t*)velocity_table[t];
            scalar_t v = velocity[j] * momentum;
            v -= scaled;
            velocity[j] = v;
            if (nesterov) {
                scalar_t step = v * momentum;
                step -= scaled;
                weights[j] += step;
            } else {
                weights[j] += v;
            }
        }
""")


def sgd_reference(device, groups, learning_rate, momentum, nesterov):
    """SGD's update of every ``(gradient, velocity or None, weights, scaled,
    nesterov_step)`` group in place (the last two: scratch arrays)."""
    xp = device.xp
    for gradient, velocity, weights, scaled, nesterov_step in groups:
        xp.multiply(gradient, learning_rate, out=scaled)
        if velocity is None:
            weights -= scaled
            continue
        velocity *= momentum
        velocity -= scaled
        if nesterov:
            xp.multiply(velocity, momentum, out=nesterov_step)
            nesterov_step -= scaled
            weights += nesterov_step
        else:
            weights += velocity


def _sgd_launch(launcher, device, groups, learning_rate, momentum, nesterov):
    use_momentum = groups[0][1] is not None
    _multi_tensor_launch(launcher, device, groups, lambda group: (group[2], group[0], group[1]), lambda scalar: (
        *step_value(learning_rate, scalar), scalar(momentum), numpy.int32(use_momentum), numpy.int32(nesterov)))


register(Kernel("sgd_update", sgd_reference, SGD_SOURCE, _sgd_launch))


# -------------------------------------------------------------- weight decay
WEIGHT_DECAY_SOURCE = multi_tensor_source(
    "weight_decay_update", "scalar_t weight_decay, scalar_t learning_rate_value, unsigned long long learning_rate_at",
    ("weights",), r"""
        const scalar_t learning_rate = learning_rate_at ? *(const scalar_t*)learning_rate_at : learning_rate_value;
        scalar_t* weights = (scalar_t*)weights_table[t];
        /* The reference's operations, in its order: decay = w * wd; decay *= lr; w -= decay. */
        scalar_t decay = weights[j] * weight_decay;
        decay *= learning_rate;
        weights[j] -= decay;
""")


def weight_decay_reference(device, groups, weight_decay, learning_rate):
    """Decoupled weight decay ``w -= w * weight_decay * learning_rate`` of
    every ``(weights, scratch)`` group, in place."""
    xp = device.xp
    for weights, decay in groups:
        xp.multiply(weights, weight_decay, out=decay)
        decay *= learning_rate
        weights -= decay


def _weight_decay_launch(launcher, device, groups, weight_decay, learning_rate):
    _multi_tensor_launch(launcher, device, groups, lambda group: (group[0],), lambda scalar: (
        scalar(weight_decay), *step_value(learning_rate, scalar)))


register(Kernel("weight_decay_update", weight_decay_reference, WEIGHT_DECAY_SOURCE, _weight_decay_launch))


# ------------------------------------------------------------------- RMSprop
RMSPROP_SOURCE = multi_tensor_source(
    "rmsprop_update", "scalar_t learning_rate_value, unsigned long long learning_rate_at, scalar_t rho, scalar_t keep, "
    "scalar_t epsilon, scalar_t momentum, int use_momentum, int centered",
    ("weights", "gradient", "velocity", "average", "momentum_slot"), r"""
        const scalar_t learning_rate = learning_rate_at ? *(const scalar_t*)learning_rate_at : learning_rate_value;
        scalar_t* weights = (scalar_t*)weights_table[t];
        const scalar_t g = ((const scalar_t*)gradient_table[t])[j];
        scalar_t* velocity = (scalar_t*)velocity_table[t];
        /* The reference's operations, in its order. */
        scalar_t v = velocity[j] * rho;
        v += (g * g) * keep;
        velocity[j] = v;
        scalar_t denominator;
        if (centered) {
            scalar_t* average = (scalar_t*)average_table[t];
            scalar_t a = average[j] * rho;
            a += g * keep;
            average[j] = a;
            denominator = (v - a * a) + epsilon;
        } else {
            denominator = v + epsilon;
        }
        const scalar_t increment = (g * learning_rate) / sqrt(denominator);
        if (use_momentum) {
            scalar_t* momentum_slot = (scalar_t*)momentum_slot_table[t];
            scalar_t m = momentum_slot[j] * momentum;
            m += increment;
            momentum_slot[j] = m;
            weights[j] -= m;
        } else {
            weights[j] -= increment;
        }
""")


def rmsprop_reference(device, groups, learning_rate, rho, epsilon, momentum):
    """RMSprop's update of every ``(gradient, velocity, average or None,
    momentum slot or None, weights, work, increment)`` group, in place
    (``average`` when centered, the momentum slot when momentum > 0)."""
    xp = device.xp
    for gradient, velocity, average, momentum_slot, weights, work, increment in groups:
        velocity *= rho
        xp.multiply(gradient, gradient, out=work)
        work *= 1.0 - rho
        velocity += work
        if average is not None:
            average *= rho
            xp.multiply(gradient, 1.0 - rho, out=work)
            average += work
            xp.multiply(average, average, out=work)
            xp.subtract(velocity, work, out=work)
            work += epsilon
        else:
            xp.add(velocity, epsilon, out=work)
        xp.sqrt(work, out=work)
        xp.multiply(gradient, learning_rate, out=increment)
        increment /= work
        if momentum_slot is not None:
            momentum_slot *= momentum
            momentum_slot += increment
            weights -= momentum_slot
        else:
            weights -= increment


def _rmsprop_launch(launcher, device, groups, learning_rate, rho, epsilon, momentum):
    centered, use_momentum = groups[0][2] is not None, groups[0][3] is not None
    _multi_tensor_launch(launcher, device, groups, lambda group: (group[4], group[0], group[1], group[2], group[3]),
                         lambda scalar: (*step_value(learning_rate, scalar), scalar(rho), scalar(1.0 - rho), scalar(epsilon),
                                         scalar(momentum), numpy.int32(use_momentum), numpy.int32(centered)))


register(Kernel("rmsprop_update", rmsprop_reference, RMSPROP_SOURCE, _rmsprop_launch))
