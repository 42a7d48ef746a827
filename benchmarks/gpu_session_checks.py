"""The GPU session's single-process checks (run by benchmarks/gpu_session.py).

Each check exercises, on the real GPU, one thing the test suite can only
fake, and prints one JSON line ``{"check": name, "ok": bool, ...}``:

* ``env``: CuPy's version, the device, NCCL's availability, the GPU probe;
* ``pools``: rebuilding the devices gives the up-front reserve back to the
  driver; the user's limit fires with the reserve cached, with the exact
  message; the reserve is not in current/peak; ``config.release_memory``;
* ``ownership``: two logical GPUs on one GPU own their arrays exactly and
  cross-device reads are copies; deepcopy of a model with a seeded
  generator; scatter_add in dtypes CuPy's add.at refuses;
* ``nccl``: CuPy 14's bytes unique id, a one-rank communicator's
  allReduce, and minikeras's NCCL transport set up over a one-rank group;
* ``mirrored``: MirroredModel on two logical GPUs of one GPU matches one
  device's training.

``--simulated`` runs them on the simulated CuPy (minikeras.testing.sim_cupy,
the dry run): the pool check, which measures a real driver, says so, and the
NCCL check uses minikeras/testing/sim_nccl.py.

    python benchmarks/gpu_session_checks.py pools [--simulated]
"""
import argparse
import copy
import gc
import json
import os
import sys
import time
import traceback

import numpy

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import minikeras as mk  # noqa: E402
from minikeras import config, layers  # noqa: E402
from minikeras.device import registry  # noqa: E402
from minikeras.errors import ResourceExhaustedError  # noqa: E402


def _fresh(split=None, grow=None):
    """New logical devices: ``split`` logical GPUs (MB each) on gpu 0."""
    registry._reset_for_tests()
    gpu = config.list_physical_devices("GPU")[0]
    if grow is not None:
        config.set_memory_growth(gpu, grow)
    if split:
        config.set_logical_device_configuration(gpu, [config.LogicalDeviceConfiguration(mb) for mb in split])
    return config.list_logical_devices("GPU")


def check_env(simulated):
    result = {"simulated": simulated}
    from minikeras.backend import gpu_probe

    if not simulated:
        cupy, reason = gpu_probe.probe()
        result["probe"] = reason or "ok"
        if cupy is None:
            result["ok"] = False
            return result
        from cupy.cuda import nccl

        result.update(cupy=cupy.__version__, nccl_available=bool(getattr(nccl, "available", False)),
                      device=cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                      devices=cupy.cuda.runtime.getDeviceCount(),
                      cache_dir=os.environ.get("CUPY_CACHE_DIR", "~/.cupy/kernel_cache"))
    result["gpus"] = [d.name for d in _fresh()]
    result["ok"] = bool(result["gpus"])
    return result


def check_pools(simulated):
    if simulated:
        return {"ok": True, "skipped": "measures a real driver's memory (tests/device/test_gpu_pools.py runs the same "
                                       "checks on the simulated CuPy's pool)"}
    import cupy

    result = {}
    registry._reset_for_tests()
    # The reserve makes this thread's cuBLAS handle first (registry._reserve):
    # make it now, so its ~70 MB (seen on an H200) are not counted as lost.
    cupy.cuda.device.get_cublas_handle()
    free_before = cupy.cuda.runtime.memGetInfo()[0]
    for _ in range(3):
        (device,) = _fresh()
        result.setdefault("reserved_bytes", device.pool.total_bytes())
        del device
    registry._reset_for_tests()
    free_after = cupy.cuda.runtime.memGetInfo()[0]
    result["driver_free_lost_bytes"] = free_before - free_after
    result["reserve_returned"] = free_before - free_after < 64 << 20

    (device,) = _fresh(split=[1024])
    result["info_after_reserve"] = config.get_memory_info(device)
    result["reserve_not_counted"] = config.get_memory_info(device)["peak"] < 1 << 20
    with mk.device(device):
        kept = mk.ops.ones((250,))  # 1000 bytes: one 1024-byte block
    config.set_memory_limit(device, 1 << 20)
    try:
        with device.activate():
            cupy.empty(2 << 20, dtype=cupy.uint8)
        result["limit_fires"], result["limit_message"] = False, None
    except ResourceExhaustedError as error:
        result["limit_fires"], result["limit_message"] = True, str(error)
    config.set_memory_limit(device, None)
    # The reserve is one CuPy chunk: while any array lives in it (kept),
    # free_all_blocks can give none of it back (seen on an H200: 0 bytes).
    cached = device.pool.total_bytes()
    config.release_memory(device)
    result["released_while_an_array_lives_bytes"] = cached - device.pool.total_bytes()
    del kept
    config.release_memory(device)
    result["released_bytes"] = cached - device.pool.total_bytes()
    registry._reset_for_tests()
    result["ok"] = all(result[k] for k in ("reserve_returned", "reserve_not_counted", "limit_fires")) and \
        result["released_bytes"] > 0
    return result


def check_ownership(simulated):
    result = {}
    first, second = _fresh(split=[1024, 1024])
    with mk.device(second):
        x = mk.ops.arange(4.0) * 2.0
    result["owner_exact"] = registry.owner_of(x.data) is second
    copied = first.asarray(x.data)
    result["cross_device_copy"] = copied is not x.data and registry.owner_of(copied) is first
    result["values"] = registry.to_host(copied).tolist() == [0.0, 2.0, 4.0, 6.0]
    with mk.device(first):
        model = mk.Sequential([layers.Input((4,)), layers.Dropout(0.5, seed=3), layers.Dense(2)])
        inputs = mk.tensor(numpy.ones((8, 4), "float32"))
        model(inputs, training=True)
        clone = copy.deepcopy(model)
        result["deepcopy_same_draws"] = numpy.array_equal(clone(inputs, training=True).numpy(),
                                                          model(inputs, training=True).numpy())
    for dtype in ("int8", "bool", "complex64", "float32"):
        with first.activate():
            target = first.asarray(numpy.zeros(3, dtype))
            first.scatter_add(target, first.asarray(numpy.array([0, 0, 2])), first.asarray(numpy.ones(3, dtype)))
        expected = numpy.zeros(3, dtype)
        numpy.add.at(expected, [0, 0, 2], numpy.ones(3, dtype))
        result[f"scatter_add_{dtype}"] = numpy.array_equal(first.to_host(target), expected)
    result["ok"] = all(value for value in result.values())
    return result


class _OneRankGroup:
    rank, size = 0, 1

    def broadcast_bytes(self, data, root=0, what=""):
        return data

    def gather_rows(self, values, what=""):
        return numpy.array([list(values)], dtype=numpy.float64)

    def barrier(self, what=""):
        pass


def check_nccl(simulated):
    from minikeras.distribute import nccl_process_all_reduce

    result = {}
    (device,) = _fresh()
    if simulated:
        from minikeras.testing.sim_cupy.simulation import host_view
        from minikeras.testing.sim_nccl import SimNccl

        nccl = SimNccl(host_view)
    else:
        from cupy.cuda import nccl

        if not nccl.available:
            return {"ok": False, "error": "cupy.cuda.nccl is not available (libnccl missing?)"}
    uid = nccl.get_unique_id()
    result["unique_id"] = f"{type(uid).__name__} of {len(uid)}"
    with device.activate():
        array = device.asarray(numpy.arange(6, dtype="float32"))
        comm = nccl.NcclCommunicator(1, uid, 0)
        comm.allReduce(array.data.ptr, array.data.ptr, 6, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, device.stream.ptr)
        device.synchronize()
        comm.destroy()
    result["one_rank_all_reduce"] = device.to_host(array).tolist() == list(range(6))
    transport = nccl_process_all_reduce.NcclAcrossProcesses(device, _OneRankGroup(), nccl)

    class Layout:
        numbers = [(1, "number")]
        groups = {numpy.dtype("float32"): [(0, (2, 3), 6)]}
        sizes = {numpy.dtype("float32"): 6}

    with device.activate():
        matrix = array.reshape(2, 3)
    totals = transport.sum([matrix, 5.0], Layout)
    transport.close()
    result["minikeras_transport"] = device.to_host(totals[0]).reshape(-1).tolist() == list(range(6)) and \
        totals[1] == 5.0
    result["ok"] = isinstance(uid, bytes) and len(uid) == 128 and result["one_rank_all_reduce"] and \
        result["minikeras_transport"]
    return result


def check_mirrored(simulated):
    from tests.distribute.helpers import dense_model

    rng = numpy.random.default_rng(0)
    x, y = rng.normal(size=(256, 8)).astype("float32"), rng.normal(size=(256, 3)).astype("float32")
    # The reference grows on demand: its reserve cannot outlive it, whatever
    # array a library cache still holds (on an H200 the split devices that
    # followed a reserving reference found too little memory for cuBLAS).
    (single_device,) = _fresh(grow=True)
    with mk.device(single_device):
        single = dense_model()
        single.compile(mk.optimizers.SGD(0.05), "mse")
        single.fit(x, y, batch_size=32, epochs=1, shuffle=False, verbose=0)
        expected = single.get_weights()
    # The single device's weights would pin its reserve (one CuPy chunk)
    # through the registry's rebuild: free them first, as a user's process,
    # which configures its devices once, never needs to.
    del single
    free_bytes = None
    if not simulated:
        import cupy

        free_bytes = cupy.cuda.runtime.memGetInfo()[0]
    devices = _fresh(split=[2048, 2048])
    with mk.device(devices[0]):
        model = dense_model()
    mirrored = mk.MirroredModel(model, devices=devices)
    mirrored.compile(mk.optimizers.SGD(0.05), "mse")
    start = time.perf_counter()
    try:
        mirrored.fit(x, y, batch_size=32, epochs=1, shuffle=False, verbose=0)
    except Exception as error:
        raise RuntimeError(f"{type(error).__name__}: {error} [the driver had {free_bytes} bytes free before the "
                           "two logical GPUs reserved theirs]") from error
    seconds = time.perf_counter() - start
    gap = max(float(numpy.max(numpy.abs(a - b))) for a, b in zip(model.get_weights(), expected))
    return {"ok": gap < 1e-4, "devices": [d.name for d in devices], "max_weight_gap": gap, "driver_free_bytes": free_bytes,
            "seconds_per_step": seconds / 8}


CHECKS = {"env": check_env, "pools": check_pools, "ownership": check_ownership, "nccl": check_nccl,
          "mirrored": check_mirrored}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checks", nargs="+", choices=sorted(CHECKS))
    parser.add_argument("--simulated", action="store_true", help="on the strict simulated GPU (dry run)")
    args = parser.parse_args(argv)
    if args.simulated:
        os.environ["MINIKERAS_SIMULATED_GPU"] = "1"
    failed = 0
    for name in args.checks:
        start = time.perf_counter()
        try:
            result = CHECKS[name](args.simulated)
        except Exception as error:  # a check that breaks is a failed check, and the others still run
            result = {"ok": False, "error": f"{type(error).__name__}: {error}",
                      "traceback": traceback.format_exc(limit=6)}
        result = {"check": name, "seconds": round(time.perf_counter() - start, 2), **result}
        # The devices are rebuilt here, once the check's arrays are gone: an
        # array still alive pins its device's whole up-front reserve (one
        # CuPy chunk), and a rebuild then leaves it to the dropped pool. On an
        # H100 and an H200 the nccl check's ~77 GB reserve, rebuilt while its
        # arrays lived, left the mirrored check's two logical GPUs too little
        # for their replica threads' cuBLAS handles (CUBLAS_STATUS_ALLOC_FAILED).
        gc.collect()
        registry._reset_for_tests()
        print(json.dumps(result, default=str), flush=True)
        failed += not result["ok"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
