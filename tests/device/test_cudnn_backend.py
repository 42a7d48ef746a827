"""cuDNN's backend (graph) API (device/cudnn.py, device/cudnn_graph.py) on
the strict simulated GPU, whose cuDNN double (sim_cupy/libs/cudnn.py) models
the API at the ctypes boundary: plans built once per shape and cached,
one variant pack and one execute per call, the real API's refusals, engines
declining, results against the CPU, op determinism, and CUDA graph capture
under ``jit_compile=True``."""
import ctypes
import warnings

import numpy
import pytest

import minikeras as mk
from minikeras.device import cudnn, cudnn_graph, determinism
from minikeras.testing.sim_cupy.libs import cudnn as sim

SPEC = cudnn.Spec((2, 6, 6, 4, 8, (3, 3), (1, 1), (1, 1), (1, 1), (6, 6)))


@pytest.fixture(autouse=True)
def _tf32_switch_alone(monkeypatch):
    """Without NVIDIA's override the suite sets for its worker processes (tests/conftest.py)."""
    monkeypatch.delenv("NVIDIA_TF32_OVERRIDE", raising=False)


@pytest.fixture
def convolutions(simulated_gpu, monkeypatch):
    monkeypatch.setenv("MINIKERAS_CUDNN", "1")
    monkeypatch.setattr(sim, "declines", set())
    sim.counts.clear()
    convolutions = simulated_gpu.convolutions()
    with simulated_gpu.activate():
        convolutions.plans(simulated_gpu.xp).clear()  # another test's engines may have declined
    return convolutions


@pytest.fixture
def deterministic():
    determinism._set_for_tests(True)
    yield
    determinism._set_for_tests(False)


def _upload(gpu, *arrays):
    with gpu.activate():
        return [gpu.xp.asarray(numpy.ascontiguousarray(a, dtype=numpy.float32)) for a in arrays]


def _reference_forward(x, kernel):  # x (N, H, W, C), kernel (K, 3, 3, C), "same" padding
    padded = numpy.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    windows = numpy.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))
    return numpy.einsum("nhwcij,kijc->nhwk", windows.astype(numpy.float64), kernel)


# ---------------------------------------------------------------- plans

def test_a_plan_is_finalized_once_per_shape_and_never_per_call(simulated_gpu, convolutions, rng):
    x, kernel = rng.standard_normal((2, 6, 6, 4)), rng.standard_normal((8, 3, 3, 4))
    images, weights = _upload(simulated_gpu, x, kernel)
    with simulated_gpu.activate():
        assert convolutions.usable(simulated_gpu.xp, SPEC)
        built = sim.counts[f"finalize {sim.EXECUTION_PLAN}"]
        assert built == 2  # forward and backward data
        created = sim.counts["cudnnBackendCreateDescriptor"]
        outs = [simulated_gpu.to_host(convolutions.forward(simulated_gpu.xp, images, weights, SPEC)) for _ in range(3)]
    assert sim.counts[f"finalize {sim.EXECUTION_PLAN}"] == built  # cache hits: no plan, graph or heuristic again
    assert sim.counts[f"finalize {sim.OPERATION_GRAPH}"] == 2
    assert sim.counts["cudnnBackendCreateDescriptor"] - created == 3  # one variant pack per call
    assert sim.counts[f"finalize {sim.VARIANT_PACK}"] == 3 and sim.counts["cudnnBackendExecute"] == 3
    for out in outs:
        numpy.testing.assert_allclose(out, _reference_forward(x, kernel), rtol=1e-5, atol=1e-5)


def test_the_plan_cache_is_a_bounded_lru_that_destroys_what_it_drops(simulated_gpu, convolutions, monkeypatch):
    monkeypatch.setattr(cudnn, "PLAN_CACHE_SIZE", 3)
    specs = [cudnn.Spec((batch,) + SPEC[1:]) for batch in (1, 2, 3)]
    with simulated_gpu.activate():
        xp = simulated_gpu.xp
        convolutions.plans(xp).clear()
        live = len(sim._objects)
        for spec in specs:
            assert convolutions.usable(xp, spec)  # two plans each
        plans = convolutions.plans(xp)
        assert len(plans) == 3 and [key[0] for key in plans] == [specs[1], specs[2], specs[2]]
    assert len(sim._objects) < live + 6 * 12  # the dropped plans' descriptors were destroyed


def test_an_engine_that_declines_gives_way_to_the_next_and_all_declining_is_im2col(simulated_gpu, convolutions):
    sim.declines.add((sim.FORWARD, 1))  # the FMA engine, the one chosen with TF32 off
    with simulated_gpu.activate():
        assert not convolutions.usable(simulated_gpu.xp, SPEC)  # tensor cores and float16 are not allowed
        mk.config.experimental.enable_tensor_float_32_execution(True)
        try:
            assert convolutions.usable(simulated_gpu.xp, SPEC)  # the tensor-core engine takes it
            plan = convolutions.plans(simulated_gpu.xp)[(SPEC, "forward", True, False)]
            assert cudnn_graph.NOTE_TENSOR_CORE in plan.notes
        finally:
            mk.config.experimental.enable_tensor_float_32_execution(False)


def test_the_filter_gradient_engine_follows_determinism(simulated_gpu, convolutions, rng):
    x, grad = rng.standard_normal((2, 6, 6, 4)), rng.standard_normal((2, 6, 6, 8))
    images, grads = _upload(simulated_gpu, x, grad)
    padded = numpy.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    windows = numpy.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))
    want = numpy.einsum("nhwcij,nhwk->kijc", windows, grad)
    with simulated_gpu.activate():
        assert convolutions.filter_gradient_usable(simulated_gpu.xp, SPEC)  # the atomic engine, by default
        runs = [simulated_gpu.to_host(convolutions.backward_filter(simulated_gpu.xp, images, grads, SPEC))
                for _ in range(4)]
        determinism._set_for_tests(True)
        try:
            assert not convolutions.filter_gradient_usable(simulated_gpu.xp, SPEC)  # im2col then
        finally:
            determinism._set_for_tests(False)
    for run in runs:
        numpy.testing.assert_allclose(run, want, rtol=1e-4, atol=1e-4)
    assert any(not numpy.array_equal(runs[0], run) for run in runs[1:])  # atomics land in another order


# ---------------------------------------------------------------- refusals

def _descriptor(kind):
    out = ctypes.c_void_p()
    assert sim.cudnnBackendCreateDescriptor(kind, ctypes.byref(out)) == sim.SUCCESS
    return out


def _int64s(*values):
    return (ctypes.c_int64 * len(values))(*values)


def test_the_double_refuses_what_the_backend_api_refuses():
    tensor = _descriptor(sim.TENSOR)
    set_ = sim.cudnnBackendSetAttribute
    assert set_(tensor, 902, sim.INT64, 4, _int64s(2, 4, 6, 6)) == sim.SUCCESS
    assert set_(tensor, 902, sim.DOUBLE, 4, _int64s(2, 4, 6, 6)) == sim.ATTRIBUTE_TYPE
    assert set_(tensor, 906, sim.INT64, 2, _int64s(1, 2)) == sim.BAD_PARAM  # one unique id
    assert set_(tensor, 1000, sim.INT64, 1, _int64s(1)) == sim.BAD_PARAM  # not a tensor's attribute
    with pytest.raises(RuntimeError, match="cuDNN would misread it"):  # int32 where cuDNN reads int64
        set_(tensor, 903, sim.INT64, 4, (ctypes.c_int * 4)(144, 1, 24, 4))
    assert sim.cudnnBackendFinalize(tensor) == sim.BAD_PARAM  # strides, type, id and alignment missing
    for name, kind, values in ((903, sim.INT64, _int64s(144, 1, 24, 4)), (906, sim.INT64, _int64s(1)),
                               (900, sim.INT64, _int64s(16)), (901, sim.DATA_TYPE, (ctypes.c_int * 1)(0))):
        assert set_(tensor, name, kind, 1 if name != 903 else 4, values) == sim.SUCCESS
    assert sim.cudnnBackendFinalize(tensor) == sim.SUCCESS
    assert set_(tensor, 906, sim.INT64, 1, _int64s(5)) == sim.NOT_INITIALIZED  # finalized
    plan = _descriptor(sim.EXECUTION_PLAN)
    count = ctypes.c_int64()
    assert sim.cudnnBackendGetAttribute(plan, 402, sim.INT64, 1, ctypes.byref(count), _int64s(0)) == \
        sim.NOT_FINALIZED
    operation = _descriptor(sim.FORWARD)
    assert set_(operation, 704, sim.DESCRIPTOR, 1, (ctypes.c_void_p * 1)(plan.value)) == sim.BAD_PARAM  # not a tensor
    for descriptor in (tensor, plan, operation):
        assert sim.cudnnBackendDestroyDescriptor(descriptor) == sim.SUCCESS


def test_execute_refuses_unfinalized_plans_missing_tensors_and_misaligned_pointers(simulated_gpu, convolutions, rng):
    xp = simulated_gpu.xp
    images, weights = _upload(simulated_gpu, rng.standard_normal((2, 6, 6, 4)), rng.standard_normal((8, 3, 3, 4)))
    with simulated_gpu.activate():
        assert convolutions.usable(xp, SPEC)
        plan = convolutions.plans(xp)[(SPEC, "forward", False, False)]
        handle = convolutions._handle(xp)
        out, workspace = xp.empty((2, 6, 6, 8), numpy.float32), xp.empty(plan.workspace_bytes, numpy.uint8)
        pointers = {"x": images.data.ptr, "w": weights.data.ptr, "y": out.data.ptr}

        def execute(pointers, workspace=workspace.data.ptr, plan=plan):
            statuses = []
            cudnn_graph.execute(sim.library, lambda status, call: statuses.append(status), handle, plan, pointers,
                                workspace)
            return statuses[-1]

        assert execute(pointers) == sim.SUCCESS
        assert execute({"x": pointers["x"], "w": pointers["w"]}) == sim.BAD_PARAM  # y missing
        assert execute(dict(pointers, x=pointers["x"] + 4)) == sim.MISALIGNED_POINTER
        assert execute(pointers, workspace=None) == sim.NULL_POINTER  # the engine asks for a workspace
        unfinalized = cudnn_graph.Plan(_descriptor(sim.EXECUTION_PLAN), 0, (), [])
        assert execute(pointers, plan=unfinalized) == sim.NOT_FINALIZED
        # The library copies a misaligned view rather than hand it to cuDNN.
        flat = xp.asarray(numpy.arange(2 * 6 * 6 * 4 + 1, dtype=numpy.float32))
        view = flat[1:].reshape(2, 6, 6, 4)
        assert view.data.ptr % 16
        got = simulated_gpu.to_host(convolutions.forward(xp, view, weights, SPEC))
    want = _reference_forward(numpy.arange(1, 2 * 6 * 6 * 4 + 1, dtype=numpy.float32).reshape(2, 6, 6, 4),
                              simulated_gpu.to_host(weights))
    numpy.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-3)


# ---------------------------------------------------------------- models

def _conv_run(device_name, jit_compile=False, seed=1):
    mk.utils.set_random_seed(seed)
    data = numpy.random.default_rng(seed)
    x = data.standard_normal((32, 8, 8, 3)).astype("float32")
    y = data.integers(0, 4, size=32)
    with mk.device(device_name):
        model = mk.Sequential([mk.layers.Input((8, 8, 3)), mk.layers.Conv2D(8, 3, padding="same", activation="relu"),
                               mk.layers.Conv2D(8, 3, padding="same"), mk.layers.GlobalAveragePooling2D(),
                               mk.layers.Dense(4)])
        model.compile(mk.optimizers.SGD(0.1), mk.losses.SparseCategoricalCrossentropy(from_logits=True),
                      jit_compile=jit_compile)
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)  # a capture that falls back to eager warns
            model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
        return [w.numpy() for w in model.weights]


def test_conv_training_differs_run_to_run_by_default_and_not_with_determinism(simulated_gpu, convolutions):
    cpu = _conv_run("cpu:0")
    first, second = _conv_run("gpu:0"), _conv_run("gpu:0")
    assert sim.counts["cudnnBackendExecute"] > 0
    assert any(not numpy.array_equal(a, b) for a, b in zip(first, second))  # the atomic filter gradient
    determinism._set_for_tests(True)
    try:
        third, fourth = _conv_run("gpu:0"), _conv_run("gpu:0")
    finally:
        determinism._set_for_tests(False)
    for a, b in zip(third, fourth):
        numpy.testing.assert_array_equal(a, b)
    for run in (first, second, third):
        for got, want in zip(run, cpu):
            numpy.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_jit_compile_captures_cudnns_executes(simulated_gpu, convolutions, deterministic):
    eager = _conv_run("gpu:0")
    executes = sim.counts["cudnnBackendExecute"]
    launches = simulated_gpu.stats.graph_launches
    graphed = _conv_run("gpu:0", jit_compile=True)
    assert simulated_gpu.stats.graph_launches > launches
    # Warm-up and capture call cuDNN; replays re-run the captured executes without calling it.
    assert 0 < sim.counts["cudnnBackendExecute"] - executes < executes
    for a, b in zip(eager, graphed):
        numpy.testing.assert_array_equal(a, b)
