"""softmax, log_softmax and the fused cross-entropies: values against direct
NumPy formulas, gradients by finite differences, stability, errors."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from minikeras.autograd import gradcheck
from tests.ops.op_check import check_op


def np_log_softmax(a, axis=-1):
    shifted = a - a.max(axis=axis, keepdims=True)
    return shifted - numpy.log(numpy.exp(shifted).sum(axis=axis, keepdims=True))


def np_softmax(a, axis=-1):
    return numpy.exp(np_log_softmax(a, axis))


@pytest.fixture
def logits(rng):
    return rng.standard_normal((4, 6)) * 3


@pytest.mark.parametrize("axis", [-1, 0, (0, 1)])
def test_softmax(logits, axis):
    check_op(lambda t: ops.softmax(t, axis=axis), lambda a: np_softmax(a, axis), [logits])


@pytest.mark.parametrize("axis", [-1, 0, (0, 1)])
def test_log_softmax(logits, axis):
    check_op(lambda t: ops.log_softmax(t, axis=axis), lambda a: np_log_softmax(a, axis), [logits])


def test_softmax_sums_to_one_on_a_3d_tensor(rng):
    out = mk.tensor(rng.standard_normal((2, 3, 5)).astype("float32")).softmax(axis=1).numpy()
    numpy.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-6)


def test_extreme_logits_stay_finite():
    values = numpy.array([[1000.0, 0.0, -1000.0], [-1000.0, -1000.0, -1000.0]], dtype="float32")
    t = mk.Tensor(values, requires_grad=True)
    probabilities = ops.softmax(t)
    log_probabilities = ops.log_softmax(t)
    numpy.testing.assert_allclose(probabilities.numpy(), [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3]], atol=1e-7)
    numpy.testing.assert_allclose(log_probabilities.numpy(), [[0, -1000, -2000], [-numpy.log(3)] * 3], rtol=1e-6)
    (probabilities.sum() + log_probabilities.sum()).backward()
    assert numpy.isfinite(t.grad.numpy()).all()
    labels = numpy.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]], dtype="float32")
    loss = ops.softmax_cross_entropy(t, labels)
    numpy.testing.assert_allclose(loss.numpy(), [2000.0, numpy.log(3)], rtol=1e-6)
    sparse = ops.sparse_softmax_cross_entropy(t, numpy.array([2, 0]))
    numpy.testing.assert_allclose(sparse.numpy(), [2000.0, numpy.log(3)], rtol=1e-6)
    binary = ops.sigmoid_cross_entropy(t, numpy.ones((2, 3), dtype="float32"))
    numpy.testing.assert_allclose(binary.numpy(), [[0, numpy.log(2), 1000], [1000, 1000, 1000]], rtol=1e-6)



@pytest.mark.parametrize("op", [ops.softmax, ops.log_softmax])
def test_softmax_over_an_empty_axis_is_empty(op):
    # Keras 3 (every backend) answers an empty (2, 0) tensor; it was refused ("no distribution over no classes")
    x = mk.Tensor(numpy.zeros((2, 0), "float32"), requires_grad=True)
    out = op(x)
    assert out.shape == (2, 0) and out.dtype == numpy.float32
    ops.sum(out).backward()
    assert x.grad.shape == (2, 0)
    assert op(numpy.zeros((2, 0, 3), "float16"), axis=1).shape == (2, 0, 3)

# ------------------------------------------------------- softmax_cross_entropy
def test_softmax_cross_entropy_one_hot_and_soft_labels(logits, rng):
    one_hot = numpy.eye(6)[rng.integers(0, 6, 4)]
    soft = rng.random((4, 6))  # rows do not sum to 1: the gradient must use sum(labels)
    reference = lambda a, z: -(z * np_log_softmax(a)).sum(axis=-1)  # noqa: E731
    check_op(ops.softmax_cross_entropy, reference, [logits, one_hot], grad_inputs=[0])
    check_op(ops.softmax_cross_entropy, reference, [logits, soft])  # labels differentiated too


def test_softmax_cross_entropy_other_axis(rng):
    a, z = rng.standard_normal((3, 5, 2)), rng.random((3, 5, 2))
    check_op(
        lambda p, q: ops.softmax_cross_entropy(p, q, axis=1),
        lambda p, q: -(q * np_log_softmax(p, 1)).sum(axis=1),
        [a, z],
    )


def test_softmax_cross_entropy_keeps_float32_with_float64_labels(logits):
    labels = numpy.eye(6)[[0, 1, 2, 3]]  # float64
    t = mk.Tensor(logits.astype("float32"), requires_grad=True)
    loss = ops.softmax_cross_entropy(t, labels)
    assert loss.dtype == numpy.float32
    loss.sum().backward()
    assert t.grad.dtype == numpy.float32
    numpy.testing.assert_allclose(t.grad.numpy(), np_softmax(logits) - labels, rtol=1e-5, atol=1e-6)


def test_softmax_cross_entropy_shape_mismatch(logits):
    with pytest.raises(ValueError, match=r"softmax_cross_entropy: labels of shape \(4, 5\) must have .* \(4, 6\)"):
        ops.softmax_cross_entropy(mk.tensor(logits), numpy.zeros((4, 5)))


# ------------------------------------------------ sparse_softmax_cross_entropy
def test_sparse_softmax_cross_entropy(logits, rng):
    labels = rng.integers(0, 6, 4)
    reference = lambda a, y: -np_log_softmax(a)[numpy.arange(4), y]  # noqa: E731
    check_op(ops.sparse_softmax_cross_entropy, reference, [logits, labels])
    # Keras-style labels of shape (N, 1), and float class ids.
    check_op(ops.sparse_softmax_cross_entropy, lambda a, y: reference(a, y[:, 0]), [logits, labels[:, None]])
    column = labels.astype("float32")
    out = ops.sparse_softmax_cross_entropy(mk.tensor(logits), column)
    numpy.testing.assert_allclose(out.numpy(), reference(logits, labels))


def test_sparse_softmax_cross_entropy_3d(rng):
    a, y = rng.standard_normal((2, 3, 4)), rng.integers(0, 4, (2, 3))
    reference = lambda p, q: -numpy.take_along_axis(np_log_softmax(p), q[..., None], -1)[..., 0]  # noqa: E731
    check_op(ops.sparse_softmax_cross_entropy, reference, [a, y])


def test_sparse_softmax_cross_entropy_gradient_is_softmax_minus_one_hot(logits):
    labels = numpy.array([5, 0, 0, 2])
    t = mk.Tensor(logits.astype("float32"), requires_grad=True)
    ops.sparse_softmax_cross_entropy(t, labels).sum().backward()
    numpy.testing.assert_allclose(t.grad.numpy(), np_softmax(logits) - numpy.eye(6)[labels], rtol=1e-5, atol=1e-6)


def test_sparse_softmax_cross_entropy_label_errors(logits):
    t = mk.tensor(logits)
    with pytest.raises(ValueError, match=r"sparse_softmax_cross_entropy: .*\[0, 6\).*received label 6"):
        ops.sparse_softmax_cross_entropy(t, numpy.array([0, 6, 1, 1]))
    with pytest.raises(ValueError, match=r"\[0, 6\).*received label -1"):
        ops.sparse_softmax_cross_entropy(t, numpy.array([0, -1, 1, 1]))
    with pytest.raises(ValueError, match=r"labels of shape \(4, 6\) must have shape \(4,\)"):
        ops.sparse_softmax_cross_entropy(t, numpy.zeros((4, 6), dtype="int64"))


# ------------------------------------------------------- sigmoid_cross_entropy
def test_sigmoid_cross_entropy(rng):
    a, z = rng.standard_normal((5, 3)) * 4, rng.random((5, 3))

    def reference(x, labels):
        probability = 1 / (1 + numpy.exp(-x))
        return -(labels * numpy.log(probability) + (1 - labels) * numpy.log(1 - probability))

    check_op(ops.sigmoid_cross_entropy, reference, [a, z])
    check_op(ops.sigmoid_cross_entropy, lambda x, labels: reference(x, labels), [a, z[:1]])  # broadcast labels


def test_sigmoid_cross_entropy_gradient_is_sigmoid_minus_labels(rng):
    a = numpy.array([-50.0, -3.0, 0.0, 2.0, 60.0], dtype="float32")
    z = numpy.array([1.0, 0.0, 0.5, 1.0, 0.0], dtype="float32")
    t = mk.Tensor(a, requires_grad=True)
    ops.sigmoid_cross_entropy(t, z).sum().backward()
    expected = 1 / (1 + numpy.exp(-a.astype(numpy.float64))) - z
    numpy.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-6, atol=1e-7)
    assert t.grad.dtype == numpy.float32


def test_cross_entropies_reject_integer_logits():
    with pytest.raises(TypeError, match="sigmoid_cross_entropy expects floating-point logits"):
        ops.sigmoid_cross_entropy(mk.tensor(numpy.array([1, 2])), numpy.array([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"sigmoid_cross_entropy: shapes \(2,\) and \(3,\)"):
        ops.sigmoid_cross_entropy(mk.tensor(numpy.zeros(2)), numpy.zeros(3))
    with pytest.raises(ValueError, match="softmax: axis 2 is out of range"):
        ops.softmax(mk.tensor(numpy.zeros((2, 3))), axis=2)


# ------------------------------------------------------------------ vs torch
def test_against_torch(rng):
    torch = pytest.importorskip("torch")
    logits = rng.standard_normal((8, 10)).astype("float32") * 5
    labels = rng.integers(0, 10, 8)
    soft = rng.dirichlet(numpy.ones(10), 8).astype("float32")
    binary = rng.random((8, 10)).astype("float32")

    def grads(fn, *args):
        t = mk.Tensor(logits, requires_grad=True)
        out = fn(t, *args)
        out.sum().backward()
        tt = torch.tensor(logits, requires_grad=True)
        return out.numpy(), t.grad.numpy(), tt

    ours, our_grad, tt = grads(ops.softmax_cross_entropy, soft)
    theirs = torch.nn.functional.cross_entropy(tt, torch.tensor(soft), reduction="none")
    theirs.sum().backward()
    numpy.testing.assert_allclose(ours, theirs.detach().numpy(), rtol=1e-5, atol=1e-5)
    numpy.testing.assert_allclose(our_grad, tt.grad.numpy(), rtol=1e-5, atol=1e-6)

    ours, our_grad, tt = grads(ops.sparse_softmax_cross_entropy, labels)
    theirs = torch.nn.functional.cross_entropy(tt, torch.tensor(labels), reduction="none")
    theirs.sum().backward()
    numpy.testing.assert_allclose(ours, theirs.detach().numpy(), rtol=1e-5, atol=1e-5)
    numpy.testing.assert_allclose(our_grad, tt.grad.numpy(), rtol=1e-5, atol=1e-6)

    ours, our_grad, tt = grads(ops.sigmoid_cross_entropy, binary)
    theirs = torch.nn.functional.binary_cross_entropy_with_logits(tt, torch.tensor(binary), reduction="none")
    theirs.sum().backward()
    numpy.testing.assert_allclose(ours, theirs.detach().numpy(), rtol=1e-5, atol=1e-5)
    numpy.testing.assert_allclose(our_grad, tt.grad.numpy(), rtol=1e-5, atol=1e-6)

    weights = rng.standard_normal((8, 10)).astype("float32")
    for ours_fn, theirs_fn in ((ops.softmax, torch.softmax), (ops.log_softmax, torch.log_softmax)):
        t = mk.Tensor(logits, requires_grad=True)
        out = ours_fn(t, axis=1)
        (out * weights).sum().backward()
        tt = torch.tensor(logits, requires_grad=True)
        reference = theirs_fn(tt, dim=1)
        (reference * torch.tensor(weights)).sum().backward()
        numpy.testing.assert_allclose(out.numpy(), reference.detach().numpy(), rtol=1e-5, atol=1e-6)
        numpy.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=1e-4, atol=1e-5)
