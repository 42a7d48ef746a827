"""Tensor cores (issue 33 section 4), on the strict simulated GPU: TF32 as
TensorFlow (``mk.config.experimental``), 16-bit and batched GEMMs through
``cublasGemmEx`` / ``cublasGemmStridedBatchedEx`` (device/cublas_direct.py),
eagerly and in a CUDA graph capture, and the simulated cuBLAS's checks."""
import ctypes

import ml_dtypes
import numpy
import pytest

import minikeras as mk
from minikeras.device import cublas_direct, precision
from minikeras.testing.sim_cupy import _core as sim_core
from minikeras.testing.sim_cupy.libs import cublas as sim_cublas

BF16 = numpy.dtype(ml_dtypes.bfloat16)


@pytest.fixture(autouse=True)
def _tf32_switch_alone(monkeypatch):
    """Without NVIDIA's override the suite sets for its worker processes (tests/conftest.py)."""
    monkeypatch.delenv("NVIDIA_TF32_OVERRIDE", raising=False)


@pytest.fixture
def tf32():
    """TF32 on for the test (the suite runs with it off: tests/conftest.py)."""
    mk.config.experimental.enable_tensor_float_32_execution(True)
    yield
    mk.config.experimental.enable_tensor_float_32_execution(False)


@pytest.fixture
def gemm_calls():
    """The simulated cuBLAS's log of GEMMs, emptied for the test."""
    sim_cublas.calls.clear()
    yield sim_cublas.calls
    sim_cublas.calls.clear()


def _upload(gpu, *arrays):
    with gpu.activate():
        return [gpu.xp.asarray(numpy.ascontiguousarray(array)) for array in arrays]


def _tf32(array):
    return sim_cublas.to_tf32(numpy.asarray(array, numpy.float32))


def _needs_tf32(rng, shape):
    """float32 values with mantissa bits below TF32's (so TF32 changes them)."""
    return (rng.normal(size=shape) * (1 + 2.0 ** -15)).astype(numpy.float32)


# ---------------------------------------------------------------- the switch

def test_the_switch_has_tensorflows_names_default_and_checks():
    assert mk.config.experimental.enable_tensor_float_32_execution is mk.config.enable_tensor_float_32_execution
    try:
        precision._state["tf32"] = True  # a fresh process: TensorFlow's default is on
        assert mk.config.experimental.tensor_float_32_execution_enabled() is True
        mk.config.experimental.enable_tensor_float_32_execution(False)
        assert mk.config.experimental.tensor_float_32_execution_enabled() is False
        with pytest.raises(TypeError, match=r"enable_tensor_float_32_execution expects a bool, received 'yes'"):
            mk.config.experimental.enable_tensor_float_32_execution("yes")
        assert mk.config.experimental.tensor_float_32_execution_enabled() is False
    finally:
        mk.config.experimental.enable_tensor_float_32_execution(False)


def test_the_simulated_gpu_is_a_hopper_so_tf32_applies(simulated_gpu, tf32):
    assert precision.compute_capability(simulated_gpu.xp, simulated_gpu.cuda_id) == 90
    assert precision.tf32_on(simulated_gpu.xp, simulated_gpu.cuda_id)
    mk.config.experimental.enable_tensor_float_32_execution(False)
    assert not precision.tf32_on(simulated_gpu.xp, simulated_gpu.cuda_id)


def test_cupys_own_compute_type_follows_the_switch(simulated_gpu, rng):
    a, b = _needs_tf32(rng, (8, 16)), _needs_tf32(rng, (16, 4))
    x, y = _upload(simulated_gpu, a, b)
    linalg = sim_core._routines_linalg
    for enabled, expected in ((True, _tf32(a) @ _tf32(b)), (False, a @ b)):
        mk.config.experimental.enable_tensor_float_32_execution(enabled)
        with simulated_gpu.activate():
            got = simulated_gpu.to_host(simulated_gpu.matmul(x, y))  # 2-D float32: CuPy's own GEMM
        wanted = linalg.COMPUTE_TYPE_TF32 if enabled else linalg.COMPUTE_TYPE_DEFAULT
        assert sim_core.get_compute_type(numpy.float32) == wanted
        numpy.testing.assert_array_equal(got, expected)
    assert not numpy.array_equal(_tf32(a) @ _tf32(b), a @ b)  # the inputs do tell the two apart


def test_nvidias_override_forbids_tf32_whatever_the_switch_says(simulated_gpu, gemm_calls, rng, tf32, monkeypatch):
    monkeypatch.setenv("NVIDIA_TF32_OVERRIDE", "0")
    a, b = _needs_tf32(rng, (3, 5, 7)), _needs_tf32(rng, (3, 7, 2))
    x, y = _upload(simulated_gpu, a, b)
    with simulated_gpu.activate():
        got = simulated_gpu.to_host(simulated_gpu.matmul(x, y))  # batched: the direct cuBLAS path
    assert mk.config.experimental.tensor_float_32_execution_enabled()
    assert gemm_calls and all(call["compute"] == cublas_direct.COMPUTE_32F for call in gemm_calls)
    numpy.testing.assert_allclose(got, a @ b, rtol=1e-6)


@pytest.mark.parametrize("enabled, compute", [(True, cublas_direct.COMPUTE_32F_FAST_TF32),
                                              (False, cublas_direct.COMPUTE_32F)])
def test_batched_float32_products_take_the_compute_type_of_the_switch(simulated_gpu, gemm_calls, rng, enabled,
                                                                      compute):
    mk.config.experimental.enable_tensor_float_32_execution(enabled)
    try:
        a, b = _needs_tf32(rng, (3, 5, 7)), _needs_tf32(rng, (3, 7, 2))
        x, y = _upload(simulated_gpu, a, b)
        with simulated_gpu.activate():
            got = simulated_gpu.to_host(simulated_gpu.matmul(x, y))
        assert [(c["name"], c["compute"], c["batch"]) for c in gemm_calls] == [
            ("cublasGemmStridedBatchedEx", compute, 3)]
        expected = _tf32(a) @ _tf32(b) if enabled else a @ b
        numpy.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
        assert numpy.abs(got - (a @ b)).max() > 1e-5 if enabled else True
    finally:
        mk.config.experimental.enable_tensor_float_32_execution(False)


def test_captured_float32_products_follow_the_switch(simulated_gpu, gemm_calls, rng, tf32):
    a, b = _needs_tf32(rng, (4, 6)), _needs_tf32(rng, (6, 3))
    x, y = _upload(simulated_gpu, a, b)
    with simulated_gpu.capture() as capture:
        with simulated_gpu.activate():
            out = simulated_gpu.matmul(x, y)
    capture.graph.launch()
    assert gemm_calls[-1]["name"] == "cublasGemmEx" and gemm_calls[-1]["compute"] == 77
    numpy.testing.assert_allclose(simulated_gpu.to_host(out), _tf32(a) @ _tf32(b), rtol=1e-6)
    mk.config.experimental.enable_tensor_float_32_execution(False)
    gemm_calls.clear()
    with simulated_gpu.capture() as capture:
        with simulated_gpu.activate():
            out = simulated_gpu.matmul(x, y)
    capture.graph.launch()
    assert {c["name"] for c in gemm_calls} == {"cublasSgemm_v2"}  # exact float32 keeps the card-checked path
    numpy.testing.assert_allclose(simulated_gpu.to_host(out), a @ b, rtol=1e-6)


# ---------------------------------------------------------------- 16-bit GEMMs

@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shapes", [((5, 7), (7, 3)), ((2, 5, 7), (2, 7, 3)), ((2, 5, 7), (7, 3)),
                                    ((4, 1, 5, 7), (3, 7, 2)), ((7,), (2, 7, 3)), ((2, 5, 7), (7,))],
                         ids=["2d", "batched", "folded", "broadcast", "vector_a", "vector_b"])
def test_16bit_products_run_gemm_ex_with_float32_accumulation(simulated_gpu, gemm_calls, rng, dtype, shapes):
    dtype = numpy.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else numpy.dtype(dtype)
    a, b = (rng.normal(size=shape).astype(dtype) for shape in shapes)
    x, y = _upload(simulated_gpu, a, b)
    with simulated_gpu.activate():
        got = simulated_gpu.to_host(simulated_gpu.matmul(x, y))
    expected = (a.astype(numpy.float32) @ b.astype(numpy.float32)).astype(dtype)  # one rounding, at the end
    assert got.dtype == dtype and got.shape == expected.shape
    numpy.testing.assert_array_equal(got.astype(numpy.float32), expected.astype(numpy.float32))
    assert gemm_calls and all(c["a"] == dtype.name and c["c"] == dtype.name and c["compute"] == 68
                              for c in gemm_calls)


def test_transposed_and_strided_operands_go_without_copies(simulated_gpu, gemm_calls, rng):
    a = rng.normal(size=(3, 8, 6)).astype(BF16)
    b = rng.normal(size=(3, 8, 5)).astype(BF16)
    x, y = _upload(simulated_gpu, a, b)
    with simulated_gpu.activate():
        launches = simulated_gpu.stats.kernel_launches
        got = simulated_gpu.to_host(simulated_gpu.matmul(x.swapaxes(-1, -2), y))  # op T, batch stride 48
        assert simulated_gpu.stats.kernel_launches == launches + 1  # the GEMM alone: nothing copied
    expected = (a.astype(numpy.float32).swapaxes(-1, -2) @ b.astype(numpy.float32)).astype(BF16)
    numpy.testing.assert_array_equal(got, expected)


def test_a_bf16_product_is_captured_and_replays(simulated_gpu, gemm_calls, rng):
    a, b = rng.normal(size=(2, 4, 8)).astype(BF16), rng.normal(size=(2, 8, 3)).astype(BF16)
    x, y = _upload(simulated_gpu, a, b)
    with simulated_gpu.capture() as capture:
        with simulated_gpu.activate():
            out = simulated_gpu.matmul(x, y)
    with simulated_gpu.activate():
        x[...] = 1
    capture.graph.launch()
    expected = (numpy.ones((2, 4, 8), numpy.float32) @ b.astype(numpy.float32)).astype(BF16)
    numpy.testing.assert_array_equal(simulated_gpu.to_host(out), expected)
    assert gemm_calls[-1]["name"] == "cublasGemmStridedBatchedEx"


def test_mixed_dtypes_are_refused_during_a_capture(simulated_gpu):
    x, y = _upload(simulated_gpu, numpy.ones((2, 3), numpy.float32), numpy.ones((3, 2), BF16))
    with pytest.raises(Exception, match="cuBLAS"):
        with simulated_gpu.capture():
            with simulated_gpu.activate():
                simulated_gpu.matmul(x, y)


# ------------------------------------------------- the simulated cuBLAS's checks

def _call_gemm_ex(gpu, a, b, c, in_type, c_type, compute, ld=None, algo=-1, offset=0):
    """cublasGemmEx for the row-major ``c (m, n) = a (m, k) @ b (k, n)``:
    column-major ``C^T = B^T A^T`` (``ld``: B's leading dimension, n)."""
    (m, k), n = a.shape, b.shape[1]
    with gpu.activate():
        handle = cublas_direct._handle(gpu.xp, False)
        alpha, beta = ctypes.c_float(1.0), ctypes.c_float(0.0)
        return sim_cublas.library.cublasGemmEx(
            ctypes.c_void_p(handle), 0, 0, n, m, k, ctypes.byref(alpha), ctypes.c_void_p(b.data.ptr + offset),
            in_type, n if ld is None else ld, ctypes.c_void_p(a.data.ptr), in_type, k, ctypes.byref(beta),
            ctypes.c_void_p(c.data.ptr), c_type, n, compute, algo)


def test_the_simulated_gemm_ex_refuses_what_cublas_refuses(simulated_gpu):
    # Row-major (2, 4) @ (4, 3) as cuBLAS's column-major C^T = B^T A^T.
    a, b = _upload(simulated_gpu, numpy.ones((2, 4), BF16), numpy.ones((4, 3), BF16))
    (c,) = _upload(simulated_gpu, numpy.zeros((2, 3), BF16))
    bf16, f32, f64 = sim_cublas.CUDA_R_16BF, sim_cublas.CUDA_R_32F, sim_cublas.CUDA_R_64F
    assert _call_gemm_ex(simulated_gpu, a, b, c, bf16, bf16, sim_cublas.COMPUTE_32F) == 0
    assert simulated_gpu.to_host(c).astype(numpy.float32).tolist() == [[4.0] * 3] * 2
    assert _call_gemm_ex(simulated_gpu, a, b, c, bf16, bf16, sim_cublas.COMPUTE_32F_FAST_TF32) == 15  # not 16-bit
    assert _call_gemm_ex(simulated_gpu, a, b, c, bf16, f64, sim_cublas.COMPUTE_32F) == 15
    assert _call_gemm_ex(simulated_gpu, a, b, c, f32, f32, sim_cublas.COMPUTE_64F) == 15
    assert _call_gemm_ex(simulated_gpu, a, b, c, bf16, bf16, sim_cublas.COMPUTE_32F, ld=2) == 7  # ld < rows
    assert _call_gemm_ex(simulated_gpu, a, b, c, bf16, bf16, sim_cublas.COMPUTE_32F, algo=50) == 7
    with pytest.raises(ValueError, match="not aligned to its 2-byte elements"):
        _call_gemm_ex(simulated_gpu, a, b, c, bf16, bf16, sim_cublas.COMPUTE_32F, offset=1)


def test_the_direct_path_refuses_dtypes_it_has_no_compute_type_for(simulated_gpu):
    x, y = _upload(simulated_gpu, numpy.ones((2, 3), numpy.int32), numpy.ones((3, 2), numpy.int32))
    with simulated_gpu.activate():
        assert not cublas_direct.takes(x, y)
        with pytest.raises(Exception, match="float16, bfloat16, float32, float64"):
            cublas_direct.matmul(simulated_gpu.xp, x, y)
        assert simulated_gpu.to_host(simulated_gpu.matmul(x, y)).tolist() == [[3, 3], [3, 3]]  # CuPy's, eagerly


# ------------------------------------------ layers under mixed precision on a GPU

def _bf16(policy_layer):
    mk.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        return policy_layer()
    finally:
        mk.mixed_precision.set_global_policy("float32")


def _forward_backward(layer, x):
    variable = mk.Variable(x)
    with mk.GradientTape() as tape:
        tape.watch(variable)
        out = layer(variable)
        loss = mk.ops.sum(mk.ops.cast(out, "float32") ** 2)
    grads = tape.gradient(loss, [variable] + list(layer.trainable_weights))
    return out, grads


@pytest.mark.parametrize("make_layer, shape", [
    (lambda: mk.layers.Dense(16), (32, 24)),
    (lambda: mk.layers.Dense(16), (4, 8, 24)),
    (lambda: mk.layers.EinsumDense("abc,cd->abd", output_shape=(8, 16), bias_axes="d"), (4, 8, 24)),
    (lambda: mk.layers.EinsumDense("abc,cde->abde", output_shape=(8, 2, 16)), (4, 8, 24)),
], ids=["dense", "dense_3d", "einsum_dense", "einsum_dense_heads"])
def test_bf16_layers_issue_bf16_gemm_ex_on_a_gpu_not_the_float32_detour(simulated_gpu, gemm_calls, rng, make_layer,
                                                                         shape):
    layer = _bf16(make_layer)
    x = rng.normal(size=shape).astype("float32")
    out, grads = _forward_backward(layer, x)
    assert out.dtype == "bfloat16"
    names = {(c["name"], c["a"], c["c"], c["compute"]) for c in gemm_calls}
    assert names and all(a == "bfloat16" and c == "bfloat16" and compute == 68 for _, a, c, compute in names)
    assert len(gemm_calls) >= 3  # forward, and the input's and the kernel's gradients
    # The CPU computes the same layer in float32 and rounds (in_float32's detour): same values within bf16's
    # rounding of the operands' products (one rounding of the output on each side, accumulation orders differ).
    with mk.device("cpu:0"):
        cpu_layer = _bf16(make_layer)
        cpu_layer.build(shape)
        cpu_layer.set_weights(layer.get_weights())
        cpu_out, cpu_grads = _forward_backward(cpu_layer, x)
    numpy.testing.assert_allclose(numpy.asarray(out, "float32"), numpy.asarray(cpu_out, "float32"), rtol=2e-2,
                                  atol=2e-2)
    for got, expected in zip(grads, cpu_grads):
        numpy.testing.assert_allclose(numpy.asarray(got, "float32"), numpy.asarray(expected, "float32"), rtol=3e-2,
                                      atol=3e-2 * float(numpy.abs(numpy.asarray(expected, "float32")).max()))


@pytest.mark.parametrize("equation, shapes", [
    ("abc,cd->abd", ((2, 3, 4), (4, 5))), ("abc,cde->abde", ((2, 3, 4), (4, 2, 5))),
    ("abcd,aecd->acbe", ((2, 3, 4, 5), (2, 6, 4, 5))), ("ab,b->a", ((3, 4), (4,))),
    ("abc,abc->ab", ((2, 3, 4), (2, 3, 4))), ("abc,cd->dba", ((2, 3, 4), (4, 5))),
    ("abc,d->abd", ((2, 3, 4), (5,))), ("abc,xbc->ax", ((1, 3, 4), (2, 3, 4))),
])
def test_a_two_operand_einsum_is_one_matmul(simulated_gpu, rng, equation, shapes):
    from minikeras.ops.math.contraction import contract, contractible

    (inputs, output) = equation.split("->")
    first, second = inputs.split(",")
    a, b = (rng.normal(size=shape) for shape in shapes)
    assert contractible(first, second, output, a.shape, b.shape)
    x, y = _upload(simulated_gpu, a, b)
    with simulated_gpu.activate():
        got = simulated_gpu.to_host(contract(simulated_gpu, first, second, output, x, y))
    numpy.testing.assert_allclose(got, numpy.einsum(equation, a, b), rtol=1e-12, atol=1e-12)
    assert not contractible("aa", "ab", "b", (2, 2), (2, 3))


# ---------------------------------------------------------------- cuDNN

def test_cudnn_convolutions_take_tensor_core_engines_only_with_tf32(simulated_gpu, rng, monkeypatch):
    from minikeras.device import cudnn, cudnn_graph

    monkeypatch.setenv("MINIKERAS_CUDNN", "1")
    x, kernel = _needs_tf32(rng, (2, 6, 6, 3)), _needs_tf32(rng, (4, 3, 3, 3))  # kernel (K, kh, kw, C)
    spec = cudnn.Spec((2, 6, 6, 3, 4, (3, 3), (1, 1), (1, 1), (1, 1), (6, 6)))
    images, weights = _upload(simulated_gpu, x, kernel)
    convolutions = simulated_gpu.convolutions()
    results = {}
    for enabled in (True, False):
        mk.config.experimental.enable_tensor_float_32_execution(enabled)
        with simulated_gpu.activate():
            assert convolutions.usable(simulated_gpu.xp, spec)
            results[enabled] = simulated_gpu.to_host(convolutions.forward(simulated_gpu.xp, images, weights, spec))
            plan = convolutions.plans(simulated_gpu.xp)[(spec, "forward", enabled, False)]
        assert (cudnn_graph.NOTE_TENSOR_CORE in plan.notes) is enabled
        assert cudnn_graph.NOTE_DOWN_CONVERT_INPUTS not in plan.notes  # never float16 inputs (PyTorch's filter)
    mk.config.experimental.enable_tensor_float_32_execution(False)

    def reference(images, weights):
        padded = numpy.pad(images, ((0, 0), (1, 1), (1, 1), (0, 0)))
        windows = numpy.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))  # (N, 6, 6, C, 3, 3)
        return numpy.einsum("nhwcij,kijc->nhwk", windows, weights)

    numpy.testing.assert_allclose(results[False], reference(x, kernel), rtol=1e-5, atol=1e-5)
    numpy.testing.assert_allclose(results[True], reference(_tf32(x), _tf32(kernel)), rtol=1e-5, atol=1e-5)
    assert numpy.abs(results[True] - results[False]).max() > 1e-5


def test_the_simulated_strided_batched_gemm_reads_each_matrix_at_its_stride(simulated_gpu):
    a = numpy.arange(2 * 2 * 3, dtype=numpy.float32).reshape(2, 2, 3).astype(BF16)
    b = numpy.ones((2, 3, 2), BF16)
    x, y = _upload(simulated_gpu, a, b)
    (c,) = _upload(simulated_gpu, numpy.zeros((2, 2, 2), BF16))
    bf16 = sim_cublas.CUDA_R_16BF

    def call(count, stride_c=4):
        with simulated_gpu.activate():
            handle = cublas_direct._handle(simulated_gpu.xp, False)
            alpha, beta = ctypes.c_float(1.0), ctypes.c_float(0.0)
            return sim_cublas.library.cublasGemmStridedBatchedEx(
                ctypes.c_void_p(handle), 0, 0, 2, 2, 3, ctypes.byref(alpha), ctypes.c_void_p(y.data.ptr), bf16, 2,
                ctypes.c_longlong(6), ctypes.c_void_p(x.data.ptr), bf16, 3, ctypes.c_longlong(6), ctypes.byref(beta),
                ctypes.c_void_p(c.data.ptr), bf16, 2, ctypes.c_longlong(stride_c), count, sim_cublas.COMPUTE_32F, -1)

    assert call(-1) == 7
    assert call(2) == 0
    assert simulated_gpu.to_host(c).astype(numpy.float32).tolist() == [[[3, 3], [12, 12]], [[21, 21], [30, 30]]]
    with pytest.raises(ValueError, match="not inside a live device buffer"):
        call(2, stride_c=8)  # the second output matrix would lie past the array's end
