"""``torch.nn.modules.rnn``'s names, for code that imports them from there: the recurrent layers and cells with their
bases ``RNNBase`` and ``RNNCellBase``."""

from __future__ import annotations

from ..recurrent import GRU, LSTM, RNN, RNNBase
from ..recurrent_cells import GRUCell, LSTMCell, RNNCell, RNNCellBase

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
