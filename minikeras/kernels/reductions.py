"""Row reductions fused with their elementwise work: sparse softmax
cross-entropy forward (loss and probabilities in one pass) and backward.

The CUDA kernels give each row (sample) one thread, which loops over the
classes: a step's softmax has batch-size rows of a few classes, where one
pass per row is all the work there is. (Thousands of classes would want a
block per row with a shared-memory reduction; not written yet.)
"""
import numpy

from minikeras.kernels.kernel import Kernel, blocks_for, register

# The shift and normalizer of one row's softmax, shared by the kernels below (part of each source).
ROW_SOFTMAX_SOURCE = r"""
__device__ inline scalar_t row_max(const scalar_t* x, long long classes) {
    scalar_t top = x[0];
    for (long long c = 1; c < classes; ++c) top = x[c] > top ? x[c] : top;
    return top;
}

__device__ inline scalar_t row_exp_total(const scalar_t* x, long long classes, scalar_t top) {
    scalar_t total = 0;
    for (long long c = 0; c < classes; ++c) total += exp(x[c] - top);
    return total;
}
"""

SPARSE_SOFTMAX_CE_SOURCE = ROW_SOFTMAX_SOURCE + r"""
extern "C" __global__ void sparse_softmax_cross_entropy(const scalar_t* logits, const long long* labels,
                                                        scalar_t* loss, scalar_t* probabilities, long long rows,
                                                        long long classes, int keep_probabilities) {
    for (long long row = blockIdx.x * (long long)blockDim.x + threadIdx.x; row < rows;
         row += (long long)blockDim.x * gridDim.x) {
        const scalar_t* x = logits + row * classes;
        const scalar_t top = row_max(x, classes);
        const scalar_t total = row_exp_total(x, classes, top);
        const long long label = labels[row];
        /* An out-of-range label gives NaN (as TensorFlow on a GPU); the op checks labels before. */
        const scalar_t picked = (label >= 0 && label < classes) ? x[label] - top : (scalar_t)nan("");
        loss[row] = log(total) - picked;
        if (keep_probabilities) {
            for (long long c = 0; c < classes; ++c) probabilities[row * classes + c] = exp(x[c] - top) / total;
        }
    }
}
"""


def sparse_softmax_cross_entropy_reference(device, logits, labels, keep_probabilities):
    """``(loss, probabilities or None)`` for 2-D ``logits`` and integer
    ``labels`` (one per row): ``loss = logsumexp(row) - row[label]``,
    computed from the row shifted by its maximum."""
    xp = device.xp
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = xp.exp(shifted)
    total = exp.sum(axis=1)
    loss = xp.log(total)
    valid, safe = _valid_labels(xp, labels, logits.shape[1])
    loss -= shifted[xp.arange(logits.shape[0]), safe]
    loss = xp.where(valid, loss, numpy.nan).astype(loss.dtype, copy=False)  # as the kernel: NaN, no loss
    if not keep_probabilities:
        return loss, None
    exp /= total[:, None]
    return loss, exp


def _kernel_operands(xp, logits, labels):
    """C-contiguous logits and int64 labels, as the kernels index them."""
    if labels.dtype != numpy.int64:
        labels = labels.astype(numpy.int64)
    return xp.ascontiguousarray(logits), xp.ascontiguousarray(labels)


def _sparse_softmax_cross_entropy_launch(launcher, device, logits, labels, keep_probabilities):
    xp = device.xp
    logits, labels = _kernel_operands(xp, logits, labels)
    rows, classes = logits.shape
    loss = xp.empty((rows,), logits.dtype)
    probabilities = xp.empty_like(logits) if keep_probabilities else loss
    grid, block = blocks_for(rows)
    launcher.run(logits.dtype, grid, block, (logits, labels, loss, probabilities, numpy.int64(rows),
                                             numpy.int64(classes), numpy.int32(keep_probabilities)))
    return loss, (probabilities if keep_probabilities else None)


register(Kernel("sparse_softmax_cross_entropy", sparse_softmax_cross_entropy_reference, SPARSE_SOFTMAX_CE_SOURCE,
                _sparse_softmax_cross_entropy_launch))

SPARSE_SOFTMAX_CE_BACKWARD_SOURCE = r"""
extern "C" __global__ void sparse_softmax_cross_entropy_backward(const scalar_t* probabilities,
                                                                 const long long* labels, const scalar_t* grad,
                                                                 long long grad_stride, scalar_t* grad_logits,
                                                                 long long rows, long long classes) {
    /* grad_stride is 0 for the broadcast gradient of a mean (one value for every row). */
    const long long count = rows * classes;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)blockDim.x * gridDim.x) {
        const long long row = i / classes;
        const scalar_t row_grad = grad[row * grad_stride];
        scalar_t value = probabilities[i] * row_grad;
        if (labels[row] == i - row * classes) value -= row_grad;
        grad_logits[i] = value;
    }
}
"""


def sparse_softmax_cross_entropy_backward_reference(device, probabilities, labels, grad):
    """``probabilities * grad[:, None]`` minus ``grad`` at each row's label."""
    xp = device.xp
    grad_logits = probabilities * grad[:, None]
    valid, safe = _valid_labels(xp, labels, probabilities.shape[1])
    grad_logits[xp.arange(labels.shape[0]), safe] -= grad * valid
    return grad_logits


def _valid_labels(xp, labels, classes):
    """``(valid mask, labels safe to index with)``. Labels are checked before
    (at once, or when the logs are read: _support/deferred_checks.py); until
    then an out-of-range one must neither index outside its row nor wrap
    around (as -1 would), just as in the kernel."""
    valid = (labels >= 0) & (labels < classes)
    return valid, xp.where(valid, labels, 0)


def _sparse_softmax_cross_entropy_backward_launch(launcher, device, probabilities, labels, grad):
    xp = device.xp
    if labels.dtype != numpy.int64:
        labels = labels.astype(numpy.int64)
    labels = xp.ascontiguousarray(labels)
    # A mean's gradient arrives broadcast (stride 0): read it in place rather than copy it.
    if grad.ndim != 1 or grad.strides[0] not in (0, grad.itemsize):
        grad = xp.ascontiguousarray(grad)
    grad_stride = grad.strides[0] // grad.itemsize if grad.ndim == 1 else 1
    base = grad if grad_stride else grad[:1]
    rows, classes = probabilities.shape
    grad_logits = xp.empty_like(probabilities)
    grid, block = blocks_for(probabilities.size)
    launcher.run(probabilities.dtype, grid, block, (probabilities, labels, base, numpy.int64(grad_stride),
                                                    grad_logits, numpy.int64(rows), numpy.int64(classes)))
    return grad_logits


register(Kernel("sparse_softmax_cross_entropy_backward", sparse_softmax_cross_entropy_backward_reference,
                SPARSE_SOFTMAX_CE_BACKWARD_SOURCE, _sparse_softmax_cross_entropy_backward_launch))

# ------------------------------------------- the mean loss and its gradient, one launch
SPARSE_SOFTMAX_CE_MEAN_SOURCE = ROW_SOFTMAX_SOURCE + r"""
extern "C" __global__ void sparse_softmax_cross_entropy_mean(const scalar_t* logits, const long long* labels,
                                                             scalar_t* loss, scalar_t* grad_logits, long long rows,
                                                             long long classes, int keep_gradient) {
    /* One block (blockDim.x a power of two, at most 1024): each thread takes rows in a stride, writes
       their gradient (softmax - one_hot) / rows, and the block sums the losses in a fixed order. */
    __shared__ scalar_t partial[1024];
    const scalar_t scale = (scalar_t)1 / (scalar_t)rows;
    scalar_t sum = 0;
    for (long long row = threadIdx.x; row < rows; row += blockDim.x) {
        const scalar_t* x = logits + row * classes;
        const scalar_t top = row_max(x, classes);
        const scalar_t total = row_exp_total(x, classes, top);
        const long long label = labels[row];
        const bool valid = label >= 0 && label < classes;
        /* An out-of-range label gives NaN (as TensorFlow on a GPU); labels are checked before. */
        sum += log(total) - (valid ? x[label] - top : (scalar_t)nan(""));
        if (keep_gradient) {
            scalar_t* g = grad_logits + row * classes;
            for (long long c = 0; c < classes; ++c) {
                scalar_t value = exp(x[c] - top) / total * scale;
                if (c == label) value -= scale;
                g[c] = value;
            }
        }
    }
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) loss[0] = partial[0] * scale;
}
"""

MEAN_MAX_ROWS = 1 << 16  # one block loops over the rows: beyond this the unfused per-row kernel + mean is faster


def sparse_softmax_cross_entropy_mean_reference(device, logits, labels, keep_gradient):
    """``(mean loss as a 0-d array, its gradient with respect to the 2-D
    logits or None)``: the per-row loss of ``sparse_softmax_cross_entropy``
    averaged, and ``(softmax - one_hot(label)) / rows``, computed as the
    per-row kernel's backward computes it for the mean's gradient ``1 / rows``."""
    xp = device.xp
    loss, probabilities = sparse_softmax_cross_entropy_reference(device, logits, labels, keep_gradient)
    mean = loss.mean()
    if not keep_gradient:
        return mean, None
    scale = 1.0 / logits.shape[0]
    probabilities *= scale
    valid, safe = _valid_labels(xp, labels, logits.shape[1])
    probabilities[xp.arange(labels.shape[0]), safe] -= valid * probabilities.dtype.type(scale)
    return mean, probabilities


def _sparse_softmax_cross_entropy_mean_launch(launcher, device, logits, labels, keep_gradient):
    xp = device.xp
    logits, labels = _kernel_operands(xp, logits, labels)
    rows, classes = logits.shape
    loss = xp.empty((), logits.dtype)
    grad_logits = xp.empty_like(logits) if keep_gradient else logits
    threads = 256 if rows <= 4096 else 1024
    launcher.run(logits.dtype, (1,), (threads,), (logits, labels, loss, grad_logits, numpy.int64(rows),
                                                  numpy.int64(classes), numpy.int32(keep_gradient)))
    return loss, (grad_logits if keep_gradient else None)


register(Kernel("sparse_softmax_cross_entropy_mean", sparse_softmax_cross_entropy_mean_reference,
                SPARSE_SOFTMAX_CE_MEAN_SOURCE, _sparse_softmax_cross_entropy_mean_launch))
