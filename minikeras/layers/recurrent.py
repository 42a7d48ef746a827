"""Recurrent layers: SimpleRNN, LSTM, GRU (Keras's math, weights and arguments).

Each lives in its own module (rnn_simple.py, rnn_lstm.py, rnn_gru.py) on the
shared base of rnn_base.py; this module gathers them.
"""
from minikeras.layers.rnn_gru import GRU
from minikeras.layers.rnn_lstm import LSTM
from minikeras.layers.rnn_simple import SimpleRNN
from minikeras.layers.rnn_cells import GRUCell, LSTMCell, SimpleRNNCell
from minikeras.layers.rnn_generic import RNN

__all__ = ["SimpleRNN", "LSTM", "GRU", "SimpleRNNCell", "LSTMCell", "GRUCell", "RNN"]
