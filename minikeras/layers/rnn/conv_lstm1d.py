"""keras.layers.ConvLSTM1D."""
from minikeras.layers.rnn.conv_lstm import _ConvLSTM

__all__ = ["ConvLSTM1D"]


class ConvLSTM1D(_ConvLSTM):
    """Convolutional LSTM over ``(batch, timesteps, steps, channels)``.

    Args: as :class:`ConvLSTM2D` with 1-D sizes. Example:
        >>> ConvLSTM1D(4, 3)(np.zeros((2, 5, 8, 3), "float32")).shape
        (2, 6, 4)
    """

    rank = 1
