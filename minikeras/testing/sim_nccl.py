"""A stand-in for ``cupy.cuda.nccl`` with CuPy 14.2's exact API.

Facts modelled, each from CuPy 14.2's source
(``cupy_backends/cuda/libs/nccl.pyx`` and ``nccl.pxd``, tag v14.2.0):

- ``get_unique_id()`` returns ``bytes`` of length ``NCCL_UNIQUE_ID_BYTES``
  (128); before 14.0 it returned a tuple of ints (docs/source/upgrade.rst,
  "Change in cupy.cuda.nccl.get_unique_id Return Type").
- ``NcclCommunicator(int ndev, bytes commId, int rank, NcclConfig config=None)``:
  a typed Cython signature, so a tuple for ``commId`` is a TypeError and a
  wrong length a ValueError ("commId length N != 128.").
- ``NcclCommunicator.initAll(devices)`` takes an int or a list of ints.
- ``allReduce(intptr_t sendbuf, intptr_t recvbuf, size_t count, int datatype,
  int op, intptr_t stream)``: device pointers and a stream pointer as ints.
- The constants of ``nccl.pxd``'s ``cpdef enum``.

The collective itself: communicators made from the same unique id (or by
one ``initAll``) form a clique; ``allReduce`` waits until every rank of the
clique called it (as NCCL does, but with a timeout instead of a hang), then
writes the reduction into each rank's ``recvbuf``. Device pointers are
resolved to host memory by the ``resolve`` function given to
:class:`SimNccl` (the simulated GPU's arrays live in host memory).
"""
import os
import threading

import numpy

NCCL_UNIQUE_ID_BYTES = 128

NCCL_SUM, NCCL_PROD, NCCL_MAX, NCCL_MIN, NCCL_AVG = 0, 1, 2, 3, 4
NCCL_INT8 = NCCL_CHAR = 0
NCCL_UINT8 = 1
NCCL_INT32 = NCCL_INT = 2
NCCL_UINT32 = 3
NCCL_INT64 = 4
NCCL_UINT64 = 5
NCCL_FLOAT16 = NCCL_HALF = 6
NCCL_FLOAT32 = NCCL_FLOAT = 7
NCCL_FLOAT64 = NCCL_DOUBLE = 8
NCCL_BFLOAT16 = 9

_DTYPES = {NCCL_INT8: "int8", NCCL_UINT8: "uint8", NCCL_INT32: "int32", NCCL_UINT32: "uint32",
           NCCL_INT64: "int64", NCCL_UINT64: "uint64", NCCL_FLOAT16: "float16", NCCL_FLOAT32: "float32",
           NCCL_FLOAT64: "float64"}
_REDUCE = {NCCL_SUM: numpy.add, NCCL_PROD: numpy.multiply, NCCL_MAX: numpy.maximum, NCCL_MIN: numpy.minimum}

#: The public names and signatures this fake offers, as CuPy 14.2 declares
#: them (checked against the installed CuPy by tests/backend/test_cupy_api.py).
SIGNATURES = {
    "get_unique_id": "()",
    "NcclCommunicator": "(int ndev, bytes commId, int rank, NcclConfig config=None)",
    "NcclCommunicator.initAll": "(devices)",
    "NcclCommunicator.allReduce":
        "(self, intptr_t sendbuf, intptr_t recvbuf, size_t count, int datatype, int op, intptr_t stream)",
    "NcclCommunicator.destroy": "(self)",
    "NcclCommunicator.abort": "(self)",
}


class NcclError(RuntimeError):
    """``cupy.cuda.nccl.NcclError`` (a RuntimeError carrying ``status``)."""

    def __init__(self, status, message):
        self.status = status
        super().__init__(message)


class _Clique:
    """The ranks of one communicator and their rendezvous."""

    def __init__(self, size, timeout):
        self.size = size
        self.timeout = timeout
        self.lock = threading.Lock()
        self.members = {}
        self.calls = {}
        self.barrier = threading.Barrier(size)


class SimNccl:
    """A module-like object standing in for ``cupy.cuda.nccl``.

    Args:
        resolve: ``resolve(pointer, count, dtype) -> numpy view`` of the
            device memory at ``pointer`` (raises for an unknown pointer).
        timeout: seconds a collective waits for the other ranks before it
            raises (real NCCL would wait forever).
    """

    available = True
    NcclError = NcclError

    def __init__(self, resolve, timeout=30.0):
        self._resolve = resolve
        self._timeout = timeout
        self._cliques = {}
        self._lock = threading.Lock()
        self.calls = []  # ("allReduce", rank, count, datatype, op, stream) for tests
        for name, value in globals().items():
            if name.startswith("NCCL_") and name != "NCCL_UNIQUE_ID_BYTES":  # a C enum, not exported
                setattr(self, name, value)
        self.NcclCommunicator = _communicator_class(self)

    def get_unique_id(self):
        """128 random bytes (CuPy 14: ``bytes``, no longer a tuple)."""
        return os.urandom(NCCL_UNIQUE_ID_BYTES)

    def _clique(self, key, size):
        with self._lock:
            clique = self._cliques.get(key)
            if clique is None:
                clique = self._cliques[key] = _Clique(size, self._timeout)
            elif clique.size != size:
                raise NcclError(4, f"NCCL_ERROR_INVALID_ARGUMENT: ndev {size} != {clique.size} of the clique")
            return clique


def _check_int(value, name):
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"an integer is required (argument {name!r}, got {type(value).__name__})")
    return int(value)


def _communicator_class(nccl):
    class NcclCommunicator:
        """``cupy.cuda.nccl.NcclCommunicator`` (module docstring)."""

        def __init__(self, ndev, commId, rank, config=None):
            ndev, rank = _check_int(ndev, "ndev"), _check_int(rank, "rank")
            if not isinstance(commId, bytes):
                # Cython's message for a typed ``bytes commId`` argument.
                raise TypeError(f"Argument 'commId' has incorrect type (expected bytes, got {type(commId).__name__})")
            if len(commId) != NCCL_UNIQUE_ID_BYTES:
                raise ValueError(f"commId length {len(commId)} != {NCCL_UNIQUE_ID_BYTES}.")
            if not 0 <= rank < ndev:
                raise NcclError(4, f"NCCL_ERROR_INVALID_ARGUMENT: rank {rank} not in [0, {ndev})")
            self._join(nccl._clique(commId, ndev), rank)

        def _join(self, clique, rank):
            with clique.lock:
                if rank in clique.members:
                    raise NcclError(4, f"NCCL_ERROR_INVALID_ARGUMENT: rank {rank} joined twice")
                clique.members[rank] = self
            self._clique, self._rank, self._alive = clique, rank, True

        @staticmethod
        def initAll(devices):
            if isinstance(devices, list):
                devlist = devices
            elif isinstance(devices, int):
                devlist = list(range(devices))
            else:
                raise ValueError("\"devices\" should be an int or a list of int.")
            clique = nccl._clique(("initAll", id(devlist), os.urandom(8)), len(devlist))
            comms = []
            for rank in range(len(devlist)):
                comm = NcclCommunicator.__new__(NcclCommunicator)
                comm._join(clique, rank)
                comms.append(comm)
            return comms

        def rank_id(self):
            return self._rank

        def size(self):
            return self._clique.size

        def allReduce(self, sendbuf, recvbuf, count, datatype, op, stream):
            for value, name in ((sendbuf, "sendbuf"), (recvbuf, "recvbuf"), (count, "count"),
                                (datatype, "datatype"), (op, "op"), (stream, "stream")):
                _check_int(value, name)
            if not self._alive:
                raise NcclError(4, "NCCL_ERROR_INVALID_ARGUMENT: the communicator was destroyed")
            if datatype not in _DTYPES or op not in _REDUCE:
                raise NcclError(4, f"NCCL_ERROR_INVALID_ARGUMENT: datatype {datatype} / op {op}")
            nccl.calls.append(("allReduce", self._rank, count, datatype, op, stream))
            clique, dtype = self._clique, _DTYPES[datatype]
            clique.calls[self._rank] = nccl._resolve(sendbuf, count, dtype).copy()
            try:
                clique.barrier.wait(clique.timeout)
                parts = [clique.calls[rank] for rank in range(clique.size)]
                clique.barrier.wait(clique.timeout)  # everyone read the inputs
            except threading.BrokenBarrierError:
                raise NcclError(6, "NCCL_ERROR_REMOTE_ERROR: a rank did not join the collective") from None
            total = parts[0].copy()
            for part in parts[1:]:
                _REDUCE[op](total, part, out=total)
            nccl._resolve(recvbuf, count, dtype)[...] = total

        def destroy(self):
            self._alive = False

        def abort(self):
            self._alive = False

    return NcclCommunicator

