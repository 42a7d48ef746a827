"""``keras.distribution``'s distributions: data parallelism through MirroredModel.

``set_distribution(DataParallel(devices=["gpu:0", "gpu:1"]))`` makes every
model's ``fit``, ``evaluate``, ``predict`` and ``*_on_batch`` data-parallel
over those devices, with no change to the model: its trainer asks the
distribution (``minikeras/replica_context.py``) for a runner, and the runner
is a :class:`~minikeras.distribute.MirroredModel` around the model (the
model's own step on every replica, gradients all-reduced), or across
processes (``initialize()`` under ``mpiexec``) a
:class:`~minikeras.distribute.MultiWorkerMirroredModel`.

Model parallelism (``ModelParallel``: variables sharded over a mesh axis) is
not supported: its layouts can be built and inspected, but making it the
distribution raises NotImplementedError.
"""
import contextlib
import warnings
import weakref

from minikeras import replica_context
from minikeras.distribution.mesh import DeviceMesh, LayoutMap, TensorLayout, list_devices

__all__ = ["Distribution", "DataParallel", "ModelParallel", "set_distribution", "distribution",
           "distribute_tensor", "initialize"]

DEFAULT_BATCH_DIM_NAME = "batch"

_processes = {"count": 1, "index": 0}


def _launched_processes():
    """The process count an MPI launcher announced in the environment (1 if none)."""
    import os

    for variable in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"):
        value = os.environ.get(variable, "")
        if value.isdigit():
            return int(value)
    return 1


def initialize(job_addresses=None, num_processes=None, process_id=None):
    """Join a multi-process job (Keras's ``jax.distributed`` set-up).

    minikeras's processes are MPI ranks: launch the script with ``mpiexec``
    (or srun); ``num_processes`` and ``process_id``, when given, are checked
    against the MPI world. ``job_addresses`` (a coordinator address for JAX)
    is not needed and ignored. A process no launcher started is a job of one
    (MPI is not even loaded then).

    Raises:
        RuntimeError: several processes asked for but this process was not
            started by an MPI launcher, or the MPI world differs from what
            was asked.
    """
    del job_addresses
    launched = _launched_processes()
    wanted = 1 if num_processes is None else int(num_processes)
    if launched == 1:
        if wanted != 1 or process_id not in (None, 0):
            raise RuntimeError(f"initialize(num_processes={num_processes}, process_id={process_id}): this process "
                               "was not started by an MPI launcher; run the script with "
                               f"mpiexec -n {wanted} (pip install -e '.[mpi]' brings mpiexec).")
        return
    try:
        from mpi4py import MPI
    except ImportError:
        raise RuntimeError("initialize(): minikeras joins several processes through MPI; install mpi4py "
                           "(pip install -e '.[mpi]').") from None
    size, rank = MPI.COMM_WORLD.Get_size(), MPI.COMM_WORLD.Get_rank()
    if num_processes is not None and wanted != size or process_id is not None and int(process_id) != rank:
        raise RuntimeError(f"initialize(num_processes={num_processes}, process_id={process_id}) does not match "
                           f"the MPI world: {size} processes, this one rank {rank}.")
    _processes.update(count=size, index=rank)


class Distribution:
    """Base class of the distributions (Keras's): a mesh and a batch axis.

    Args:
        device_mesh: the DeviceMesh.
        batch_dim_name: the mesh axis the batch is split over.
        auto_shard_dataset: with several processes, each reads its share of
            the same data (True), or already has its own shard (False).
    """

    def __init__(self, device_mesh, batch_dim_name=None, auto_shard_dataset=True):
        self._device_mesh = device_mesh
        self._batch_dim_name = batch_dim_name
        self._auto_shard_dataset = bool(auto_shard_dataset)
        self._num_processes = _processes["count"]
        self._process_id = _processes["index"]

    @property
    def device_mesh(self):
        """The DeviceMesh."""
        return self._device_mesh

    @property
    def batch_dim_name(self):
        """The mesh axis the batch is split over."""
        return self._batch_dim_name

    @property
    def auto_shard_dataset(self):
        """Whether each process takes its share of the same data."""
        return self._auto_shard_dataset

    @auto_shard_dataset.setter
    def auto_shard_dataset(self, value):
        self._auto_shard_dataset = bool(value)

    @property
    def num_processes(self):
        """Processes in the job (1 unless launched by MPI and ``initialize()``d)."""
        return self._num_processes

    @property
    def num_model_replicas(self):
        """How many copies of the model train at once."""
        raise NotImplementedError

    @property
    def data_shard_id(self):
        """This process's shard of the data."""
        replicas = self.num_model_replicas
        if replicas >= self.num_processes:
            return self._process_id
        return self._process_id // (self.num_processes // replicas)

    def get_data_layout(self, data_shape):
        """The layout of an input batch of ``data_shape``."""
        raise NotImplementedError

    def get_variable_layout(self, variable):
        """The layout of ``variable``."""
        raise NotImplementedError

    def get_tensor_layout(self, path):
        """The layout of the intermediate tensor at ``path`` (or None)."""
        raise NotImplementedError

    def distribute_dataset(self, dataset):
        """The dataset this process reads (every process the same in one process)."""
        return dataset

    @contextlib.contextmanager
    def scope(self):
        """Make this the distribution of this thread inside the block."""
        _check_supported(self)
        with replica_context.distribution_scope(self):
            yield self

    def runner_for(self, model):
        """The trainer that runs ``model``'s steps under this distribution
        (None: the model's own, one device)."""
        return None

    def __repr__(self):
        return f"<{type(self).__name__} device_mesh={self.device_mesh}, batch_dim_name={self.batch_dim_name!r}>"


class DataParallel(Distribution):
    """Replicate the model on every device of a one-axis mesh and split each
    batch over them (Keras's ``DataParallel``).

    Give ``device_mesh`` or ``devices`` (not both), or neither for every
    device of ``list_devices()``. Training then goes through MirroredModel:
    the model's own ``train_step`` on every replica, gradients all-reduced
    and weighted by each replica's rows (distribute/replica_step.py).

    Args:
        device_mesh: a DeviceMesh; with several axes the first is the batch's
            (with a warning, as Keras).
        devices: device names, for a one-axis mesh named "batch".
        auto_shard_dataset: see :class:`Distribution`.

    Example:
        >>> mk.distribution.set_distribution(mk.distribution.DataParallel(devices=["cpu:0", "cpu:1"]))  # doctest: +SKIP
        >>> model.fit(x, y)   # both devices, each half of every batch
    """

    def __init__(self, device_mesh=None, devices=None, auto_shard_dataset=True):
        if device_mesh is not None and devices is not None:
            raise ValueError("DataParallel: give device_mesh or devices, not both.")
        if device_mesh is not None:
            if not isinstance(device_mesh, DeviceMesh):
                raise ValueError(f"DataParallel expects device_mesh to be a DeviceMesh, received "
                                 f"{type(device_mesh).__name__}.")
            if device_mesh.devices.ndim != 1:
                warnings.warn(f"DataParallel expects a one-axis mesh, received {device_mesh.devices.ndim} axes; the "
                              "first axis splits the batch.", UserWarning, stacklevel=2)
            batch_name = device_mesh.axis_names[0]
        else:
            names = list_devices() if not devices else list(devices)
            device_mesh = DeviceMesh((len(names),), [DEFAULT_BATCH_DIM_NAME], devices=names)
            batch_name = DEFAULT_BATCH_DIM_NAME
        super().__init__(device_mesh, batch_name, auto_shard_dataset)
        self._runners = weakref.WeakKeyDictionary()  # model -> its MirroredModel

    @property
    def num_model_replicas(self):
        return int(self.device_mesh.devices.size) * self.num_processes

    def get_data_layout(self, data_shape):
        """The batch axis split over the mesh, every other dimension whole."""
        return TensorLayout([self.batch_dim_name] + [None] * (len(data_shape) - 1), self.device_mesh)

    def get_variable_layout(self, variable):
        """Replicated: every dimension whole (or a layout the variable carries)."""
        layout = getattr(variable, "_layout", None)
        return layout if layout is not None else TensorLayout([None] * len(variable.shape), self.device_mesh)

    def get_tensor_layout(self, path):
        """Intermediate tensors keep their layout: None."""
        return None

    def runner_for(self, model):
        """A MirroredModel (MultiWorkerMirroredModel across processes) over
        the mesh's devices, made once per model; None for one device in one
        process (the model trains as it is)."""
        devices = [str(name) for name in self.device_mesh.devices.reshape(-1)]
        if len(devices) <= 1 and self.num_processes <= 1:
            return None
        runner = self._runners.get(model)
        if runner is None:
            from minikeras import distribute

            if self.num_processes > 1:
                runner = distribute.MultiWorkerMirroredModel(
                    model, devices=devices, data="global" if self.auto_shard_dataset else "sharded")
            else:
                runner = distribute.MirroredModel(model, devices=devices)
            self._runners[model] = runner
        return runner


class ModelParallel(Distribution):
    """Keras's variable-sharding distribution: its layouts can be built and
    queried, but minikeras does not shard variables, so making it the
    distribution (``set_distribution``, ``scope``) raises NotImplementedError.

    Args:
        layout_map: a LayoutMap (required).
        batch_dim_name: the mesh axis of the batch (default the first).
        auto_shard_dataset: see :class:`Distribution`.
    """

    def __init__(self, *, layout_map=None, batch_dim_name=None, auto_shard_dataset=True, **kwargs):
        if kwargs.get("device_mesh") is not None:
            raise ValueError("ModelParallel takes its mesh from layout_map; device_mesh is not an argument.")
        if layout_map is None:
            raise ValueError("ModelParallel needs a layout_map argument (a LayoutMap).")
        if not isinstance(layout_map, LayoutMap):
            raise ValueError(f"ModelParallel expects layout_map to be a LayoutMap, received "
                             f"{type(layout_map).__name__}.")
        mesh = layout_map.device_mesh
        batch_dim_name = batch_dim_name or mesh.axis_names[0]
        if batch_dim_name not in mesh.axis_names:
            raise ValueError(f"ModelParallel: batch_dim_name {batch_dim_name!r} is not an axis of the mesh "
                             f"{mesh.axis_names}.")
        super().__init__(mesh, batch_dim_name, auto_shard_dataset)
        self._layout_map = layout_map

    @property
    def num_model_replicas(self):
        mesh = self.device_mesh
        return int(mesh.shape[mesh.axis_names.index(self.batch_dim_name)])

    def get_data_layout(self, data_shape):
        return TensorLayout([self.batch_dim_name] + [None] * (len(data_shape) - 1), self.device_mesh)

    def get_variable_layout(self, variable):
        layout = self._layout_map[getattr(variable, "path", variable.name)]
        return layout if layout is not None else TensorLayout([None] * len(variable.shape), self.device_mesh)

    def get_tensor_layout(self, path):
        return self._layout_map[path]


def _check_supported(value):
    if isinstance(value, ModelParallel):
        raise NotImplementedError(
            "minikeras does not shard variables across devices (ModelParallel): it replicates the model and splits "
            "the batch. Use DataParallel (or MirroredModel), or keep each model on one device.")


def set_distribution(value):
    """Make ``value`` (a Distribution, or None) the distribution of every
    model's training from now on.

    Raises:
        TypeError: ``value`` is not a Distribution or None.
        NotImplementedError: ``value`` is a ModelParallel.
    """
    if value is not None and not isinstance(value, Distribution):
        raise TypeError(f"set_distribution expects a Distribution or None, received {type(value).__name__}.")
    if value is not None:
        _check_supported(value)
    replica_context.set_active_distribution(value)


def distribution():
    """The distribution in effect (a ``scope()`` of this thread, else the
    one ``set_distribution`` set), or None."""
    return replica_context.active_distribution()


def distribute_tensor(tensor, layout):
    """``tensor`` laid out by ``layout``: data parallelism replicates tensors
    on the device that computes with them, so the tensor comes back as it is
    (its layout checked against its rank)."""
    axes = layout.axes if isinstance(layout, TensorLayout) else None
    if axes is not None and len(axes) != len(getattr(tensor, "shape", ())):
        raise ValueError(f"distribute_tensor: the layout has {len(axes)} axes, the tensor has shape "
                         f"{tuple(tensor.shape)}.")
    return tensor
