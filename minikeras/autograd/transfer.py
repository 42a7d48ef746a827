"""Copies between devices, as a differentiable op."""
from minikeras.autograd.function import Function


def _copy_to(array, source, target):
    if source.kind == "cpu" and target.kind == "cpu":
        return array.copy()
    if target.kind == "cpu":
        with source.activate():
            source.synchronize()
            return array.get()
    with target.activate():
        copied = target.xp.array(array, copy=True)
        return copied


class ToDevice(Function):
    """Copy a tensor to another logical device; backward copies back."""

    keeps_input_devices = True

    def __init__(self, target):
        self.target = target

    def placement(self, tensors):
        self.source = tensors[0].device
        return self.target

    def forward(self, array):
        return _copy_to(array, self.source, self.target)

    def backward(self, grad):
        return _copy_to(grad, self.target, self.source)
