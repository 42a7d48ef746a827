"""Devices, meshes and layouts: the vocabulary of ``keras.distribution``.

minikeras places work on logical devices (``device/``); a ``DeviceMesh``
arranges their names (``"gpu:0"``, ``"cpu:1"``) in a grid with named axes,
and a ``TensorLayout`` names which mesh axis shards each dimension of a
tensor, as Keras's JAX backend does. Data parallelism uses a one-axis mesh:
the batch dimension is split over it and every variable is replicated.
"""
import collections.abc
import math
import re

import numpy

from minikeras.device import registry

__all__ = ["list_devices", "get_device_count", "DeviceMesh", "TensorLayout", "LayoutMap"]

_KINDS = ("cpu", "gpu", "tpu")


def list_devices(device_type=None):
    """The devices of one kind, as ``"kind:index"`` strings (Keras's format).

    Args:
        device_type: ``"cpu"``, ``"gpu"`` or ``"tpu"``; default: the GPUs
            when there are any, else the CPUs (never a mix). Logical devices
            count (``config.set_logical_device_configuration``), so one CPU
            split in two gives ``["cpu:0", "cpu:1"]``.

    Returns:
        A list of device names (empty for ``"tpu"``: minikeras has none).
    """
    if device_type is not None:
        if not isinstance(device_type, str) or device_type.lower() not in _KINDS:
            raise ValueError(f"list_devices: device_type must be one of {list(_KINDS)} or None, "
                             f"received {device_type!r}.")
        device_type = device_type.lower()
    else:
        device_type = "gpu" if registry.list_logical_devices("GPU") else "cpu"
    if device_type == "tpu":
        return []
    return [device.name for device in registry.list_logical_devices(device_type.upper())]


def get_device_count(device_type=None):
    """``len(list_devices(device_type))``."""
    return len(list_devices(device_type))


class DeviceMesh:
    """Devices in a grid with named axes (``jax.sharding.Mesh``'s shape).

    Args:
        shape: the grid's shape, e.g. ``(8,)`` for data parallelism.
        axis_names: one name per axis, e.g. ``["batch"]``.
        devices: device names (or Devices), as many as the grid holds;
            default ``list_devices()``.

    Example:
        >>> mesh = DeviceMesh((2,), ["batch"], devices=["cpu:0", "cpu:1"])  # doctest: +SKIP
        >>> mesh.devices
        array(['cpu:0', 'cpu:1'], dtype='<U5')
    """

    def __init__(self, shape, axis_names, devices=None):
        if not shape or not axis_names:
            raise ValueError(f"DeviceMesh: shape and axis_names cannot be empty, received shape={shape!r}, "
                             f"axis_names={axis_names!r}.")
        if isinstance(axis_names, str):
            axis_names = [axis_names]
        if len(shape) != len(axis_names):
            raise ValueError(f"DeviceMesh: shape and axis_names must have the same length, received "
                             f"shape={shape!r}, axis_names={axis_names!r}.")
        if any(isinstance(size, bool) or not isinstance(size, (int, numpy.integer)) or size < 1 for size in shape):
            raise ValueError(f"DeviceMesh: shape must hold positive integers, received {shape!r}.")
        names = list_devices() if devices is None else [_device_name(device) for device in numpy.ravel(devices)]
        if math.prod(shape) != len(names):
            raise ValueError(f"DeviceMesh: shape {tuple(shape)} holds {math.prod(shape)} devices, received "
                             f"{len(names)} ({names}).")
        self._shape = tuple(int(size) for size in shape)
        self._axis_names = list(axis_names)
        self._devices = numpy.array(names).reshape(self._shape)

    @property
    def shape(self):
        """The grid's shape."""
        return self._shape

    @property
    def axis_names(self):
        """The axes' names."""
        return self._axis_names

    @property
    def devices(self):
        """The device names, a NumPy array of the mesh's shape."""
        return self._devices

    def __repr__(self):
        return f"<DeviceMesh shape={self.shape}, axis_names={self.axis_names}>"


def _device_name(device):
    """A device given by name or object, checked against those that exist."""
    return registry.get_device(device).name


class TensorLayout:
    """Which mesh axis shards each dimension of a tensor (None: not sharded).

    Args:
        axes: one entry per tensor dimension, a mesh axis name or None.
        device_mesh: the mesh (may be set later, once).
    """

    def __init__(self, axes, device_mesh=None):
        self._axes = tuple(axes)
        self._device_mesh = device_mesh
        self._check_axes()

    @property
    def axes(self):
        """The entries given, one per tensor dimension."""
        return self._axes

    @property
    def device_mesh(self):
        """The mesh, or None until set."""
        return self._device_mesh

    @device_mesh.setter
    def device_mesh(self, device_mesh):
        if self._device_mesh is not None:
            raise ValueError(f"TensorLayout: the device mesh is set already ({self._device_mesh}); it cannot be "
                             "replaced.")
        self._device_mesh = device_mesh
        self._check_axes()

    def _check_axes(self):
        if self._device_mesh is None:
            return
        unknown = set(self._axes) - {None} - set(self._device_mesh.axis_names)
        if unknown:
            raise ValueError(f"TensorLayout: axes {sorted(unknown)} are not axes of the mesh "
                             f"{self._device_mesh.axis_names}.")

    def __repr__(self):
        return f"<TensorLayout axes={self.axes}, device_mesh={self.device_mesh}>"


class LayoutMap(collections.abc.MutableMapping):
    """Variable paths (regular expressions) to layouts, for ``ModelParallel``.

    ``layout_map["dense.*kernel"] = (None, "model")`` stores a TensorLayout on
    the map's mesh; ``layout_map[path]`` returns the layout of the one key that
    matches ``path`` with ``re.search`` (an exact key first), None when none
    does, and raises when several do.

    Args:
        device_mesh: the DeviceMesh of every layout in the map.
    """

    def __init__(self, device_mesh):
        self._layouts = collections.OrderedDict()
        self._device_mesh = device_mesh

    @property
    def device_mesh(self):
        """The mesh of the map's layouts."""
        return self._device_mesh

    def __getitem__(self, key):
        if key in self._layouts:
            return self._layouts[key]
        matching = [pattern for pattern in self._layouts if re.search(pattern, key)]
        if len(matching) > 1:
            raise ValueError(f"LayoutMap: the path {key!r} matches several keys {matching}; make them exclusive.")
        return self._layouts[matching[0]] if matching else None

    def __setitem__(self, key, layout):
        if key in self._layouts:
            raise ValueError(f"LayoutMap: the key {key!r} has a layout already ({self._layouts[key]}); delete it "
                             "first.")
        if isinstance(layout, (tuple, list)):
            layout = TensorLayout(layout)
        if not isinstance(layout, TensorLayout):
            raise ValueError(f"LayoutMap: a layout must be a TensorLayout or a tuple of axes, received "
                             f"{type(layout).__name__}.")
        if layout.device_mesh is None:
            layout.device_mesh = self._device_mesh
        self._layouts[key] = layout

    def __delitem__(self, key):
        del self._layouts[key]

    def __len__(self):
        return len(self._layouts)

    def __iter__(self):
        return iter(self._layouts)
