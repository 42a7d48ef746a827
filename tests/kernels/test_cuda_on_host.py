"""The kernels' CUDA sources themselves, run on the host (tests/kernels/cuda_tools.py's
CpuHarness: g++, CUDA's built-ins defined, every block and thread run), through
their launch glue with the arguments CuPy would receive, against the NumPy
references: bit for bit where the kernel claims the reference's rounding.

This is what CI can check of code that only a card runs: the index math,
the vector paths, the tables passed by value and the launch splits. Not its
speed, and not what a GPU does differently from the host (-ftz, warp timing).
Skipped without g++.
"""
import numpy
import pytest

from minikeras import kernels
from minikeras.device import registry
from minikeras.kernels import im2col, multi_tensor
from minikeras.ops.nn.sliding_window import WindowGeometry
from tests.kernels.cuda_tools import (CpuHarness, check_guards, device_arrays, guarded, gxx,
                                      harness_device, scratch_dir)

pytestmark = pytest.mark.skipif(gxx() is None, reason="g++ not found: the CUDA sources are not run on the host")
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
