"""``keras.distribution``: data parallelism set once for every model.

``set_distribution(DataParallel(...))`` makes ``fit``/``evaluate``/``predict``
of every model run on all the mesh's devices (through MirroredModel; see
data_parallel.py). ``DeviceMesh``, ``TensorLayout`` and ``LayoutMap`` are
Keras's; ``ModelParallel`` (sharded variables) is not supported.
"""
from minikeras.distribution.data_parallel import (  # noqa: F401
    DataParallel, Distribution, ModelParallel, distribute_tensor, distribution, initialize, set_distribution,
)
from minikeras.distribution.mesh import (  # noqa: F401
    DeviceMesh, LayoutMap, TensorLayout, get_device_count, list_devices,
)

__all__ = ["DataParallel", "DeviceMesh", "LayoutMap", "ModelParallel", "TensorLayout", "distribute_tensor",
           "distribution", "get_device_count", "initialize", "list_devices", "set_distribution"]
