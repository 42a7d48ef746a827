"""Op determinism, as TensorFlow: fast algorithms by default, deterministic
ones everywhere after ``enable_op_determinism()``.

On a GPU some of the fastest algorithms sum with atomic additions, whose
order changes from run to run, so a float sum's last bits do too: the same
training run gives slightly different weights each time. By default
minikeras takes them where it has them (TensorFlow's default):

- scatter-adds of floating values (the gradients of Embedding, ``take``,
  ``gather`` and fancy indexing, ``segment_sum``): CuPy's ``add.at``, one
  ``atomicAdd`` per element (``device/scatter.py``);
- cuDNN's convolution engines whose numerical notes include
  ``CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC`` (the atomic filter gradient,
  ``device/cudnn.py``).

``mk.config.experimental.enable_op_determinism()`` (TensorFlow's name; like
TensorFlow, minikeras has no public way back) makes every op deterministic:
scatter-adds become a sort and a segmented scan (the same order of additions
every run), and cuDNN keeps only engines without that note (the filter
gradient then stays im2col + cuBLAS, faster than cuDNN's deterministic
engines on an H200). Two runs from the same seeds then give bit-identical
weights, eagerly or in a CUDA graph. The CPU is deterministic either way.
"""
__all__ = ["enable_op_determinism"]

_state = {"enabled": False}  # TensorFlow's default


def enable_op_determinism():
    """Make every op deterministic on every device (TensorFlow's
    ``tf.config.experimental.enable_op_determinism``): GPU scatter-adds
    without atomics, cuDNN engines without non-deterministic notes. There is
    no public way back, as in TensorFlow.

    Example:
        >>> import minikeras as mk
        >>> mk.config.experimental.enable_op_determinism()  # doctest: +SKIP
    """
    _state["enabled"] = True


def enabled():
    """True after ``enable_op_determinism()`` (what the library's GPU paths read)."""
    return _state["enabled"]


def _set_for_tests(value):
    """Tests only: turn determinism off again (TensorFlow keeps its
    ``disable_op_determinism`` private too)."""
    _state["enabled"] = bool(value)
