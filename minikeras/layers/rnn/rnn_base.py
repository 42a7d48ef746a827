"""What SimpleRNN, LSTM and GRU share: arguments, weights, the call
(initial states, dropout, go_backwards, return_sequences/return_state) and
the two ways a sequence is run.

The fast way is one Function per sequence (in simple_rnn.py, lstm.py,
gru.py): the input projection ``x @ kernel`` of every step is one matrix
product before the loop, each step is then ``h @ recurrent_kernel`` plus
in-place elementwise work on raw arrays, and backward is hand-written
back-propagation through time over the saved gates, ending with one matrix
product per weight. It is used whenever both activations are implemented
on raw arrays (see ``_fused_kind``) and no recurrent dropout applies.
Measured on the 2-core CPU machine (single-threaded BLAS, forward and
backward of LSTM(64) on a (128, 50, 32) batch): about 20 ms fused against
about 29 ms composed from ops; a training step 34 ms against 60 ms.

The general way composes ``minikeras.ops`` step by step (any activation,
recurrent dropout); autograd differentiates it. Both compute the same math,
which the tests check against each other and against tf.keras.
"""
import numbers

import numpy

from minikeras import activations, constraints, initializers, ops, regularizers
from minikeras.autograd import Tensor
from minikeras.autograd.tensor import array_of
from minikeras.backend.dtypes import is_float_dtype
from minikeras.device import to_host
from minikeras.layers.base import Layer
from minikeras.layers.core.dense import _add_activity_loss
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.rnn.rnn_state import StatefulStates


# ------------------------------------------- activations on raw arrays
def _fused_kind(activation):
    """The name of ``activation`` when the fused path implements it, else None."""
    kinds = {activations.tanh: "tanh", activations.sigmoid: "sigmoid", activations.relu: "relu",
             activations.linear: "linear", activations.hard_sigmoid: "hard_sigmoid"}
    return kinds.get(activation)


def _rate(class_name, name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value < 1:
        raise ValueError(f"{class_name}: {name} must be a number in [0, 1), received {name}={value!r}.")
    return float(value)


# The weight arguments every recurrent layer (RNNs and ConvLSTM) takes, in Keras's order: initializers,
# then regularizers and constraints, each resolved by its module's get/serialize.
_RECURRENT_INITIALIZERS = (("kernel_initializer", initializers), ("recurrent_initializer", initializers),
                           ("bias_initializer", initializers))
_RECURRENT_PENALTIES = (("kernel_regularizer", regularizers), ("recurrent_regularizer", regularizers),
                        ("bias_regularizer", regularizers), ("activity_regularizer", regularizers),
                        ("kernel_constraint", constraints), ("recurrent_constraint", constraints),
                        ("bias_constraint", constraints))
_SEQUENCE_FLAGS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll")


def _set_recurrent_arguments(layer, **arguments):
    """Store the recurrent weight arguments (resolved, in Keras's order) and
    the sequence flags (as bools) that ``arguments`` names on ``layer``.
    ``unroll`` is accepted as Keras does; the loop is always a Python loop."""
    for argument, module in _RECURRENT_INITIALIZERS + _RECURRENT_PENALTIES:
        setattr(layer, argument, module.get(arguments.pop(argument)))
    for flag in _SEQUENCE_FLAGS:
        setattr(layer, flag, bool(arguments.pop(flag)))
    if arguments:
        raise TypeError(f"_set_recurrent_arguments: unexpected {sorted(arguments)}.")


def _recurrent_config(layer, entries):
    """The get_config entries of ``entries`` (one of the tables above) for ``layer``."""
    return {argument: module.serialize(getattr(layer, argument)) for argument, module in entries}


def _sequence_flags_config(layer):
    return {flag: getattr(layer, flag) for flag in _SEQUENCE_FLAGS}


class RecurrentBase(StatefulStates, Layer):
    """Base of SimpleRNN, LSTM and GRU (Keras arguments; see the subclasses).

    Subclasses set ``gate_count`` and ``state_count``, and implement
    ``_bias_shape``, ``_run_fused`` and ``_step``.
    """

    gate_count = 1
    state_count = 1
    #: With a mask and return_sequences, masked steps output zeros instead of
    #: repeating the previous output (Bidirectional sets it, as Keras).
    zero_output_for_mask = False

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, seed=None, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        if isinstance(units, bool) or not isinstance(units, (int, numpy.integer)) or units <= 0:
            raise ValueError(f"{name}: units must be a positive integer, received units={units!r}.")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        _set_recurrent_arguments(
            self, kernel_initializer=kernel_initializer, recurrent_initializer=recurrent_initializer,
            bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
            recurrent_regularizer=recurrent_regularizer, bias_regularizer=bias_regularizer,
            activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
            recurrent_constraint=recurrent_constraint, bias_constraint=bias_constraint,
            return_sequences=return_sequences, return_state=return_state, go_backwards=go_backwards,
            stateful=stateful, unroll=unroll)
        self.dropout = _rate(name, "dropout", dropout)
        self.recurrent_dropout = _rate(name, "recurrent_dropout", recurrent_dropout)
        self.seed = seed
        self.input_spec = InputSpec(ndim=3)
        self.kernel = self.recurrent_kernel = self.bias = None

    # --------------------------------------------------------- weights
    def _bias_shape(self):
        return (self.gate_count * self.units,)

    def _bias_initializer(self):
        return self.bias_initializer

    def build(self, input_shape):
        if input_shape is None or len(input_shape) != 3:
            raise ValueError(
                f"Layer '{self.name}' ({type(self).__name__}) expects inputs of shape (batch, timesteps, features), "
                f"received input shape {None if input_shape is None else tuple(input_shape)}."
            )
        features = input_shape[-1]
        if features is None:
            raise ValueError(f"Layer '{self.name}': the feature axis (last) must be known, received {input_shape}.")
        width = self.gate_count * self.units
        self.kernel = self.add_weight("kernel", (features, width), initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel", (self.units, width), initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer, constraint=self.recurrent_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", self._bias_shape(), initializer=self._bias_initializer(),
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.input_spec = InputSpec(ndim=3, axes={-1: int(features)})
        self.built = True

    # ------------------------------------------------------------ call
    def call(self, inputs, initial_state=None, mask=None, training=None):
        if not is_float_dtype(inputs.dtype):
            inputs = ops.cast(inputs, self.compute_dtype)
        batch, steps = inputs.shape[0], inputs.shape[1]
        if steps == 0:
            raise ValueError(f"Layer '{self.name}' received a sequence with 0 timesteps (shape {inputs.shape}).")
        states = self._initial_states(self._stateful_initial_states(initial_state, batch), batch)
        if training and self.dropout > 0:
            # One mask per sequence, shared by every step (as Keras).
            inputs = ops.dropout(inputs, self.dropout, noise_shape=(batch, 1, inputs.shape[2]))
        recurrent_mask = None
        if training and self.recurrent_dropout > 0:
            ones = ops.ones((batch, self.units), dtype=inputs.dtype, device=inputs.device)
            recurrent_mask = ops.dropout(ones, self.recurrent_dropout)
        kinds = self._fused_kinds()
        step_mask = self._step_mask(mask, batch, steps)
        if recurrent_mask is None and step_mask is None and None not in kinds:
            output, final_states = self._run_fused(inputs, states, kinds)
        else:
            output, final_states = self._run_steps(inputs, states, recurrent_mask, step_mask)
        self._keep_final_states(final_states)
        _add_activity_loss(self, output)
        if self.return_state:
            return [output] + list(final_states)
        return output

    def _fused_kinds(self):
        return (_fused_kind(self.activation),)

    def _initial_states(self, initial_state, batch):
        """The initial states as Tensors, or Nones for zeros."""
        if initial_state is None:
            return [None] * self.state_count
        if isinstance(initial_state, (list, tuple)):
            states = list(initial_state)
        else:
            states = [initial_state]
        if len(states) != self.state_count:
            raise ValueError(
                f"Layer '{self.name}' ({type(self).__name__}) expects {self.state_count} initial state(s), "
                f"received {len(states)}."
            )
        converted = []
        for index, state in enumerate(states):
            state = self._convert_input(state)
            if not isinstance(state, Tensor) or tuple(state.shape) != (batch, self.units):
                shape = getattr(state, "shape", None)
                raise ValueError(
                    f"Layer '{self.name}': initial state {index} must have shape (batch, units) = "
                    f"{(batch, self.units)}, received shape {None if shape is None else tuple(shape)}."
                )
            converted.append(state)
        return converted

    def _step_mask(self, mask, batch, steps):
        """The ``(batch, timesteps)`` mask as a ``(batch, timesteps, 1)`` bool
        Tensor, or None (no mask, or nothing masked)."""
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        if mask is None:
            return None
        mask = self._convert_input(mask)
        if tuple(mask.shape) != (batch, steps):
            raise ValueError(
                f"Layer '{self.name}' ({type(self).__name__}) expects a mask of shape (batch, timesteps) = "
                f"{(batch, steps)}, received shape {tuple(mask.shape)}."
            )
        if mask.dtype.kind != "b":
            mask = ops.not_equal(mask, 0)
        if bool(mask.numpy().all()):
            return None  # nothing masked: the fused path computes the same
        return ops.expand_dims(mask, -1)

    def compute_mask(self, inputs, previous_mask):
        """The input's mask when returning sequences (Keras); states carry none."""
        if isinstance(previous_mask, (list, tuple)):
            previous_mask = previous_mask[0]
        output_mask = previous_mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None] * self.state_count
        return output_mask

    def _run_steps(self, inputs, states, recurrent_mask, step_mask=None):
        """The general path: ``_step`` composed from ops, autograd differentiates.

        With a mask, a masked step leaves the states as they were and
        repeats the previous output (zeros before the first kept step), as
        Keras's RNNs do: padding never changes what the layer returns."""
        batch, steps = inputs.shape[0], inputs.shape[1]
        projected = ops.matmul(inputs, self.kernel)
        input_bias = self._input_bias()
        if input_bias is not None:
            projected = projected + input_bias
        pieces = ops.split(projected, steps, axis=1) if steps > 1 else [projected]
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        zeros = None
        if any(state is None for state in states):
            zeros = ops.zeros((batch, self.units), dtype=inputs.dtype, device=inputs.device)
        states = [zeros if state is None else state for state in states]
        context = self._step_context()
        outputs = []
        previous_output = zeros if zeros is not None else ops.zeros((batch, self.units), dtype=inputs.dtype,
                                                                     device=inputs.device)
        for t in order:
            step_input = ops.reshape(pieces[t], (batch, -1))
            output, new_states = self._step(step_input, states, recurrent_mask, context)
            sequence_output = output
            if step_mask is not None:
                keep = step_mask[:, t]
                zero_output = ops.where(keep, output, 0.0) if self.zero_output_for_mask else None
                output = ops.where(keep, output, previous_output)
                new_states = [ops.where(keep, new, old) for new, old in zip(new_states, states)]
                previous_output = output
                sequence_output = output if zero_output is None else zero_output
            states = new_states
            if self.return_sequences:
                outputs.append(sequence_output)
        if self.return_sequences:
            return ops.stack(outputs, axis=1), states
        return output, states

    def _input_bias(self):
        return self.bias

    def _step_context(self):
        """Per-call values the steps share (e.g. weight slices), computed once."""
        return None

    def compute_output_shape(self, input_shape):
        output = (input_shape[0], input_shape[1], self.units) if self.return_sequences else \
            (input_shape[0], self.units)
        if self.return_state:
            return [output] + [(input_shape[0], self.units)] * self.state_count
        return output

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            **_recurrent_config(self, _RECURRENT_INITIALIZERS + _RECURRENT_PENALTIES),
            "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
            **_sequence_flags_config(self),
            "seed": self.seed,
        }


def host_array(value):
    """A weight initializer's result as a host array (for composing biases)."""
    return to_host(array_of(value))
