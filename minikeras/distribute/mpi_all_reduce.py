"""MpiAllReduce: sums across processes with mpi4py (optional dependency).

One process per machine (or per device): the replicas of a process are
first summed locally (:func:`default_all_reduce`), then one thread of the
process sums the partial results across processes, and every local replica
takes the global sums. The cross-process sum is one transport interface
with two implementations:

- MPI (always available): the entries are packed into one flat host buffer
  per dtype and summed by ``MPI_Iallreduce`` under the group's timeout
  (:class:`~minikeras.distribute.process_group.ProcessGroup`);
- NCCL (GPU replicas, CuPy with NCCL, ``nccl=True`` or ``"auto"``): the same
  flat buffers stay on the GPU and go through ``ncclAllReduce`` over one
  communicator spanning the processes, its unique id broadcast over MPI
  (:mod:`~minikeras.distribute.nccl_process_all_reduce`). Untested on
  hardware in this repository (no multi-GPU machine in CI).

Entries may differ between processes only by being None (a process whose
replicas had no samples): the processes first compare a checksum of their
entries' shapes and dtypes (one tiny collective), and only when those differ
exchange the full descriptions. Numbers (Python or NumPy scalars) are
gathered one per process and added in process order, so every process gets
the same bits.

Example (run with ``mpiexec -n 2 python train.py``)::

    from minikeras.distribute import MultiWorkerMirroredModel
    trainer = MultiWorkerMirroredModel(model)       # builds its MpiAllReduce
"""
import threading
import zlib

import numpy

from minikeras import backend
from minikeras.device import registry
from minikeras.distribute.all_reduce import AllReduce, ReplicaAborted, default_all_reduce
from minikeras.distribute.process_group import DEFAULT_TIMEOUT, ProcessGroup

_NONE, _INT, _FLOAT, _ARRAY = 0, 1, 2, 3
_DTYPES = {numpy.dtype(code).num: numpy.dtype(code) for code in "?bhilqBHILQefdFD"}


class MpiAllReduce(AllReduce):
    """All-reduce across the processes of an MPI communicator.

    Args:
        devices: this process's replicas' logical devices (names or Devices).
        comm: an mpi4py communicator (``MPI.COMM_WORLD`` by default).
        timeout: seconds a collective may wait for the other processes
            (:class:`~minikeras.distribute.WorkerTimeoutError` after).
        nccl: ``"auto"`` (NCCL when every local replica is a GPU and NCCL is
            available), True (require it) or False (MPI on host buffers).
        group: a ready :class:`ProcessGroup` (then comm/timeout are unused).
        fixed_entries: calls with a ``tag`` always pass the same entries
            (one optimizer's gradients): the processes agree on their layout
            once, in the first call with that tag, and the results are valid
            until the next call with it. False: agree every call (entries
            that change, e.g. BatchNormalization statistics per layer).

    Raises:
        ImportError: mpi4py is not installed and no ``comm`` was given.
    """

    def __init__(self, devices, comm=None, timeout=DEFAULT_TIMEOUT, nccl="auto", group=None, fixed_entries=True):
        if nccl not in ("auto", True, False):
            raise ValueError(f"MpiAllReduce: nccl must be 'auto', True or False, received {nccl!r}.")
        devices = [registry.get_device(device) for device in devices]
        super().__init__(devices)
        self.group = group if group is not None else ProcessGroup(comm, timeout)
        self.comm = self.group.comm
        self.process_count = self.group.size
        self.process_index = self.group.rank
        self._local = default_all_reduce(devices)
        self._layouts = {}
        self._tagged = {}  # tag -> (agreed layout, flat buffers)
        self._fixed_entries = bool(fixed_entries)
        self._call_tag = None
        self._partial = None
        self._global = None
        self._exchanged = threading.Barrier(self.size, action=self._exchange)
        self._nccl_choice = nccl
        self._nccl = None
        self._decided = False  # NCCL or MPI: agreed by the processes in the first call

    @property
    def transport(self):
        """``"nccl"`` or ``"mpi"``: how arrays cross processes (decided by
        the first call; ``"mpi"`` before it)."""
        return "mpi" if self._nccl is None else "nccl"

    def all_reduce(self, rank, arrays, tag=None):
        """See :meth:`AllReduce.all_reduce`."""
        partial = self._local.all_reduce(rank, arrays)
        if rank == 0:
            self._partial = list(partial)
            self._call_tag = tag if self._fixed_entries else None
        if self.size == 1:  # no other replica to wait for
            self._exchange()
        else:
            try:
                self._exchanged.wait()
            except threading.BrokenBarrierError:
                raise ReplicaAborted("another replica failed during this step; the step was abandoned") from None
        device = self.devices[rank]
        if device.host_kernels and self._nccl is None:
            # The MPI sums are host arrays already: asarray would return
            # each one unchanged (and costs a call per entry every step).
            return list(self._global)
        return [device.asarray(value) if backend.is_array(value) else value for value in self._global]

    def _exchange(self):
        """One thread per process: the global sums of the local sums."""
        partial, self._partial = self._partial, None
        if not self._decided:
            from minikeras.distribute import nccl_process_all_reduce

            self._nccl = nccl_process_all_reduce.make(self.devices[0], self.group, self._nccl_choice)
            self._decided = True
        if self._nccl is not None:
            self._global = self._nccl.sum(partial, self.layout(partial))
        else:
            self._global = self.sum_across_processes(partial, tag=self._call_tag)

    def sum_across_processes(self, values, what="all-reduce", tag=None):
        """Sum host values over the processes (not the local replicas).

        Args:
            values: a list of NumPy arrays, numbers or None; the same
                shapes and dtypes on every process where not None.
            what: names the operation in errors.
            tag: a name for calls that always pass the same entries (the
                gradients): the first such call agrees on the layout, later
                ones reuse it and its buffers without asking the others
                again, so their results are valid until the next call with
                the same tag.

        Returns:
            The list of sums (None where every process passed None).
        """
        cached = self._tagged.get(tag) if tag is not None else None
        if cached is not None and cached[0].plain:
            totals = self._sum_plain(values, cached, what)
            if totals is not None:
                return totals
        values = [registry.to_host(value) if backend.is_array(value) else value for value in values]
        if cached is None:
            layout = self.layout(values, what)
            buffers = {dtype: numpy.empty(size, dtype) for dtype, size in layout.sizes.items()}
            if tag is not None:
                self._tagged[tag] = layout, buffers, layout.views(buffers)
        else:
            layout, buffers, _ = cached
            layout.check(values, what)
        totals = [None] * len(values)
        if layout.numbers:
            rows = self.group.gather_rows([0.0 if values[i] is None else values[i] for i, _ in layout.numbers],
                                          what=what)
            for column, (index, kind) in enumerate(layout.numbers):
                total = 0.0
                for process in range(rows.shape[0]):  # process order: the same bits everywhere
                    total = total + rows[process, column]
                totals[index] = int(total) if kind == _INT else float(total)
        for dtype, members in layout.groups.items():
            flat = buffers[dtype]
            offset = 0
            for index, shape, size in members:
                if values[index] is None:
                    flat[offset:offset + size] = 0
                else:
                    flat[offset:offset + size] = values[index].reshape(-1)
                offset += size
            self.group.sum_in_place(flat, what)
            offset = 0
            for index, shape, size in members:
                totals[index] = flat[offset:offset + size].reshape(shape)
                offset += size
        return totals

    def _sum_plain(self, values, cached, what):
        """The common tagged call (gradients): host arrays of one dtype,
        every entry present and as agreed. One pass checks them, one C
        call packs them, the results are the buffer's views made with it. None when the call is not that plain (the general
        path then checks, converts or raises)."""
        layout, buffers, views = cached
        if len(values) != layout.count:
            return None
        for value, (dtype, shape) in zip(values, layout.expected_list):
            if type(value) is not numpy.ndarray or value.shape != shape or value.dtype != dtype:
                return None
        flat = buffers[layout.plain]
        numpy.concatenate(values, axis=None, out=flat)  # flattens each entry, in entry order
        self.group.sum_in_place(flat, what)
        return list(views)

    def layout(self, values, what="all-reduce"):
        """The entries' agreed kinds, shapes and dtypes (see the module docstring)."""
        codes = _describe(values)
        key = codes.tobytes()
        header = self.group.gather_rows([codes.size, zlib.crc32(key)], what=what)
        if (header == header[0]).all():
            layout = self._layouts.get(key)
            if layout is None:
                layout = self._layouts[key] = _Layout([_decode(codes)])
            return layout
        width = int(header[:, 0].max())
        padded = numpy.full(width, -1, dtype=numpy.int64)
        padded[:codes.size] = codes
        rows = self.group.gather_rows(padded, dtype=numpy.int64, what=what)
        return _Layout([_decode(row[row >= 0] if row.size else row) for row in rows])

    def abort(self):
        """See :meth:`AllReduce.abort` (this process's replicas only)."""
        self._local.abort()
        self._exchanged.abort()

    def reset(self):
        """See :meth:`AllReduce.reset`."""
        self._local.reset()
        self._exchanged.reset()

    def close(self):
        """Close the local transport (and NCCL's communicator)."""
        self._local.close()
        if self._nccl is not None:
            self._nccl.close()


def _describe(values):
    """An int64 vector: per entry its kind, then for arrays dtype, ndim, dims."""
    codes = []
    for value in values:
        if value is None:
            codes.append(_NONE)
        elif isinstance(value, numpy.ndarray) or backend.is_array(value):
            codes += [_ARRAY, numpy.dtype(value.dtype).num, value.ndim, *value.shape]
        elif isinstance(value, (bool, int, numpy.integer)):
            codes.append(_INT)
        else:
            codes.append(_FLOAT)
    return numpy.array(codes, dtype=numpy.int64)


def _decode(codes):
    entries, position = [], 0
    codes = [int(code) for code in codes]
    while position < len(codes):
        kind = codes[position]
        if kind == _ARRAY:
            ndim = codes[position + 2]
            dtype = _DTYPES[codes[position + 1]]
            entries.append((kind, dtype, tuple(codes[position + 3:position + 3 + ndim])))
            position += 3 + ndim
        else:
            entries.append((kind, None, None))
            position += 1
    return entries


class _Layout:
    """Merged entry descriptions: which entries are numbers, and the arrays
    grouped by dtype (entry index, shape, size) in entry order."""

    def __init__(self, described):
        counts = {len(entries) for entries in described}
        if len(counts) != 1:
            raise ValueError(f"all_reduce across processes: the workers passed different numbers of entries: "
                             f"{[len(entries) for entries in described]}.")
        self.numbers, self.groups, self.sizes = [], {}, {}
        for index, options in enumerate(zip(*described)):
            present = [entry for entry in options if entry[0] != _NONE]
            if not present:
                continue
            kinds = {entry[0] for entry in present}
            if _ARRAY in kinds and len(kinds) > 1:
                raise ValueError(f"all_reduce across processes: entry {index} is an array on some workers "
                                 "and a number on others.")
            if _ARRAY not in kinds:
                self.numbers.append((index, _INT if kinds == {_INT} else _FLOAT))
                continue
            shapes = {(entry[1], entry[2]) for entry in present}
            if len(shapes) != 1:
                raise ValueError(f"all_reduce across processes: entry {index} differs between workers: "
                                 f"{sorted((str(d), s) for d, s in shapes)} (dtype, shape).")
            dtype, shape = shapes.pop()
            size = int(numpy.prod(shape, dtype=numpy.int64))
            self.groups.setdefault(dtype, []).append((index, shape, size))
            self.sizes[dtype] = self.sizes.get(dtype, 0) + size
        self.count = len(described[0])
        self._expected = {index: (dtype, shape) for dtype, members in self.groups.items()
                          for index, shape, _ in members}
        # ``plain``: the dtype when every entry is an array of that one
        # dtype (the gradients), which :meth:`MpiAllReduce._sum_plain` packs
        # in one call; None otherwise.
        self.plain = None
        if not self.numbers and len(self.groups) == 1 and len(self._expected) == self.count:
            self.plain = next(iter(self.groups))
            self.expected_list = [self._expected[index] for index in range(self.count)]

    def views(self, buffers):
        """Per entry, its place in ``buffers`` as an array of its shape
        (None for numbers and entries no process has)."""
        views = [None] * self.count
        for dtype, members in self.groups.items():
            offset = 0
            for index, shape, size in members:
                views[index] = buffers[dtype][offset:offset + size].reshape(shape)
                offset += size
        return views

    def check(self, values, what):
        """Raise unless ``values`` fit this layout (a reused, tagged one)."""
        problem = None
        if len(values) != self.count:
            problem = f"{len(values)} entries instead of {self.count}"
        else:
            for index, value in enumerate(values):
                if value is None:
                    continue
                expected = self._expected.get(index)
                if expected is None and isinstance(value, numpy.ndarray):
                    problem = f"entry {index} is an array where the first call had a number or None"
                elif expected is not None and (not isinstance(value, numpy.ndarray)
                                               or (value.dtype, value.shape) != expected):
                    got = (value.dtype, value.shape) if isinstance(value, numpy.ndarray) else type(value).__name__
                    problem = f"entry {index} is {got} where the first call had {expected}"
                if problem:
                    break
        if problem:
            raise ValueError(f"{what} across processes: {problem}; calls with a tag must pass the same entries "
                             "every time.")
