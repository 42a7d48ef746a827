"""``compile(jit_compile=True)`` on a GPU: each training step as one CUDA graph.

A small model's eager step on a GPU is bound by the host (dozens of kernel
launches, each ~10 us of Python and CuPy, for microseconds of arithmetic).
After warm-up, :class:`CapturedTrainStep` captures one whole training step
(forward, loss, backward, optimizer update, layer state updates, weight
constraints) into a graph (``device/graph.py``) on *static* input buffers
of the batch's shapes, and every later batch of those shapes is one upload
per input into the static buffers, one upload of the optimizer's per-step
scalars (``optimizers/_step_scalars.py``: learning rate, bias corrections,
recomputed on the host exactly as the eager step computes them) and one
graph launch. Random layers (Dropout, SpatialDropout, GaussianNoise,
GaussianDropout, AlphaDropout) draw inside the graph from counter streams
whose offsets the graph advances on the device (``kernels/captured_random.py``),
so every replay draws new masks. The weights, optimizer slots and layer state are updated in
place by the graph, so they need no copying; the step's loss and
predictions, which the next replay overwrites, are copied (one device copy
each) for the logs, which read them later as the eager step's logs do.

As PyTorch's ``torch.cuda.graphs`` does: eager warm-up steps first (lazy
kernel compilation, optimizer slots, cuBLAS workspaces are all made there,
not inside the capture), a side stream and a memory pool private to each
graph (``device/graph.py``), one graph per batch signature (the last partial
batch warms up and gets its own graph, at most ``MAX_GRAPHS`` of them), and
a recapture when the model's weights were replaced (``set_weights`` on a
layer that rebinds, a change of ``trainable``).

Where a step cannot be captured, fit runs the eager step instead, with one
warning that says why: the CPU (no graphs: ``jit_compile=True`` is the eager
step there, as Keras on a backend without XLA), a model on several devices,
an optimizer whose update needs per-step host values it does not route
through device scalars (anything but SGD, RMSprop, Adam and AdamW; EMA or
gradient accumulation), or a step that does in its body what a graph cannot
hold: a host read (``float(loss)``, data-dependent Python control flow), an
upload, a random draw that does not go through ``captured_random.draw``
(e.g. ``minikeras.random.normal`` in a custom layer, the image augmentation
layers: their generators are host-driven), work on another device. The
capture itself finds the last kind (GraphCaptureError).
"""
import warnings

import numpy

from minikeras.autograd import Tensor
from minikeras.device.graph import GraphCaptureError
from minikeras.layers.state_updates import collect_state_updates
from minikeras.models.running_logs import LazyLogs
from minikeras.kernels import captured_random
from minikeras.optimizers._step_scalars import StepScalars
from minikeras._support import deferred_checks
from minikeras._support.nest import flatten, pack_sequence_as
from minikeras._support.packing import unpack_x_y_sample_weight

WARMUP_STEPS = 2  # eager steps of a batch signature before it is captured
MAX_GRAPHS = 4  # batch signatures captured per compiled model; others run eagerly


class CapturedTrainStep:
    """The training step of ``model`` replayed from CUDA graphs (module docstring).

    It is the model's train function (``make_train_function``) under
    ``compile(jit_compile=True)``: called with the batches of one execution,
    it returns the last step's logs. It works through the model's public
    step hooks only: ``optimizer_step`` (what is captured),
    ``record_step_logs`` and ``flush_logs`` (the logs), ``run_train_step``
    (the eager step) and the optimizer's ``capturing``.

    Args:
        model: a compiled Model (``compile(jit_compile=True)`` makes one).
    """

    def __init__(self, model):
        self.model = model
        self._graphs = {}  # batch signature -> _StepGraph
        self._seen = {}  # batch signature -> eager steps run so far
        self.refusal = None  # why this model's steps run eagerly, once known

    def __call__(self, batches):
        """Run one execution (a list of batches); returns the last logs."""
        logs = None
        for data in batches:
            if self.refusal is None:
                self._check_train_step()
            if self.refusal:
                logs = self.model.run_train_step(data)
                continue
            x, y, sample_weight = unpack_x_y_sample_weight(data)
            self.run(x, y, sample_weight)
            logs = LazyLogs(self.model.get_metrics_result)
        return logs

    @property
    def graphs(self):
        """The captured graphs by batch signature (for tests and debugging)."""
        return dict(self._graphs)

    def run(self, x, y, sample_weight):
        """One training step on the batch; returns its loss (a Tensor)."""
        model = self.model
        if self.refusal is None and not model.weights:  # a model that builds on its first batch: not yet
            return self._eager(x, y, sample_weight)
        if self.refusal is None:
            self._refuse(_static_refusal(model))
        if self.refusal:
            return self._eager(x, y, sample_weight)
        leaves = flatten((x, y, sample_weight))
        signature = _signature(leaves)
        if signature is None:
            return self._eager(x, y, sample_weight)
        entry = self._graphs.get(signature)
        if entry is not None and not entry.still_valid():
            entry.release()
            del self._graphs[signature]
            self._seen[signature] = 0  # warm up again, as for a new signature
            entry = None
        if entry is None:
            seen = self._seen[signature] = self._seen.get(signature, 0) + 1
            if seen <= WARMUP_STEPS or len(self._graphs) >= MAX_GRAPHS:
                return self._eager(x, y, sample_weight)
            try:
                entry = _StepGraph.capture(model, (x, y, sample_weight), leaves)
            except GraphCaptureError as error:
                self._refuse(str(error))
                return self._eager(x, y, sample_weight)
            self._graphs[signature] = entry
        return entry.replay(x, y, sample_weight, leaves)

    def _check_train_step(self):
        """Warn once (and stay eager) when the model overrides ``train_step``:
        its code is its own, and only the built-in step is captured."""
        from minikeras.models.steps import TrainingSteps

        if type(self.model).train_step is not TrainingSteps.train_step:
            self._refuse("a custom train_step runs as written (only the built-in step is captured)")

    def release(self):
        """Drop every graph (a recompile or a new fit configuration)."""
        for entry in self._graphs.values():
            entry.release()
        self._graphs.clear()

    def __deepcopy__(self, memo):
        # A copied model gets its own (empty) graphs: a graph updates the
        # buffers it was captured on, which are the original's.
        import copy

        return CapturedTrainStep(copy.deepcopy(self.model, memo))

    def _eager(self, x, y, sample_weight):
        model = self.model
        with collect_state_updates():
            loss, y_pred, parts = model.optimizer_step(x, y, sample_weight)
        model.record_step_logs(loss, y, y_pred, sample_weight, parts)
        return loss

    def _refuse(self, reason):
        self.refusal = reason or ""
        if reason:
            self.release()
        if reason and reason is not _NO_GRAPHS:
            warnings.warn(f"jit_compile=True: the training step of '{self.model.name}' runs eagerly, not as a CUDA "
                          f"graph: {reason}", UserWarning, stacklevel=5)


# The CPU has no graphs: there jit_compile=True is the eager step, as
# documented (Keras on a backend without XLA), not a fallback to warn about.
_NO_GRAPHS = "the device has no graphs"


def _static_refusal(model):
    """Why ``model``'s step cannot be captured, judged before any capture (or None)."""
    weights = model.weights
    devices = {weight.device for weight in weights}
    if len(devices) > 1:
        return f"its weights live on several devices ({sorted(d.canonical for d in devices)})"
    (device,) = devices
    if not device.supports_graphs:
        return _NO_GRAPHS
    refusal = model.optimizer.capture_refusal()
    if refusal:
        return refusal
    dtypes = {weight.dtype for weight in model.trainable_weights}
    if len(dtypes) != 1 or numpy.dtype(next(iter(dtypes))).name not in ("float32", "float64"):
        return f"the trainable weights' dtypes {sorted(str(d) for d in dtypes)} are not one of float32, float64"
    return None


def _signature(leaves):
    """Shapes and dtypes of the batch's arrays, or None for a batch that is
    not all arrays (a graph's static buffers need them)."""
    signature = []
    for leaf in leaves:
        if leaf is None:  # no sample weights
            signature.append(None)
            continue
        if isinstance(leaf, Tensor):
            leaf = leaf.data
        shape, dtype = getattr(leaf, "shape", None), getattr(leaf, "dtype", None)
        if shape is None or dtype is None:
            return None
        signature.append((tuple(shape), numpy.dtype(dtype).str))
    return tuple(signature)


class _StepGraph:
    """One captured step: its graph, static inputs, outputs and scalars."""

    def __init__(self, model, device, graph, static, outputs, scalars, checks, weights):
        self.model, self.device, self.graph = model, device, graph
        self.static = static  # device arrays the batch is copied into
        self.loss, self.y_pred, self.parts = outputs
        self.scalars = scalars
        self.checks = checks  # label-range checks the captured step defers, re-deferred per replay
        self._weights = weights

    @classmethod
    def capture(cls, model, batch, leaves):
        device = model.weights[0].device
        model.flush_logs()  # pending checks and logs read now, not inside the capture
        with device.activate():
            static = [None if leaf is None else _static_copy(device, leaf) for leaf in leaves]
        arrays = [Tensor(array, device=device) if isinstance(leaf, Tensor) else array
                  for array, leaf in zip(static, leaves)]
        x, y, sample_weight = pack_sequence_as(batch, arrays)
        scalars = StepScalars(device, model.trainable_weights[0].dtype)
        checks_before = len(deferred_checks._pending)
        captured_random.prepare(device)  # the random layers' counter streams (their offsets on the device)
        try:
            # The capture runs nothing: the optimizer's step count is put back, the replay counts the step.
            with model.optimizer.capturing(scalars), device.capture() as capture:
                with collect_state_updates():
                    outputs = model.optimizer_step(x, y, sample_weight)
        finally:
            with deferred_checks._lock:
                checks = deferred_checks._pending[checks_before:]
                del deferred_checks._pending[checks_before:]
        return cls(model, device, capture.graph, static, outputs, scalars, checks, _weight_arrays(model))

    def still_valid(self):
        """Whether the model still trains the buffers the graph was captured on."""
        return _same_arrays(self._weights)

    def replay(self, x, y, sample_weight, leaves):
        device, model = self.device, self.model
        with device.activate():
            for static, leaf in zip(self.static, leaves):
                if static is not None:
                    _copy_in(device, static, leaf)
        self.scalars.refresh()
        self.graph.launch()
        model.optimizer.count_steps(1)
        with device.activate():  # the next replay overwrites the outputs: the logs keep copies
            loss = _copy_out(self.loss)
            y_pred = _copy_out(self.y_pred)
            parts = {name: _copy_out(part) for name, part in self.parts.items()}
            for checked_device, labels, classes, name, message in self.checks:
                deferred_checks.defer_label_range(name, checked_device, labels.copy(), classes, message)
        model.record_step_logs(loss, y, y_pred, sample_weight, parts)
        return loss

    def release(self):
        """Drop the graph and what it holds. The arrays made during the
        capture go first: a CuPy pool gives back to the driver only blocks
        nobody uses (``free_all_blocks``), and a pool dropped with blocks
        cached never gives them back (device/gpu.py)."""
        if self.graph is None:
            return
        self.loss = self.y_pred = None
        self.parts, self.checks, self.static, self._weights = {}, [], (), ()
        graph, self.graph = self.graph, None
        graph.release()

    def __del__(self):
        try:
            self.release()
        except Exception:  # noqa: BLE001  (interpreter shutdown: CuPy may be gone)
            pass


def _static_copy(device, leaf):
    """A device buffer of the leaf's shape and dtype, holding its values."""
    data = leaf.data if isinstance(leaf, Tensor) else leaf
    if device.owns(data):
        return device.copy_array(data)
    return device.asarray(numpy.ascontiguousarray(data) if isinstance(data, numpy.ndarray) else data)


def _copy_in(device, static, leaf):
    """The batch's values into a static buffer: an upload from the host, a
    copy on the device otherwise."""
    data = leaf.data if isinstance(leaf, Tensor) else leaf
    if isinstance(data, numpy.ndarray):
        # On the device's stream, asynchronously: a plain set() is a synchronous
        # cudaMemcpy on the legacy stream, which would wait for the last replay.
        static.set(numpy.ascontiguousarray(data, dtype=static.dtype), stream=device.stream)
    else:
        static[...] = data if device.owns(data) else device.asarray(data)


def _copy_out(value):
    if isinstance(value, Tensor):
        return Tensor(value.data.copy(), device=value.device)
    if isinstance(value, (list, tuple)):
        return type(value)(_copy_out(item) for item in value)
    if isinstance(value, dict):
        return {key: _copy_out(item) for key, item in value.items()}
    return value


def _weight_arrays(model):
    """``(holder, attribute, array)`` for every array the graph updates in place: the
    weights' data and the optimizer's slots (``optimizers/_state.py``). Read
    once at capture: walking the layers for ``model.weights`` every step
    would cost more host time than the replay (a change of ``trainable``
    needs a recompile, as in Keras)."""
    return [(weight, "data", weight.data) for weight in model.weights] + [
        (entry, "array", entry.array) for entry in model.optimizer.state_entries()]


def _same_arrays(watched):
    """Whether every holder still holds the array the graph was captured on."""
    return all(getattr(holder, attribute) is array for holder, attribute, array in watched)
