"""Convolutional LSTM (Shi et al., 2015): ConvLSTM1D, ConvLSTM2D, ConvLSTM3D.

An LSTM whose states are feature maps and whose two matrix products are
convolutions. Per step, with gates packed i, f, c, o along the last axis of
``kernel`` (k..., channels, 4 * filters) and ``recurrent_kernel``
(k..., filters, 4 * filters)::

    z = conv(x_t, kernel, strides, padding, dilation) + bias
        + conv(h, recurrent_kernel, strides=1, padding="same")
    i, f, o = recurrent_activation(z_i, z_f, z_o); g = activation(z_c)
    c = f * c + i * g;  h = o * activation(c)

The input convolution does not depend on the state, so it runs once over
every step (the time axis folded into the batch) before the loop; the loop
only convolves the state. Packing the gates into one convolution computes
what Keras's four per-gate convolutions compute, since each gate's output
channels read only their own kernel slice. Input dropout draws four masks
(one per gate, as Keras's ``dropout_mask_count = 4``), so with dropout the
input convolution runs per gate. Weights (kernel, recurrent_kernel, bias)
and ``get_config`` are Keras's, and Keras files keep them under the layer's
``cell`` (saving/keras_weights_h5.py). A channels-first layer transposes its
input once to channels last and its outputs back.
"""
from minikeras import activations, ops
from minikeras.backend.dtypes import is_float_dtype
from minikeras.layers.base import Layer
from minikeras.layers.convolutional.base_conv import _conv_output_length, _int_tuple
from minikeras.layers.core.dense import _add_activity_loss
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.rnn.lstm import _UnitForgetBias
from minikeras.layers.rnn.rnn_base import (_RECURRENT_INITIALIZERS, _RECURRENT_PENALTIES, _rate, _recurrent_config,
                                           _sequence_flags_config, _set_recurrent_arguments)
from minikeras.layers.rnn.rnn_state import StatefulStates
from minikeras._support.argument_validation import standardize_padding, validate_int


def _data_format(class_name, value):
    if value in (None, "channels_last", "channels_first"):
        return value or "channels_last"
    raise ValueError(f"{class_name}: data_format must be 'channels_last' or 'channels_first', received {value!r}.")


class _ConvLSTM(StatefulStates, Layer):
    """What ConvLSTM1D/2D/3D share; subclasses set ``rank``."""

    rank = 2

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, unroll=False,
                 zero_output_for_mask=False, **kwargs):
        super().__init__(**kwargs)
        name, rank = type(self).__name__, self.rank
        self.filters = validate_int(name, "filters", filters, minimum=1)
        self.kernel_size = _int_tuple(name, "kernel_size", kernel_size, rank)
        self.strides = _int_tuple(name, "strides", strides, rank)
        self.padding = standardize_padding(name, padding)
        self.data_format = _data_format(name, data_format)
        self.dilation_rate = _int_tuple(name, "dilation_rate", dilation_rate, rank)
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(f"{name}: strides > 1 cannot be combined with dilation_rate > 1 (as in Keras), "
                             f"received strides={self.strides}, dilation_rate={self.dilation_rate}.")
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = bool(use_bias)
        self.unit_forget_bias = bool(unit_forget_bias)
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
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.input_spec = InputSpec(ndim=rank + 3)
        self.kernel = self.recurrent_kernel = self.bias = None

    # --------------------------------------------------------- weights
    def _last(self, shape):
        """A shape in the channels-last order the computation uses."""
        shape = tuple(shape)
        if self.data_format == "channels_first" and len(shape) >= 3:
            return shape[:-self.rank - 1] + shape[-self.rank:] + (shape[-self.rank - 1],)
        return shape

    def _first(self, shape):
        """A channels-last shape in the layer's data_format."""
        shape = tuple(shape)
        if self.data_format == "channels_first":
            return shape[:-self.rank - 1] + (shape[-1],) + shape[-self.rank - 1:-1]
        return shape

    def _transposed(self, tensor, to_last):
        """``tensor`` (channels at one end of its last rank + 1 axes) moved to the other layout."""
        if self.data_format != "channels_first":
            return tensor
        lead = tensor.ndim - self.rank - 1
        spatial = list(range(lead + 1, tensor.ndim)) if to_last else list(range(lead, tensor.ndim - 1))
        channel = [lead] if to_last else [tensor.ndim - 1]
        order = list(range(lead)) + (spatial + channel if to_last else channel + spatial)
        return ops.transpose(tensor, tuple(order))

    def _check_shape(self, input_shape):
        if input_shape is not None:
            input_shape = self._last(input_shape)
        if input_shape is None or len(input_shape) != self.rank + 3 or None in tuple(input_shape)[2:]:
            raise ValueError(
                f"Layer '{self.name}' ({type(self).__name__}) expects inputs of shape (batch, timesteps, "
                f"{self.rank} spatial axes, channels) with known spatial axes and channels, received input shape "
                f"{None if input_shape is None else tuple(input_shape)}."
            )

    def build(self, input_shape):
        self._check_shape(input_shape)
        input_shape = self._last(input_shape)
        channels = int(input_shape[-1])
        width = 4 * self.filters
        self.kernel = self.add_weight("kernel", self.kernel_size + (channels, width),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel", self.kernel_size + (self.filters, width), initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer, constraint=self.recurrent_constraint)
        if self.use_bias:
            bias_initializer = _UnitForgetBias(self.bias_initializer, self.filters) if self.unit_forget_bias \
                else self.bias_initializer
            self.bias = self.add_weight("bias", (width,), initializer=bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.input_spec = InputSpec(ndim=self.rank + 3, axes={-1 if self.data_format == "channels_last" else 2:
                                                               channels})
        self.built = True

    def _state_shape(self, input_shape):
        spatial = tuple(_conv_output_length(size, k, s, d, self.padding) for size, k, s, d in
                        zip(input_shape[2:-1], self.kernel_size, self.strides, self.dilation_rate))
        return (input_shape[0],) + spatial + (self.filters,)

    # ------------------------------------------------------------ call
    def _input_projection(self, inputs, training):
        """Every step's input convolution plus bias, ``(batch, steps, out..., 4f)``."""
        batch, steps = inputs.shape[0], inputs.shape[1]
        frames = ops.reshape(inputs, (batch * steps,) + tuple(inputs.shape[2:]))
        if training and self.dropout > 0:
            # Four masks per sequence, one per gate, shared by every step (Keras's dropout_mask_count = 4).
            ones = ops.ones((batch,) + tuple(inputs.shape[2:]), dtype=inputs.dtype, device=inputs.device)
            gates = []
            for kernel in ops.split(self.kernel, 4, axis=-1):
                mask = ops.expand_dims(ops.dropout(ones, self.dropout), 1)
                dropped = ops.reshape(inputs * mask, tuple(frames.shape))
                gates.append(self._convolve(dropped, kernel))
            projected = ops.concatenate(gates, axis=-1)
        else:
            projected = self._convolve(frames, self.kernel)
        if self.use_bias:
            projected = projected + self.bias
        return ops.reshape(projected, (batch, steps) + tuple(projected.shape[1:]))

    def _convolve(self, frames, kernel):
        return ops.conv(frames, kernel, self.strides, self.padding, "channels_last", self.dilation_rate)

    def _recurrent(self, h, recurrent_masks):
        if recurrent_masks is None:
            return ops.conv(h, self.recurrent_kernel, 1, "same", "channels_last")
        kernels = ops.split(self.recurrent_kernel, 4, axis=-1)
        return ops.concatenate([ops.conv(h * mask, kernel, 1, "same", "channels_last")
                                for mask, kernel in zip(recurrent_masks, kernels)], axis=-1)

    def _step(self, projected, h, c, recurrent_masks):
        z = projected + self._recurrent(h, recurrent_masks)
        z_i, z_f, z_c, z_o = ops.split(z, 4, axis=-1)
        c = self.recurrent_activation(z_f) * c + self.recurrent_activation(z_i) * self.activation(z_c)
        h = self.recurrent_activation(z_o) * self.activation(c)
        return h, c

    def _initial_states(self, initial_state, state_shape, inputs):
        if initial_state is None:
            zeros = ops.zeros(state_shape, dtype=inputs.dtype, device=inputs.device)
            return [zeros, zeros]
        states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
        states = [self._convert_input(state) for state in states]
        if len(states) != 2 or any(tuple(state.shape) != state_shape for state in states):
            raise ValueError(f"Layer '{self.name}' ({type(self).__name__}) expects initial_state [h, c], each of "
                             f"shape {state_shape}, received {[tuple(state.shape) for state in states]}.")
        return states

    def _step_mask(self, mask, batch, steps):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        if mask is None:
            return None
        mask = self._convert_input(mask)
        if tuple(mask.shape) != (batch, steps):
            raise ValueError(f"Layer '{self.name}' ({type(self).__name__}) expects a mask of shape (batch, "
                             f"timesteps) = {(batch, steps)}, received shape {tuple(mask.shape)}.")
        if mask.dtype.kind != "b":
            mask = ops.not_equal(mask, 0)
        return ops.reshape(mask, (batch, steps) + (1,) * (self.rank + 1))

    def call(self, inputs, initial_state=None, mask=None, training=None):
        if not is_float_dtype(inputs.dtype):
            inputs = ops.cast(inputs, self.compute_dtype)
        self._check_shape(tuple(inputs.shape))
        inputs = self._transposed(inputs, to_last=True)
        batch, steps = inputs.shape[0], inputs.shape[1]
        if steps == 0:
            raise ValueError(f"Layer '{self.name}' received a sequence with 0 timesteps (shape {inputs.shape}).")
        state_shape = self._state_shape(tuple(inputs.shape))
        initial_state = self._stateful_initial_states(initial_state, batch)  # in the layer's data_format
        if initial_state is not None:
            initial_state = [self._transposed(self._convert_input(state), to_last=True) for state in
                             (initial_state if isinstance(initial_state, (list, tuple)) else [initial_state])]
        h, c = self._initial_states(initial_state, state_shape, inputs)
        projected = self._input_projection(inputs, training)
        recurrent_masks = None
        if training and self.recurrent_dropout > 0:
            ones = ops.ones(state_shape, dtype=inputs.dtype, device=inputs.device)
            recurrent_masks = [ops.dropout(ones, self.recurrent_dropout) for _ in range(4)]
        step_mask = self._step_mask(mask, batch, steps)
        outputs, output = [], None
        for t in (range(steps - 1, -1, -1) if self.go_backwards else range(steps)):
            new_h, new_c = self._step(projected[:, t], h, c, recurrent_masks)
            sequence_output = new_h
            if step_mask is not None:
                keep = step_mask[:, t]
                if self.zero_output_for_mask:
                    sequence_output = ops.where(keep, new_h, 0.0)
                new_h, new_c = ops.where(keep, new_h, h), ops.where(keep, new_c, c)
                if not self.zero_output_for_mask:
                    sequence_output = new_h
            h, c = new_h, new_c
            if self.return_sequences:
                outputs.append(sequence_output)
        output = ops.stack(outputs, axis=1) if self.return_sequences else h
        output, h, c = (self._transposed(value, to_last=False) for value in (output, h, c))
        self._keep_final_states([h, c])
        _add_activity_loss(self, output)
        return [output, h, c] if self.return_state else output

    def compute_output_shape(self, input_shape):
        state = self._first(self._state_shape(self._last(input_shape)))
        output = (state[0], input_shape[1]) + state[1:] if self.return_sequences else state
        return [output, state, state] if self.return_state else output

    def compute_mask(self, inputs, previous_mask):
        if isinstance(previous_mask, (list, tuple)):
            previous_mask = previous_mask[0]
        output_mask = previous_mask if self.return_sequences else None
        return [output_mask, None, None] if self.return_state else output_mask

    def get_config(self):
        return {
            **super().get_config(),
            **_sequence_flags_config(self),
            "zero_output_for_mask": self.zero_output_for_mask,
            "filters": self.filters,
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "data_format": self.data_format,
            "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation),
            "recurrent_activation": activations.serialize(self.recurrent_activation),
            "use_bias": self.use_bias,
            **_recurrent_config(self, _RECURRENT_INITIALIZERS),
            "unit_forget_bias": self.unit_forget_bias,
            **_recurrent_config(self, _RECURRENT_PENALTIES),
            "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "seed": self.seed,
        }
