"""The kernels' CUDA sources themselves, run on the host (tests/kernels/cuda_tools.py's
CpuHarness: g++, CUDA's built-ins defined, every block and thread run), through
their launch glue with the arguments CuPy would receive, against the NumPy
references: bit for bit where the kernel claims the reference's rounding.

This is what CI can check of code that only a card runs: the index math,
the vector paths, the tables passed by value and the launch splits. Not its
speed, and not what a GPU does differently from the host (-ftz, warp timing).
Skipped without g++, and in the GPU runs (what it checks does not depend on the device).
"""
import numpy
import pytest

from minikeras import kernels
from minikeras.device import registry
from minikeras.kernels import im2col, multi_tensor
from minikeras.ops.nn.sliding_window import WindowGeometry
from tests.kernels import test_cuda_sources
from tests.kernels.cuda_tools import (CpuHarness, check_guards, device_arrays, guarded, gxx,
                                      harness_device, scratch_dir)

pytestmark = [pytest.mark.skipif(gxx() is None, reason="g++ not found: the CUDA sources are not run on the host"),
              pytest.mark.cpu_only(reason="the host runs the CUDA sources whatever the device: once per CI run")]
_HARNESSES = {}


@pytest.fixture(params=["float32", "float64"])
def harness(request):
    """Every kernel with a CUDA source, built for the host in one dtype (once per session)."""
    if request.param not in _HARNESSES:
        compiled = {name: k for name, k in kernels.registered().items() if k.cuda_source is not None}
        _HARNESSES[request.param] = CpuHarness(compiled, request.param, scratch_dir())
    return _HARNESSES[request.param]


def _cpu():
    return registry.get_device("cpu:0")


def _launch(harness, name, *arguments):
    """Run kernel ``name``'s launch glue on the harness; returns (result, launches)."""
    kernel = kernels.registered()[name]
    launcher = harness.launcher(kernel)
    result = kernel.launch(launcher, harness_device(), *arguments)
    check_guards()
    return result, launcher.launches


# --------------------------------------------------------------- im2col / col2im
GEOMETRIES = [  # (input shape, window, strides, dilation, padding): every vector width and border case
    ((2, 6, 7, 3), (3, 2), (1, 1), (1, 1), "same"),
    ((3, 9, 8, 8), (3, 3), (2, 1), (1, 2), "valid"),
    ((2, 5, 5, 4), (3, 3), (2, 2), (1, 1), "same"),
    ((2, 7, 6, 6), (2, 3), (1, 2), (2, 1), "same"),
    ((1, 4, 9, 1), (1, 3), (1, 3), (1, 1), ((0, 1), (2, 0))),
    ((2, 8, 8, 16), (5, 5), (1, 1), (1, 1), "same"),
]


@pytest.mark.parametrize("shape,window,strides,dilation,padding", GEOMETRIES)
def test_im2col_and_col2im_give_the_references_bits(harness, rng, shape, window, strides, dilation, padding):
    dtype = harness.dtype
    geometry = WindowGeometry("conv2d", shape, window, strides, dilation, padding)
    x = rng.normal(size=shape).astype(dtype)
    expected = numpy.empty((shape[0], geometry.out_h, geometry.out_w, *window, shape[3]), dtype)
    im2col.im2col_reference(_cpu(), x, geometry, expected, False, [None])
    block = guarded(numpy.full(expected.shape, numpy.nan, dtype))
    _, launches = _launch(harness, "im2col", *device_arrays(x), geometry, block, False, [None])
    assert launches == 1
    numpy.testing.assert_array_equal(block, expected)

    patches = rng.normal(size=expected.shape).astype(dtype)
    reference = im2col.col2im_reference(_cpu(), patches, geometry, numpy.empty(shape, dtype))
    target = guarded(numpy.full(shape, numpy.nan, dtype))  # overwritten, not added to
    _launch(harness, "col2im", *device_arrays(patches), geometry, target)
    numpy.testing.assert_array_equal(target, reference)


def test_a_batch_past_the_32_bit_range_takes_one_launch_per_block_of_samples(harness, rng, monkeypatch):
    """Each launch's index math stays under its limit (here shrunk to 3 samples' vectors)."""
    dtype = harness.dtype
    geometry = WindowGeometry("conv2d", (7, 5, 5, 4), (3, 3), (1, 1), (1, 1), "same")
    per_sample = geometry.rows_per_sample * geometry.patch_size // (4 if dtype == numpy.float32 else 2)
    monkeypatch.setattr(im2col, "INDEX_LIMIT", 3 * per_sample)
    x = rng.normal(size=(7, 5, 5, 4)).astype(dtype)
    expected = numpy.empty((7, 5, 5, 3, 3, 4), dtype)
    im2col.im2col_reference(_cpu(), x, geometry, expected, False, [None])
    block = guarded(numpy.full(expected.shape, numpy.nan, dtype))
    _, launches = _launch(harness, "im2col", *device_arrays(x), geometry, block, False, [None])
    assert launches == 3  # samples 0-2, 3-5, 6
    numpy.testing.assert_array_equal(block, expected)
    target = guarded(numpy.full(x.shape, numpy.nan, dtype))
    _, launches = _launch(harness, "col2im", *device_arrays(expected), geometry, target)
    assert launches == 3
    numpy.testing.assert_array_equal(target, im2col.col2im_reference(_cpu(), expected, geometry,
                                                                     numpy.empty(x.shape, dtype)))


def test_a_misaligned_image_takes_the_scalar_path(harness, rng):
    """A view one element into its buffer is not 16-byte aligned: one scalar per thread, same bits."""
    dtype = harness.dtype
    geometry = WindowGeometry("conv2d", (2, 5, 5, 8), (3, 3), (1, 1), (1, 1), "same")
    buffer = guarded(rng.normal(size=2 * 5 * 5 * 8 + 1).astype(dtype))
    x = buffer[1:].reshape(2, 5, 5, 8)
    expected = numpy.empty((2, 5, 5, 3, 3, 8), dtype)
    im2col.im2col_reference(_cpu(), numpy.asarray(x), geometry, expected, False, [None])
    block = guarded(numpy.full(expected.shape, numpy.nan, dtype))
    _launch(harness, "im2col", x, geometry, block, False, [None])
    numpy.testing.assert_array_equal(block, expected)


# -------------------------------------------------------------- multi-tensor updates
SIZES = [(3, 4), (4,), (2, 2, 5), (4099,), (1,), (2048,), (6000,)]  # tails, one and several chunks


def _variables(rng, dtype, shapes, misaligned=False):
    """Per variable: a dict of host arrays (g, m, v, vh, w) with positive v and vh."""
    host = []
    for shape in shapes:
        arrays = {name: rng.normal(size=shape).astype(dtype) for name in ("g", "m", "v", "vh", "w", "a", "s")}
        arrays["v"], arrays["vh"] = arrays["v"] ** 2, arrays["vh"] ** 2
        host.append(arrays)
    return host


def _on_device(array, misaligned):
    if not misaligned:
        return device_arrays(array)[0]
    buffer = guarded(numpy.empty(array.size + 1, array.dtype))
    view = buffer[1:].reshape(array.shape)
    view[...] = array
    return view


def _run_both(harness, name, host, group_of, scalars, misaligned=False):
    """The update on the harness (device arrays) and the reference (copies): both groups' arrays."""
    on_harness = [group_of({k: _on_device(v, misaligned) for k, v in arrays.items()}) for arrays in host]
    on_reference = [group_of({k: v.copy() for k, v in arrays.items()}) for arrays in host]
    _, launches = _launch(harness, name, on_harness, *scalars)
    kernels.registered()[name].reference(_cpu(), on_reference, *scalars)
    return on_harness, on_reference, launches


def _assert_same_groups(on_harness, on_reference):
    for got_group, want_group in zip(on_harness, on_reference):
        for got, want in zip(got_group, want_group):
            if got is not None and want is not None:
                numpy.testing.assert_array_equal(numpy.asarray(got), want)


@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("misaligned", [False, True])
def test_adam_gives_the_references_bits(harness, rng, amsgrad, misaligned):
    host = _variables(rng, harness.dtype, SIZES)

    def group(a):
        return (a["g"], a["m"], a["v"], a["vh"] if amsgrad else None, a["w"], numpy.empty_like(a["w"]),
                numpy.empty_like(a["w"]))

    on_harness, on_reference, launches = _run_both(harness, "adam_update", host, group, (0.01, 0.9, 0.999, 1e-7),
                                                   misaligned)
    assert launches == 1
    _assert_same_groups([g[:5] for g in on_harness], [g[:5] for g in on_reference])


def test_adam_reads_a_device_step_scalar(harness, rng):
    """A captured step's learning rate is a 0-d device array the kernel reads when it runs."""
    host = _variables(rng, harness.dtype, [(5, 3)])
    alpha = guarded(numpy.array(0.003, harness.dtype))

    def group(a):
        return a["g"], a["m"], a["v"], None, a["w"], numpy.empty_like(a["w"]), numpy.empty_like(a["w"])

    on_harness = [group({k: device_arrays(v)[0] for k, v in arrays.items()}) for arrays in host]
    on_reference = [group({k: v.copy() for k, v in arrays.items()}) for arrays in host]
    _launch(harness, "adam_update", on_harness, alpha, 0.9, 0.999, 1e-7)
    kernels.registered()["adam_update"].reference(_cpu(), on_reference, numpy.asarray(alpha), 0.9, 0.999, 1e-7)
    _assert_same_groups([g[:5] for g in on_harness], [g[:5] for g in on_reference])


@pytest.mark.parametrize("momentum,nesterov", [(0.0, False), (0.9, False), (0.9, True)])
def test_sgd_gives_the_references_bits(harness, rng, momentum, nesterov):
    host = _variables(rng, harness.dtype, SIZES)

    def group(a):
        return (a["g"], a["m"] if momentum else None, a["w"], numpy.empty_like(a["w"]), numpy.empty_like(a["w"]))

    on_harness, on_reference, _ = _run_both(harness, "sgd_update", host, group, (0.1, momentum, nesterov))
    _assert_same_groups([g[:3] for g in on_harness], [g[:3] for g in on_reference])


@pytest.mark.parametrize("centered,momentum", [(False, 0.0), (True, 0.0), (True, 0.5), (False, 0.5)])
def test_rmsprop_gives_the_references_bits(harness, rng, centered, momentum):
    host = _variables(rng, harness.dtype, SIZES)
    for arrays in host:  # centred: the mean square stays above the squared mean
        arrays["v"] += arrays["a"] ** 2 + 1

    def group(a):
        return (a["g"], a["v"], a["a"] if centered else None, a["s"] if momentum else None, a["w"],
                numpy.empty_like(a["w"]), numpy.empty_like(a["w"]))

    on_harness, on_reference, _ = _run_both(harness, "rmsprop_update", host, group, (0.01, 0.9, 1e-7, momentum))
    _assert_same_groups([g[:5] for g in on_harness], [g[:5] for g in on_reference])


def test_weight_decay_of_many_variables_takes_one_launch_per_32(harness, rng):
    host = _variables(rng, harness.dtype, [(3,)] * 70)
    on_harness, on_reference, launches = _run_both(harness, "weight_decay_update", host,
                                                   lambda a: (a["w"], numpy.empty_like(a["w"])), (0.004, 0.01))
    assert launches == 3  # 32 + 32 + 6 tensors
    _assert_same_groups([g[:1] for g in on_harness], [g[:1] for g in on_reference])


def test_a_launch_full_of_blocks_continues_a_tensor_in_the_next(harness, rng, monkeypatch):
    """A tensor whose chunks overflow one table is split across launches at a chunk."""
    monkeypatch.setattr(multi_tensor, "CHUNK_MAX", multi_tensor.CHUNK_MIN)  # keep chunks small
    multi_tensor.plan.cache_clear()
    try:
        capacity = multi_tensor.table_struct(5).dtype["chunk_of_block"].shape[0]
        shapes = [(multi_tensor.CHUNK_MIN * (capacity - 1) + 5,), (3 * multi_tensor.CHUNK_MIN,)]
        host = _variables(rng, harness.dtype, shapes)

        def group(a):
            return a["g"], a["m"], a["v"], None, a["w"], numpy.empty_like(a["w"]), numpy.empty_like(a["w"])

        on_harness, on_reference, launches = _run_both(harness, "adam_update", host, group, (0.01, 0.9, 0.999, 1e-7))
        assert launches == 2
        _assert_same_groups([g[:5] for g in on_harness], [g[:5] for g in on_reference])
    finally:
        multi_tensor.plan.cache_clear()


# ------------------------------------------------------------------ batch norm
BN_SHAPES = [(5000, 64), (333, 6), (700, 3), (90, 256), (41, 1000), (1, 8)]  # every vector width, tiles, chunks


def _statistics(harness, view):
    (mean, variance, inv_std, scratch), launches = _launch(harness, "batch_norm_statistics", view, (0,),
                                                           view.shape[0], 1e-3)
    assert scratch is None and launches == 1
    return mean, variance, inv_std


@pytest.mark.parametrize("shape", BN_SHAPES)
def test_batch_norm_statistics_match_float64_and_repeat_bit_for_bit(harness, rng, shape):
    x = (rng.normal(size=shape) * rng.uniform(0.1, 3, size=shape[1]) + rng.normal(size=shape[1]) * 5)
    x = x.astype(harness.dtype)
    view, = device_arrays(x)
    mean, variance, inv_std = _statistics(harness, view)
    wide = x.astype(numpy.float64)
    tolerance = 1e-5 if harness.dtype == numpy.float32 else 1e-12
    numpy.testing.assert_allclose(mean[0], wide.mean(axis=0), rtol=tolerance, atol=tolerance)
    numpy.testing.assert_allclose(variance[0], wide.var(axis=0), rtol=50 * tolerance, atol=tolerance)
    numpy.testing.assert_allclose(inv_std[0], 1 / numpy.sqrt(wide.var(axis=0) + 1e-3), rtol=50 * tolerance)
    again = _statistics(harness, view)
    for first, second in zip((mean, variance, inv_std), again):
        assert first.tobytes() == second.tobytes()  # a fixed order of additions


def test_batch_norm_statistics_keep_their_precision_far_from_zero(harness, rng):
    """A mean 10^4 times the spread: the sums of x - x[0] keep the variance (E[x^2] - E[x]^2 would not)."""
    x = (1000.0 + 0.1 * rng.normal(size=(20000, 8))).astype(harness.dtype)
    _, variance, _ = _statistics(harness, device_arrays(x)[0])
    numpy.testing.assert_allclose(variance[0], x.astype(numpy.float64).var(axis=0), rtol=1e-3)


@pytest.mark.parametrize("shape", BN_SHAPES[:4])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_normalize_and_input_gradient_give_the_references_bits(harness, rng, shape, affine):
    """Given the same statistics and sums, the elementwise passes round as the references do."""
    dtype = harness.dtype
    x, grad = rng.normal(size=shape).astype(dtype), rng.normal(size=shape).astype(dtype)
    mean, inv_std = rng.normal(size=(1, shape[1])).astype(dtype), rng.uniform(0.5, 2, (1, shape[1])).astype(dtype)
    gamma, beta = (rng.normal(size=(1, shape[1])).astype(dtype) if affine else None for _ in range(2))
    on_device = [None if a is None else device_arrays(a)[0] for a in (x, mean, inv_std, gamma, beta)]
    (out, x_hat), _ = _launch(harness, "batch_norm_normalize", on_device[0], (0,), *on_device[1:], None)
    assert x_hat is None  # the kernels save x
    want_out, want_x_hat = kernels.registered()["batch_norm_normalize"].reference(
        _cpu(), x, (0,), mean, inv_std, gamma, beta, None)
    numpy.testing.assert_array_equal(out, want_out)

    sums = rng.normal(size=(2, 1, shape[1])).astype(dtype)
    grad_x, _ = _launch(harness, "batch_norm_backward_input", *device_arrays(grad), None, on_device[0], on_device[1],
                        on_device[2], on_device[3], *device_arrays(sums[0], sums[1]), shape[0], None)
    want = kernels.registered()["batch_norm_backward_input"].reference(
        _cpu(), grad, want_x_hat, None, mean, inv_std, gamma, sums[0], sums[1], shape[0], None)
    numpy.testing.assert_array_equal(grad_x, want)


@pytest.mark.parametrize("shape", BN_SHAPES)
def test_batch_norm_backward_sums_match_the_reference(harness, rng, shape):
    dtype = harness.dtype
    x, grad = rng.normal(size=shape).astype(dtype), rng.normal(size=shape).astype(dtype)
    mean, inv_std = x.mean(axis=0, keepdims=True), (1 / (x.std(axis=0, keepdims=True) + 0.1)).astype(dtype)
    (sum_grad, sum_grad_x_hat, scratch), launches = _launch(harness, "batch_norm_backward_sums", *device_arrays(grad),
                                                            None, *device_arrays(x, mean, inv_std), (0,))
    assert scratch is None and launches == 1
    want_grad, want_x_hat, _ = kernels.registered()["batch_norm_backward_sums"].reference(
        _cpu(), grad, None, x, mean, inv_std, (0,))
    tolerance = 1e-4 if dtype == numpy.float32 else 1e-11
    numpy.testing.assert_allclose(sum_grad, want_grad, rtol=tolerance, atol=tolerance * numpy.sqrt(shape[0]))
    numpy.testing.assert_allclose(sum_grad_x_hat, want_x_hat, rtol=tolerance, atol=tolerance * numpy.sqrt(shape[0]))


def test_batch_norm_kernels_leave_other_layouts_to_the_references(harness, rng):
    """A 4-D view (features not last) or x_hat saved by a reference forward: the reference runs."""
    x = rng.normal(size=(4, 3, 5, 5)).astype(harness.dtype)
    # (a launch would fail here: the harness device's xp has no RawKernel)
    mean, _, _, scratch = kernels.registered()["batch_norm_statistics"].bound(_GpuLike())(
        device_arrays(x)[0], (0, 2, 3), 100, 1e-3)
    assert scratch is not None  # the reference's
    numpy.testing.assert_allclose(mean.reshape(-1), x.mean(axis=(0, 2, 3)), rtol=1e-5)
    grad = rng.normal(size=(20, 3)).astype(harness.dtype)
    x_hat = rng.normal(size=(20, 3)).astype(harness.dtype)
    sums = kernels.registered()["batch_norm_backward_sums"].bound(_GpuLike())(
        *device_arrays(grad, x_hat), None, None, None, (0,))
    numpy.testing.assert_allclose(sums[1][0], (grad * x_hat).sum(axis=0), rtol=1e-5)


class _GpuLike:
    """A device on which kernels.get picks the compiled path."""
    compiles_kernels = True

    def __init__(self):
        device, cpu = harness_device(), _cpu()
        self.xp, self.cuda_id, self.canonical = device.xp, device.cuda_id, device.canonical
        self.row_blocks, self.one_kernel = cpu.row_blocks, cpu.one_kernel


# ----------------------------------------------------------- every other kernel
def _copies(arguments, to_device):
    """Deep copies of a launch case's arguments: arrays as device arrays or host arrays."""
    def copy(value):
        if isinstance(value, numpy.ndarray):
            return device_arrays(value)[0] if to_device else numpy.array(value, copy=True)
        if isinstance(value, list):
            return [copy(v) for v in value]
        if isinstance(value, tuple):
            return tuple(copy(v) for v in value)
        return value
    return copy(arguments)


def _arrays_in(value):
    if isinstance(value, (numpy.ndarray, numpy.generic)):
        return [numpy.asarray(value)]
    if isinstance(value, (list, tuple)):
        return [array for item in value for array in _arrays_in(item)]
    return []


@pytest.mark.parametrize("name", sorted(set(test_cuda_sources.LAUNCH_CASE_NAMES) - {
    "counter_random",  # random numbers: their own statistical tests (test_counter_random_kernel.py)
    "max_pool", "max_pool_backward",  # the kernel's window index is not the reference's (its own test below)
    "adam_update", "sgd_update", "rmsprop_update", "weight_decay_update",  # bit for bit above
    "batch_norm_statistics", "batch_norm_normalize", "batch_norm_backward_sums",  # above (the kernels save x,
    "batch_norm_backward_input",  # the references x_hat and their scratch)
}))
def test_every_kernel_on_the_host_computes_its_reference(harness, name):
    kernel = kernels.registered()[name]
    tolerance = 2e-5 if harness.dtype == numpy.float32 else 1e-12
    for arguments in test_cuda_sources._cases(harness.dtype.name)[name]:
        on_device, on_host = _copies(arguments, True), _copies(arguments, False)
        got = kernel.launch(harness.launcher(kernel), harness_device(), *on_device)
        check_guards()
        want = kernel.reference(_cpu(), *on_host)
        for got_array, want_array in zip(_arrays_in((got, on_device)), _arrays_in((want, on_host))):
            numpy.testing.assert_allclose(numpy.asarray(got_array, dtype=float), numpy.asarray(want_array, dtype=float),
                                          rtol=tolerance, atol=tolerance, err_msg=name)


def test_max_pool_on_the_host_routes_the_gradient_as_the_reference(harness, rng):
    """The forward's maxima equal; the gradient each routes back through its own index lands alike."""
    geometry = test_cuda_sources._pool_geometry("same")
    images = rng.normal(size=(2, 5, 5, 3)).astype(harness.dtype)
    (out, index), _ = _launch(harness, "max_pool", *device_arrays(images), geometry, True)
    want_out, want_index = kernels.registered()["max_pool"].reference(_cpu(), images, geometry, True)
    numpy.testing.assert_array_equal(out, want_out)
    grad = rng.normal(size=out.shape).astype(harness.dtype)
    got, _ = _launch(harness, "max_pool_backward", *device_arrays(grad), index, geometry)
    want = kernels.registered()["max_pool_backward"].reference(_cpu(), grad, want_index, geometry)
    numpy.testing.assert_array_equal(got, want)
