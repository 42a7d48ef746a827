"""keras.layers.ConvLSTM2D."""
from minikeras.layers.rnn.conv_lstm import _ConvLSTM

__all__ = ["ConvLSTM2D"]


class ConvLSTM2D(_ConvLSTM):
    """Convolutional LSTM over ``(batch, timesteps, height, width, channels)``.

    Args:
        filters: channels of the state (and output).
        kernel_size, strides, dilation_rate: an int or 2 ints (strides and
            dilation of the input convolution; the state's convolution has
            stride 1, padding "same", no dilation).
        padding: "valid" or "same", of the input convolution.
        data_format: "channels_last" (default; ``(batch, timesteps, height,
            width, channels)``) or "channels_first" (``(batch, timesteps,
            channels, height, width)``; states and outputs likewise).
        activation, recurrent_activation: default "tanh", "sigmoid".
        use_bias, unit_forget_bias: as LSTM.
        kernel_initializer, recurrent_initializer, bias_initializer,
            the regularizers and constraints: as LSTM.
        dropout, recurrent_dropout: rates of the input and state dropout
            in training (four masks per sequence, one per gate).
        seed: recorded in the config.
        return_sequences, return_state, go_backwards, stateful, unroll,
            zero_output_for_mask: as RNN.

    Call arguments: ``inputs``, ``initial_state`` ([h, c]), ``mask``
    ``(batch, timesteps)``, ``training``.

    Weights: kernel ``(kh, kw, channels, 4 * filters)``, recurrent_kernel
    ``(kh, kw, filters, 4 * filters)``, bias ``(4 * filters,)``.

    Example:
        >>> ConvLSTM2D(4, 3, padding="same")(np.zeros((2, 5, 8, 8, 3), "float32")).shape
        (2, 8, 8, 4)
    """

    rank = 2
