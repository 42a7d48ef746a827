"""keras.layers.ConvLSTM3D."""
from minikeras.layers.rnn.conv_lstm import _ConvLSTM

__all__ = ["ConvLSTM3D"]


class ConvLSTM3D(_ConvLSTM):
    """Convolutional LSTM over ``(batch, timesteps, depth, height, width,
    channels)``; args as :class:`ConvLSTM2D` with 3-D sizes."""

    rank = 3
