"""Multi-layer recurrent layers ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` with torch's parameters, init, signatures and
results (the cells ``nn.RNNCell``, ``nn.LSTMCell``, ``nn.GRUCell`` live in :mod:`.recurrent_cells`).

Each layer and direction projects its whole input sequence with one matmul (``x W_ih^T + b_ih`` for every time
step), then steps through time in Python with differentiable Tensor ops, so autodiff runs through all of it.
Layer ``l`` of direction ``d`` has ``weight_ih_l{l}``, ``weight_hh_l{l}``, ``bias_ih_l{l}``, ``bias_hh_l{l}``, with
the suffix ``_reverse`` for the backward direction; states are ordered (layer 0 forward, layer 0 backward, layer 1
forward, ...) as in torch.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

from ..creation import empty, zeros
from ..errors import ShapeError
from ..module import Module, Parameter
from ..tensor import Tensor
from ..tensor_join import cat, stack
from .common import factory
from .dropout import dropout as _dropout
from .linear import linear
from .recurrent_cells import (
    GRUCell,
    LSTMCell,
    RNNCell,
    RNNCellBase,
    State,
    Step,
    check_dtype,
    check_tensor,
    gru_step,
    init_recurrent,
    lstm_step,
    rnn_relu_step,
    rnn_tanh_step,
)

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
_STEPS: dict[str, Step] = {"RNN_TANH": rnn_tanh_step, "RNN_RELU": rnn_relu_step, "LSTM": lstm_step, "GRU": gru_step}


def _check_int(name: str, what: str, value: Any, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: {what} should be of type int, got: {type(value).__name__}")
    if value < low:
        raise ValueError(f"{name}: {what} must be {'greater than zero' if low else 'non-negative'}, got {value}")


class RNNBase(Module):
    """What RNN, LSTM and GRU share: parameters per layer and direction, torch's checks, init, repr and the time
    loop. ``mode`` is one of ``'RNN_TANH'``, ``'RNN_RELU'``, ``'LSTM'``, ``'GRU'``."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None, *, backend: Any = None):
        super().__init__()
        name = type(self).__name__
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real) or not 0 <= dropout <= 1:
            raise ValueError(f"{name}: dropout should be a number in range [0, 1] representing the probability of an "
                             f"element being zeroed, got {dropout!r}")
        for what, flag in (("bias", bias), ("batch_first", batch_first), ("bidirectional", bidirectional)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name}: {what} should be of type bool, got: {type(flag).__name__}")
        _check_int(name, "input_size", input_size, 1)
        _check_int(name, "hidden_size", hidden_size, 1)
        _check_int(name, "num_layers", num_layers, 1)
        _check_int(name, "proj_size", proj_size, 0)
        if proj_size >= hidden_size:
            raise ValueError(f"{name}: proj_size has to be smaller than hidden_size, got {proj_size} >= {hidden_size}")
        if proj_size:
            raise NotImplementedError(f"{name}: proj_size > 0 (LSTM with projections) is not supported, got proj_size={proj_size}")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                          f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        self.mode: str = mode
        self.input_size: int = input_size
        self.hidden_size: int = hidden_size
        self.num_layers: int = num_layers
        self.bias: bool = bias
        self.batch_first: bool = batch_first
        self.dropout: float = float(dropout)
        self.bidirectional: bool = bidirectional
        self.proj_size: int = proj_size
        directions = 2 if bidirectional else 1
        rows = _GATES[mode] * hidden_size
        kw = factory(device, dtype, backend)
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            width = input_size if layer == 0 else hidden_size * directions
            for suffix in ("", "_reverse")[:directions]:
                shapes = {"weight_ih": (rows, width), "weight_hh": (rows, hidden_size)}
                if bias:
                    shapes |= {"bias_ih": (rows,), "bias_hh": (rows,)}
                names = [f"{kind}_l{layer}{suffix}" for kind in shapes]
                for param_name, shape in zip(names, shapes.values()):
                    self.register_parameter(param_name, Parameter(empty(*shape, **kw)))
                self._flat_weights_names += names
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as torch."""
        init_recurrent(self, self.hidden_size)

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters per layer and direction: [[w_ih, w_hh, b_ih, b_hh], ...] (torch's order)."""
        return [[self._parameters[n] for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op (torch's cuDNN weight packing); kept so torch code calling it runs unchanged."""

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _weights(self, layer: int, suffix: str) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        p = self._parameters
        return (p[f"weight_ih_l{layer}{suffix}"], p[f"weight_hh_l{layer}{suffix}"], p.get(f"bias_ih_l{layer}{suffix}"),
                p.get(f"bias_hh_l{layer}{suffix}"))

    def _run(self, input: Tensor, hx: State | None, names: tuple[str, ...]) -> tuple[Tensor, State]:  # noqa: A002
        """Check ``input`` and the initial states named ``names`` (``hx``, or ``h_0`` and ``c_0``), run every layer and
        direction, and give (output, final states) in the caller's layout (batch_first, unbatched)."""
        name = type(self).__name__
        input = check_tensor(name, "input", input)  # noqa: A001
        if input.dims not in (2, 3):
            layout = "(N, L, H_in)" if self.batch_first else "(L, N, H_in)"
            raise ShapeError(f"{name}: expected input to be 2-D (L, H_in) unbatched or 3-D {layout} batched, "
                             f"got {input.dims}-D shape {input.shape}")
        check_dtype(name, "input", input, self._parameters["weight_ih_l0"])
        if input.shape[-1] != self.input_size:
            raise ShapeError(f"{name}: input.size(-1) must be equal to input_size {self.input_size}, "
                             f"got input of shape {input.shape}")
        batched = input.dims == 3
        x = (input.transpose(0, 1) if self.batch_first else input) if batched else input.unsqueeze(1)  # (L, N, H_in)
        if x.shape[0] == 0:
            raise ShapeError(f"{name}: expected sequence length to be larger than 0, got input of shape {input.shape}")
        count = self.num_layers * (2 if self.bidirectional else 1)
        expected = (count, x.shape[1], self.hidden_size)
        if hx is not None:
            want = expected if batched else (count, self.hidden_size)
            for what, h in zip(names, hx):
                if check_tensor(name, what, h).shape != want:
                    raise ShapeError(f"{name}: expected {what} of shape {want} for input of shape {input.shape}, got {h.shape}")
                check_dtype(name, what, h, self._parameters["weight_ih_l0"])
            hx = hx if batched else tuple(h.unsqueeze(1) for h in hx)
        output, final = self._layers(x, hx, len(names))
        if not batched:
            return output.squeeze(1), tuple(h.squeeze(1) for h in final)
        return (output.transpose(0, 1).contiguous() if self.batch_first else output), final  # torch's layout

    def _layers(self, x: Tensor, hx: State | None, states: int) -> tuple[Tensor, State]:
        """The stacked layers over x (L, N, H_in) from initial states (count, N, H) (zeros when None):
        the last layer's outputs (L, N, directions*H) and each state's final values (count, N, H)."""
        step, length = _STEPS[self.mode], x.shape[0]
        suffixes = ("", "_reverse") if self.bidirectional else ("",)
        if hx is None:
            zero = zeros(x.shape[1], self.hidden_size, dtype=x.dtype, backend=x.backend)
            starts = [(zero,) * states] * (self.num_layers * len(suffixes))
        else:
            starts = list(zip(*(h.unbind(0) for h in hx)))
        finals: list[State] = []
        for layer in range(self.num_layers):
            outputs = []
            for suffix in suffixes:
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, suffix)
                projected = linear(x, w_ih, b_ih).unbind(0)  # every time step's x W_ih^T + b_ih at once
                state = starts[len(finals)]
                hs: list[Tensor] = [x] * length
                for t in (range(length - 1, -1, -1) if suffix else range(length)):
                    state = step(projected[t], state, w_hh, b_hh)
                    hs[t] = state[0]
                outputs.append(stack(hs, 0))
                finals.append(state)
            x = outputs[0] if len(outputs) == 1 else cat(outputs, 2)
            if self.training and self.dropout > 0 and layer < self.num_layers - 1:
                x = _dropout(x, self.dropout, training=True)
        return x, tuple(stack([final[i] for final in finals], 0) for i in range(states))


class RNN(RNNBase):
    r"""A multi-layer Elman RNN: for each layer and time step t,
    :math:`h_t = \tanh(x_t W_{ih}^T + b_{ih} + h_{t-1} W_{hh}^T + b_{hh})` (ReLU with ``nonlinearity='relu'``),
    where :math:`x_t` is the input for layer 0 and the previous layer's output (dropout applied while training,
    except after the last layer) above it.

    ``forward(input, hx=None)``: input (L, N, H_in), (N, L, H_in) with ``batch_first``, or unbatched (L, H_in);
    hx (num_layers * directions, N, H) or unbatched (num_layers * directions, H), zeros when None. Returns
    ``(output, h_n)``: output (L, N, directions * H) (batch-first or unbatched like the input), h_n like hx.
    PackedSequence inputs are not supported.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None, *, backend: Any = None):
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if nonlinearity not in modes:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(modes[nonlinearity], input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype, backend=backend)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002 - torch's name
        output, (h_n,) = self._run(input, None if hx is None else (hx,), ("hx",))
        return output, h_n


class LSTM(RNNBase):
    r"""A multi-layer long short-term memory RNN: for each layer and time step t, with gates in torch's order
    (i, f, g, o) stacked in ``weight_ih``/``weight_hh``/biases,

    .. math::
        i_t = \sigma(W_{ii} x_t + b_{ii} + W_{hi} h_{t-1} + b_{hi}), \quad
        f_t = \sigma(W_{if} x_t + b_{if} + W_{hf} h_{t-1} + b_{hf}),
        g_t = \tanh(W_{ig} x_t + b_{ig} + W_{hg} h_{t-1} + b_{hg}), \quad
        o_t = \sigma(W_{io} x_t + b_{io} + W_{ho} h_{t-1} + b_{ho}),
        c_t = f_t \odot c_{t-1} + i_t \odot g_t, \quad h_t = o_t \odot \tanh(c_t)

    ``forward(input, hx=None)``: input as for :class:`RNN`; hx a pair (h_0, c_0) of (num_layers * directions, N, H)
    tensors (2-D for unbatched input), zeros when None. Returns ``(output, (h_n, c_n))``. ``proj_size > 0`` raises
    NotImplementedError.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None, *, backend: Any = None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype, backend=backend)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, tuple[Tensor, Tensor]]:  # noqa: A002
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError(f"LSTM: hx must be a pair (h_0, c_0) of tensors, got {type(hx).__name__}")
        output, (h_n, c_n) = self._run(input, None if hx is None else tuple(hx), ("h_0", "c_0"))
        return output, (h_n, c_n)


class GRU(RNNBase):
    r"""A multi-layer gated recurrent unit RNN: for each layer and time step t, with gates in torch's order
    (r, z, n) stacked in ``weight_ih``/``weight_hh``/biases,

    .. math::
        r_t = \sigma(W_{ir} x_t + b_{ir} + W_{hr} h_{t-1} + b_{hr}), \quad
        z_t = \sigma(W_{iz} x_t + b_{iz} + W_{hz} h_{t-1} + b_{hz}),
        n_t = \tanh(W_{in} x_t + b_{in} + r_t \odot (W_{hn} h_{t-1} + b_{hn})), \quad
        h_t = (1 - z_t) \odot n_t + z_t \odot h_{t-1}

    ``forward(input, hx=None)`` and its results as for :class:`RNN`.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None, *, backend: Any = None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype, backend=backend)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002 - torch's name
        output, (h_n,) = self._run(input, None if hx is None else (hx,), ("hx",))
        return output, h_n
