"""The fused update path: one multi-tensor kernel per device and step.

``Optimizer.apply`` reaches ``_update_variables``; an optimizer whose rule
has a multi-tensor kernel in ``minikeras.kernels`` (Adam's ``adam_update``,
SGD's ``sgd_update``, RMSprop's ``rmsprop_update``)
overrides it to call :func:`update_all`, which hands every variable of a
device to one kernel call: one launch on a GPU (per 32 variables), the
CPU's threaded per-variable NumPy update elsewhere (the kernel's
reference). A subclass that overrides ``update_step`` keeps the
per-variable path, so a custom rule is never bypassed.
"""
from minikeras import kernels


def update_all(kernel_name, groups_and_devices, *scalars):
    """Run the kernel ``kernel_name`` once per device.

    Args:
        kernel_name: a multi-tensor kernel of ``minikeras.kernels``.
        groups_and_devices: ``(device, group)`` pairs, a group being the
            kernel's per-variable arrays.
        *scalars: the kernel's step-wide arguments (learning rate, ...).
    """
    by_device = {}
    for device, group in groups_and_devices:
        by_device.setdefault(device, []).append(group)
    for device, groups in by_device.items():
        with device.activation_context:  # device.activate(), without the call
            kernels.get(kernel_name, device)(groups, *scalars)


def overrides_update_step(optimizer, base):
    """Whether ``optimizer``'s class replaces ``base.update_step`` (then the
    fused path, which implements ``base``'s rule, must not be used)."""
    return type(optimizer).update_step is not base.update_step
