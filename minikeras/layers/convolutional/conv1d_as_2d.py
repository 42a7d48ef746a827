"""Sequences as one-row images: how the 1D transpose, depthwise and separable
convolutions run on their 2D kernels.
"""
from minikeras import ops


def _as_image(tensor):
    return ops.expand_dims(tensor, 1)


def _as_kernel_2d(kernel):
    return ops.expand_dims(kernel, 0)


def _as_sequence(image):
    return ops.squeeze(image, 1)
