"""Multi-tensor optimizer updates: every variable of a device in one launch.

PyTorch's ``Adam(fused=True)`` updates all parameters in one or a few
launches (``multi_tensor_apply``), where the per-variable NumPy-style update
costs a dozen kernels per variable (72 for a 6-variable MLP). The kernels
here take the same layout (``multi_tensor.py``: a table of up to 32
tensors and their chunks, passed by value) and each applies one rule per
element; more tensors take more launches of the same kernel.

The reference is the CPU's per-variable update, split over its op threads
by ``device.elementwise_blocks`` with the optimizer's scratch buffers; the
kernels repeat its operations in the same order and precision, each
rounded on its own (``add_rn``/``mul_rn``: no fused multiply-add), so both
give the same bits (up to float32 subnormals, which CuPy's ``-ftz=true``
flushes on a GPU).
"""
import numpy

from minikeras.kernels.kernel import Kernel, register
from minikeras.kernels.multi_tensor import launch_all, multi_tensor_source

_STEP_VALUE = "    const scalar_t {0} = {0}_at ? *(const scalar_t*){0}_at : {0}_value;\n"

ADAM_SOURCE = multi_tensor_source(
    "adam_update", "scalar_t alpha_value, unsigned long long alpha_at, scalar_t keep_1, scalar_t keep_2, "
    "scalar_t epsilon, int amsgrad",
    (("weights", True, False), ("gradient", False, False), ("momentum", True, False), ("velocity", True, False),
     ("velocity_hat", True, True)), _STEP_VALUE.format("alpha"), r"""
        /* The reference's operations, in its order: m += (g - m) * (1 - b1); v += (g*g - v) * (1 - b2). */
        momentum = add_rn(momentum, mul_rn(sub_rn(gradient, momentum), keep_1));
        velocity = add_rn(velocity, mul_rn(sub_rn(mul_rn(gradient, gradient), velocity), keep_2));
        scalar_t denominator = velocity;
        if (amsgrad) {  /* numpy.maximum(velocity_hat, velocity): NaN wins */
            if (!(velocity_hat != velocity_hat || velocity_hat > velocity)) velocity_hat = velocity;
            denominator = velocity_hat;
        }
        weights = sub_rn(weights, mul_rn(momentum, alpha) / add_rn(sqrt(denominator), epsilon));
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


def _adam_launch(launcher, device, groups, alpha, beta_1, beta_2, epsilon):
    amsgrad = groups[0][3] is not None

    def pointers(group):
        gradient, momentum, velocity, velocity_hat, weights, _, _ = group
        return weights, gradient, momentum, velocity, velocity_hat

    launch_all(launcher, device, groups, pointers, lambda scalar: (
        *step_value(alpha, scalar), scalar(1.0 - beta_1), scalar(1.0 - beta_2), scalar(epsilon),
        numpy.int32(amsgrad)))


register(Kernel("adam_update", adam_reference, ADAM_SOURCE, _adam_launch))


# ----------------------------------------------------------------------- SGD
SGD_SOURCE = multi_tensor_source(
    "sgd_update", "scalar_t learning_rate_value, unsigned long long learning_rate_at, scalar_t momentum, "
    "int use_momentum, int nesterov",
    (("weights", True, False), ("gradient", False, False), ("velocity", True, True)),
    _STEP_VALUE.format("learning_rate"), r"""
        /* The reference's operations, in its order. */
        const scalar_t scaled = mul_rn(gradient, learning_rate);
        if (!use_momentum) {
            weights = sub_rn(weights, scaled);
        } else {
            velocity = sub_rn(mul_rn(velocity, momentum), scaled);
            weights = add_rn(weights, nesterov ? sub_rn(mul_rn(velocity, momentum), scaled) : velocity);
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
    launch_all(launcher, device, groups, lambda group: (group[2], group[0], group[1]), lambda scalar: (
        *step_value(learning_rate, scalar), scalar(momentum), numpy.int32(use_momentum), numpy.int32(nesterov)))


register(Kernel("sgd_update", sgd_reference, SGD_SOURCE, _sgd_launch))


# -------------------------------------------------------------- weight decay
WEIGHT_DECAY_SOURCE = multi_tensor_source(
    "weight_decay_update", "scalar_t weight_decay, scalar_t learning_rate_value, unsigned long long learning_rate_at",
    (("weights", True, False),), _STEP_VALUE.format("learning_rate"), r"""
        /* The reference's operations, in its order: decay = w * wd; decay *= lr; w -= decay. */
        weights = sub_rn(weights, mul_rn(mul_rn(weights, weight_decay), learning_rate));
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
    launch_all(launcher, device, groups, lambda group: (group[0],), lambda scalar: (
        scalar(weight_decay), *step_value(learning_rate, scalar)))


register(Kernel("weight_decay_update", weight_decay_reference, WEIGHT_DECAY_SOURCE, _weight_decay_launch))


# ------------------------------------------------------------------- RMSprop
RMSPROP_SOURCE = multi_tensor_source(
    "rmsprop_update", "scalar_t learning_rate_value, unsigned long long learning_rate_at, scalar_t rho, scalar_t keep, "
    "scalar_t epsilon, scalar_t momentum, int use_momentum, int centered",
    (("weights", True, False), ("gradient", False, False), ("velocity", True, False), ("average", True, True),
     ("momentum_slot", True, True)), _STEP_VALUE.format("learning_rate"), r"""
        /* The reference's operations, in its order. */
        velocity = add_rn(mul_rn(velocity, rho), mul_rn(mul_rn(gradient, gradient), keep));
        scalar_t denominator;
        if (centered) {
            average = add_rn(mul_rn(average, rho), mul_rn(gradient, keep));
            denominator = add_rn(sub_rn(velocity, mul_rn(average, average)), epsilon);
        } else {
            denominator = add_rn(velocity, epsilon);
        }
        const scalar_t increment = mul_rn(gradient, learning_rate) / sqrt(denominator);
        if (use_momentum) {
            momentum_slot = add_rn(mul_rn(momentum_slot, momentum), increment);
            weights = sub_rn(weights, momentum_slot);
        } else {
            weights = sub_rn(weights, increment);
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
    launch_all(launcher, device, groups, lambda group: (group[4], group[0], group[1], group[2], group[3]),
                         lambda scalar: (*step_value(learning_rate, scalar), scalar(rho), scalar(1.0 - rho), scalar(epsilon),
                                         scalar(momentum), numpy.int32(use_momentum), numpy.int32(centered)))


register(Kernel("rmsprop_update", rmsprop_reference, RMSPROP_SOURCE, _rmsprop_launch))
