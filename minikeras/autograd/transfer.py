"""Copies between devices, as a differentiable op."""
from minikeras.autograd.function import Function


class ToDevice(Function):
    """Copy a tensor to another logical device; backward copies back.

    The target device makes the copy (``Device.copy_from``): between GPUs it
    is ordered after the source stream's pending work by events.
    """

    keeps_input_devices = True

    def __init__(self, target):
        self.target = target

    def placement(self, tensors):
        self.source = tensors[0].device
        return self.target

    def forward(self, array):
        return self.target.copy_from(array, self.source)

    def backward(self, grad):
        return self.source.copy_from(grad, self.target)
