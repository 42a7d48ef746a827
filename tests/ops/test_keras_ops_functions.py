"""Behaviour of the non-numeric keras.ops functions (issue 24): control flow,
custom_gradient, stop_gradient, Keras's dtype promotion, tensor utilities,
and the errors bad arguments raise."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops

rng = numpy.random.default_rng(7)


def _leaf(values):
    return mk.Tensor(numpy.asarray(values, dtype="float64"), requires_grad=True)


def test_cond_records_only_the_branch_taken():
    x = _leaf([1.0, 2.0])
    out = ops.cond(ops.sum(x) > 0, lambda: (x * x).sum(), lambda: (x * 10).sum())
    out.backward()
    numpy.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    assert float(ops.cond(False, lambda: mk.tensor(1.0), lambda: mk.tensor(-1.0)).numpy()) == -1.0
    with pytest.raises(ValueError, match="single boolean"):
        ops.cond(mk.tensor(numpy.array([True, False])), lambda: 1, lambda: 2)


def test_switch_clamps_the_index():
    branches = [lambda v: v + 1, lambda v: v * 2, lambda v: v - 5]
    assert [float(ops.switch(i, branches, mk.tensor(3.0)).numpy()) for i in (-4, 1, 9)] == [4.0, 6.0, -2.0]


def test_while_loop_fori_loop_and_gradients_through_iterations():
    x = _leaf(1.5)
    count, value = ops.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), (0, mk.tensor(1.0, dtype="float64")))
    assert count == 3
    value.backward()
    numpy.testing.assert_allclose(x.grad.numpy(), 3 * 1.5 ** 2)
    single = ops.while_loop(lambda v: v < 10, lambda v: v * 2, mk.tensor(1.0), maximum_iterations=2)
    assert float(single.numpy()) == 4.0
    assert float(ops.fori_loop(0, 4, lambda i, v: v + i, mk.tensor(0.0)).numpy()) == 6.0


def test_scan_associative_scan_map_vectorized_map():
    xs = rng.normal(size=(5, 3))
    carry, ys = ops.scan(lambda c, x: (c + x, c * 2), mk.tensor(numpy.zeros(3)), mk.tensor(xs))
    numpy.testing.assert_allclose(carry.numpy(), xs.sum(0))
    numpy.testing.assert_allclose(ys.numpy(), 2 * numpy.concatenate([numpy.zeros((1, 3)), numpy.cumsum(xs, 0)[:-1]]))
    _, reverse = ops.scan(lambda c, x: (c + x, c + x), mk.tensor(numpy.zeros(3)), mk.tensor(xs), reverse=True)
    numpy.testing.assert_allclose(reverse.numpy(), numpy.cumsum(xs[::-1], 0)[::-1])
    numpy.testing.assert_allclose(ops.associative_scan(ops.add, mk.tensor(xs)).numpy(), numpy.cumsum(xs, 0))
    numpy.testing.assert_allclose(ops.associative_scan(ops.multiply, mk.tensor(xs), axis=1, reverse=True).numpy(),
                                  numpy.cumprod(xs[:, ::-1], 1)[:, ::-1])
    numpy.testing.assert_allclose(ops.map(lambda r: r.sum(), mk.tensor(xs)).numpy(), xs.sum(1))
    pair = ops.vectorized_map(lambda e: e[0] * e[1], (mk.tensor(xs), mk.tensor(xs)))
    numpy.testing.assert_allclose(pair.numpy(), xs * xs)
    x = _leaf(xs)
    ops.associative_scan(ops.add, x).sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy(), numpy.arange(5, 0, -1)[:, None] * numpy.ones((5, 3)))


def test_custom_gradient_is_used_by_backward():
    @ops.custom_gradient
    def log1pexp(x):
        e = ops.exp(x)

        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            return upstream * (1.0 - 1.0 / (1 + e))

        return ops.log(1 + e), grad

    x = _leaf([0.0, 100.0])
    out = log1pexp(x)
    numpy.testing.assert_allclose(out.numpy(), [numpy.log(2.0), 100.0])
    out.sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy(), [0.5, 1.0])  # the naive gradient is nan at 100

    @ops.custom_gradient
    def doubled_gradient(a, b):
        return a * b, lambda g: (g * 2, g * 3)

    a, b = _leaf([1.0]), _leaf([2.0])
    doubled_gradient(a, b).sum().backward()
    assert float(a.grad.numpy()[0]) == 2.0 and float(b.grad.numpy()[0]) == 3.0


def test_stop_gradient_blocks_gradients():
    x = _leaf([1.0, 2.0])
    (x * ops.stop_gradient(x)).sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy(), [1.0, 2.0])


@pytest.mark.parametrize("a,b,expected", [
    ("int32", "float32", "float32"), ("int64", "float16", "float16"), ("float16", "float32", "float32"),
    ("float32", "float64", "float64"), ("int8", "uint8", "int16"), ("bool", "int32", "int32"),
    ("bool", "float16", "float16"), ("int32", 1.5, "float32"), ("int8", 3, "int8"), ("float16", 2.0, "float16"),
    ("uint8", True, "uint8"), ("bool", 2, "int32"),
])
def test_result_type_follows_keras(a, b, expected):
    assert ops.result_type(a, b) == numpy.dtype(expected)


def test_arithmetic_uses_keras_promotion():
    ints = mk.tensor(numpy.array([1, 2, 3], "int32"))
    floats = mk.tensor(numpy.array([0.5, 1.0, 2.0], "float32"))
    assert (ints + floats).dtype == "float32" and ops.multiply(ints, 1.5).dtype == "float32"
    assert ops.divide(ints, ints).dtype == "float32" and (ints * 2).dtype == "int32"
    assert ops.add(mk.tensor(numpy.ones(2, "float16")), ints[:2]).dtype == "float16"


def test_tensor_utilities():
    x = mk.tensor(numpy.arange(6, dtype="float32").reshape(2, 3))
    assert ops.is_tensor(x) and not ops.is_tensor(numpy.ones(2))
    assert ops.dtype(x) == "float32" and ops.ndim(x) == 2 and ops.size(x) == 6
    assert isinstance(ops.convert_to_numpy(x), numpy.ndarray)
    assert ops.view(x, "int32").dtype == "int32" and ops.view(x, "int32").shape == (2, 3)
    assert ops.saturate_cast(mk.tensor(numpy.array([3e9, -3e9, numpy.nan], "float32")), "int32").numpy().tolist() == \
        [2147483520, -2147483648, 0]
    squared_norm = ops.vectorize(lambda v: (v * v).sum(), signature="(n)->()")
    numpy.testing.assert_allclose(squared_norm(x).numpy(), [5.0, 50.0])
    numpy.testing.assert_allclose(ops.vectorize(lambda a, b: a * b + 1)(x, 2.0).numpy(), x.numpy() * 2 + 1)


def test_sparsemax_is_a_projection_onto_the_simplex():
    x = rng.normal(size=(6, 5)) * 3
    out = ops.sparsemax(x).numpy()
    numpy.testing.assert_allclose(out.sum(-1), 1.0, rtol=1e-12)
    assert (out >= 0).all() and (out[x < x.max(-1, keepdims=True) - 2] == 0).all()


def test_vstack_of_vectors_is_numpys():
    numpy.testing.assert_array_equal(ops.vstack([numpy.ones(3), numpy.zeros(3)]).numpy(),
                                     numpy.vstack([numpy.ones(3), numpy.zeros(3)]))


def test_top_k_ties_keep_the_lower_index_and_large_rows():
    values, indices = ops.top_k(numpy.array([[1.0, 3.0, 3.0, 0.0]]), 2)
    assert indices.numpy().tolist() == [[1, 2]] and values.numpy().tolist() == [[3.0, 3.0]]
    row = rng.permutation(500).astype("float32")[None]
    values, indices = ops.top_k(row, 7)
    assert values.numpy().tolist() == [[499, 498, 497, 496, 495, 494, 493]]
    assert (row[0, indices.numpy()[0]] == values.numpy()[0]).all()


def test_ctc_loss_gradient_and_beam_search():
    from minikeras.autograd import gradcheck

    logits = mk.Tensor(rng.normal(size=(2, 4, 3)), requires_grad=True)
    target = numpy.array([[1, 2], [2, 0]])
    assert gradcheck(lambda o: ops.ctc_loss(target, o, numpy.array([2, 1]), numpy.array([4, 3])), [logits])
    confident = numpy.full((1, 4, 3), -10.0)
    for t, label in enumerate([1, 0, 2, 2]):
        confident[0, t, label] = 10.0
    decoded, scores = ops.ctc_decode(confident, numpy.array([4]), strategy="beam_search", beam_width=5, top_paths=2)
    assert decoded.shape == (2, 1, 4) and decoded.numpy()[0, 0, :2].tolist() == [1, 2]
    assert scores.numpy()[0, 0] > scores.numpy()[0, 1]


def test_linalg_factorisations_reconstruct():
    a = rng.normal(size=(2, 4, 3))
    q, r = ops.qr(a)
    numpy.testing.assert_allclose((q.numpy() @ r.numpy()), a, atol=1e-12)
    u, s, vt = ops.svd(a, full_matrices=False)
    numpy.testing.assert_allclose(u.numpy() * s.numpy()[..., None, :] @ vt.numpy(), a, atol=1e-12)
    square = rng.normal(size=(4, 4))
    lu, pivots = ops.lu_factor(square)
    lower = numpy.tril(lu.numpy(), -1) + numpy.eye(4)
    permuted = square.copy()
    for row, pivot in enumerate(pivots.numpy()):
        permuted[[row, pivot]] = permuted[[pivot, row]]
    numpy.testing.assert_allclose(lower @ numpy.triu(lu.numpy()), permuted, atol=1e-12)
    values, vectors = ops.eig(square)
    numpy.testing.assert_allclose(square @ vectors.numpy(), vectors.numpy() * values.numpy(), atol=1e-10)


@pytest.mark.parametrize("call,error,message", [
    (lambda: ops.top_k(numpy.ones((2, 3)), 4), ValueError, "top_k"),
    (lambda: ops.take_along_axis(numpy.ones((2, 3)), numpy.ones((2, 3)), 1), TypeError, "integers"),
    (lambda: ops.einsum("ij,jk->ik", numpy.ones((2, 3)), numpy.ones((4, 2))), ValueError, "sizes"),
    (lambda: ops.scatter(numpy.array([[0], [1]]), numpy.ones(3), (4,)), ValueError, "updates must have shape"),
    (lambda: ops.segment_sum(numpy.ones((3, 2)), numpy.array([0, 1])), ValueError, "one id per row"),
    (lambda: ops.quantile(numpy.ones(4), 1.5), ValueError, "within"),
    (lambda: ops.dot_product_attention(numpy.ones((1, 2, 3, 4)), numpy.ones((1, 2, 2, 4)), numpy.ones((1, 2, 2, 4))),
     ValueError, "multiple of key heads"),
    (lambda: ops.dot_product_attention(numpy.ones((1, 2, 2, 4)), numpy.ones((1, 2, 2, 4)), numpy.ones((1, 2, 2, 4)),
                                       flash_attention=True), ValueError, "flash_attention"),
    (lambda: ops.rearrange(numpy.ones((2, 6)), "a (b c) -> a b c"), ValueError, "infer"),
    (lambda: ops.ldexp(numpy.ones(2), numpy.ones(2)), TypeError, "integer"),
    (lambda: ops.slice_update(numpy.ones((3, 3)), (2, 2), numpy.ones((2, 2))), ValueError, "leaves"),
    (lambda: ops.ctc_decode(numpy.ones((1, 2, 3)), numpy.array([2]), strategy="best"), ValueError, "strategy"),
    (lambda: ops.cholesky(numpy.ones((2, 3))), ValueError, "square"),
    (lambda: ops.bincount(numpy.array([0, 1]), sparse=True), ValueError, "sparse"),
])
def test_bad_arguments_raise_clear_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_elastic_transform_is_seeded_and_identity_without_displacement():
    images = rng.uniform(size=(2, 8, 9, 3)).astype("float32")
    same = ops.image.elastic_transform(images, alpha=0.0, sigma=1.0)
    numpy.testing.assert_allclose(same.numpy(), images, atol=1e-6)
    first = ops.image.elastic_transform(images, alpha=3.0, sigma=1.0, seed=5).numpy()
    again = ops.image.elastic_transform(images, alpha=3.0, sigma=1.0, seed=5).numpy()
    other = ops.image.elastic_transform(images, alpha=3.0, sigma=1.0, seed=6).numpy()
    numpy.testing.assert_array_equal(first, again)
    assert not numpy.allclose(first, other) and first.shape == images.shape and first.dtype == numpy.float32
    channels_first = ops.image.elastic_transform(images.transpose(0, 3, 1, 2), alpha=3.0, sigma=1.0, seed=5,
                                                 data_format="channels_first").numpy()
    numpy.testing.assert_allclose(channels_first.transpose(0, 2, 3, 1), first, atol=1e-6)


@pytest.mark.parametrize("mode,expected", [
    ("mirror", [2, 1, 0, 1, 2, 3, 2, 1, 0]),   # ... 2 1 | 0 1 2 3 | 2 1 0 ...
    ("reflect", [1, 0, 0, 1, 2, 3, 3, 2, 1]),  # ... 1 0 | 0 1 2 3 | 3 2 1 ...
    ("wrap", [2, 3, 0, 1, 2, 3, 0, 1, 2]), ("nearest", [0, 0, 0, 1, 2, 3, 3, 3, 3]),
    ("constant", [-1, -1, 0, 1, 2, 3, -1, -1, -1]),
])
def test_map_coordinates_fill_modes_are_scipys(mode, expected):
    line = numpy.arange(4.0)
    out = ops.image.map_coordinates(line, numpy.arange(-2.0, 7.0)[None], 0, fill_mode=mode, fill_value=-1)
    assert out.numpy().tolist() == expected


@pytest.mark.parametrize("call,message", [
    (lambda: ops.image.pad_images(numpy.ones((4, 4, 1)), 1, 1), "exactly two of top_padding, bottom_padding"),
    (lambda: ops.image.pad_images(numpy.ones((4, 4, 1)), 1, 1, target_height=3, target_width=6),
     "bottom_padding must be >= 0"),
    (lambda: ops.image.crop_images(numpy.ones((4, 4, 1)), -1, 0, target_height=2, target_width=2),
     "top_cropping must be >= 0"),
    (lambda: ops.image.resize(numpy.ones((4, 4, 1)), (2, 2), interpolation="cubic"), "interpolation"),
    (lambda: ops.image.resize(numpy.ones((4, 4, 1)), (2, 2), crop_to_aspect_ratio=True, pad_to_aspect_ratio=True),
     "only one of"),
    (lambda: ops.image.rgb_to_hsv(numpy.ones((4, 4, 3), "int32")), "float dtype"),
    (lambda: ops.image.map_coordinates(numpy.ones((3, 3)), numpy.ones((3, 2)), 1), "rank of `inputs`"),
    (lambda: ops.image.map_coordinates(numpy.ones((3, 3)), numpy.ones((2, 2)), 3), "order<=1"),
])
def test_image_ops_refuse_bad_arguments(call, message):
    with pytest.raises((ValueError, NotImplementedError), match=message):
        call()
