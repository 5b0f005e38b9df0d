"""Multi-layer recurrent layers ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` with torch's parameters, init, signatures and
results (the cells ``nn.RNNCell``, ``nn.LSTMCell``, ``nn.GRUCell`` live in :mod:`.recurrent_cells`).

Each layer and direction projects its whole input sequence with one matmul (``x W_ih^T + b_ih`` for every time
step), then steps through time in Python with differentiable Tensor ops, so autodiff runs through all of it.
Layer ``l`` of direction ``d`` has ``weight_ih_l{l}``, ``weight_hh_l{l}``, ``bias_ih_l{l}``, ``bias_hh_l{l}`` (and
``weight_hr_l{l}`` for an LSTM with ``proj_size > 0``), with the suffix ``_reverse`` for the backward direction;
states are ordered (layer 0 forward, layer 0 backward, layer 1 forward, ...) as in torch.

Internally a sequence is always packed: rows of (sum of batch sizes, features), time step t holding the first
``batch_sizes[t]`` sequences (all N of them at every step for a padded input). The forward direction drops a sequence
from its state when it ends (that is its final state); the backward one adds each sequence at its own last step,
starting from its initial state, so a PackedSequence gives every sequence's states at its own length, as in torch.
"""

from __future__ import annotations

import numbers
import warnings
from itertools import accumulate
from typing import Any

from ..creation import empty, zeros
from ..errors import ShapeError
from ..module import Module, Parameter
from ..tensor import Tensor
from ..tensor_join import cat, stack
from .common import factory
from .dropout import dropout as _dropout
from .linear import linear
from .packed_sequence import PackedSequence, sizes_of
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
        if isinstance(proj_size, bool) or not isinstance(proj_size, int):
            raise TypeError(f"{name}: proj_size should be of type int, got: {type(proj_size).__name__}")
        if proj_size < 0:
            raise ValueError(f"proj_size should be a positive integer or zero to disable projections, got {proj_size}")
        if proj_size >= hidden_size:
            raise ValueError(f"proj_size has to be smaller than hidden_size, got {proj_size} >= {hidden_size}")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
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
        out_size = proj_size or hidden_size  # the size of h (of c: always hidden_size)
        kw = factory(device, dtype, backend)
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            width = input_size if layer == 0 else out_size * directions
            for suffix in ("", "_reverse")[:directions]:
                shapes = {"weight_ih": (rows, width), "weight_hh": (rows, out_size)}
                if bias:
                    shapes |= {"bias_ih": (rows,), "bias_hh": (rows,)}
                if proj_size:
                    shapes |= {"weight_hr": (proj_size, hidden_size)}
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
        """The parameters per layer and direction: [[w_ih, w_hh, b_ih, b_hh(, w_hr)], ...] (torch's order)."""
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
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        return s

    def _weights(self, layer: int, suffix: str) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None, Tensor | None]:
        p = self._parameters
        return (p[f"weight_ih_l{layer}{suffix}"], p[f"weight_hh_l{layer}{suffix}"], p.get(f"bias_ih_l{layer}{suffix}"),
                p.get(f"bias_hh_l{layer}{suffix}"), p.get(f"weight_hr_l{layer}{suffix}"))

    def _state_sizes(self, states: int) -> tuple[int, ...]:
        """The widths of the states: h is proj_size wide when projecting, c always hidden_size."""
        return (self.proj_size or self.hidden_size, self.hidden_size)[:states]

    def _check_states(self, hx: State, names: tuple[str, ...], batch: int | None, shown: tuple[int, ...]) -> None:
        """ShapeError/DTypeError unless every state is (num_layers * directions, batch, width) ((count, width) for
        ``batch`` None, unbatched) of the parameters' dtype; ``shown`` is the input's shape, for the message."""
        name = type(self).__name__
        count = self.num_layers * (2 if self.bidirectional else 1)
        for what, h, width in zip(names, hx, self._state_sizes(len(names))):
            want = (count, width) if batch is None else (count, batch, width)
            if check_tensor(name, what, h).shape != want:
                raise ShapeError(f"{name}: expected {what} of shape {want} for input of shape {shown}, got {h.shape}")
            check_dtype(name, what, h, self._parameters["weight_ih_l0"])

    def _run(self, input: Tensor | PackedSequence, hx: State | None,  # noqa: A002
             names: tuple[str, ...]) -> tuple[Tensor | PackedSequence, State]:
        """Check ``input`` and the initial states named ``names`` (``hx``, or ``h_0`` and ``c_0``), run every layer and
        direction, and give (output, final states) in the caller's layout (batch_first, unbatched, packed)."""
        if isinstance(input, PackedSequence):
            return self._run_packed(input, hx, names)
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
        length, batch = x.shape[0], x.shape[1]
        if length == 0:
            raise ShapeError(f"{name}: expected sequence length to be larger than 0, got input of shape {input.shape}")
        if hx is not None:
            self._check_states(hx, names, batch if batched else None, input.shape)
            hx = hx if batched else tuple(h.unsqueeze(1) for h in hx)
        rows, final = self._layers(x.reshape(length * batch, self.input_size), [batch] * length, hx, len(names))
        output = rows.view(length, batch, rows.shape[-1])
        if not batched:
            return output.squeeze(1), tuple(h.squeeze(1) for h in final)
        return (output.transpose(0, 1).contiguous() if self.batch_first else output), final  # torch's layout

    def _run_packed(self, packed: PackedSequence, hx: State | None,
                    names: tuple[str, ...]) -> tuple[PackedSequence, State]:
        """The layers over a PackedSequence: the initial states are given in the original batch order and put into
        the packed (sorted) order, the final states put back; the output is packed like the input."""
        name = type(self).__name__
        data = check_tensor(name, "input", packed.data)
        if data.dims != 2 or data.shape[-1] != self.input_size:
            raise ShapeError(f"{name}: expected packed data of shape (*, {self.input_size}) (input_size "
                             f"{self.input_size}), got {data.shape}")
        check_dtype(name, "input", data, self._parameters["weight_ih_l0"])
        sizes = sizes_of(packed.batch_sizes)
        if not sizes or sum(sizes) != data.shape[0]:
            raise ShapeError(f"{name}: batch_sizes {sizes} do not add up to the {data.shape[0]} rows of packed data")
        if hx is not None:
            self._check_states(hx, names, sizes[0], data.shape)
            if packed.sorted_indices is not None:
                hx = tuple(h.index_select(1, packed.sorted_indices) for h in hx)
        rows, final = self._layers(data, sizes, hx, len(names))
        if packed.unsorted_indices is not None:
            final = tuple(h.index_select(1, packed.unsorted_indices) for h in final)
        return PackedSequence(rows, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices), final

    def _layers(self, x: Tensor, sizes: list[int], hx: State | None, states: int) -> tuple[Tensor, State]:
        """The stacked layers over the packed rows x (sum(sizes), H_in) (``sizes[t]`` sequences at step t) from
        initial states (count, N, width) (zeros when None): the last layer's packed outputs
        (sum(sizes), directions * width) and each state's final values (count, N, width)."""
        suffixes = ("", "_reverse") if self.bidirectional else ("",)
        if hx is None:
            starts = [tuple(zeros(sizes[0], width, dtype=x.dtype, backend=x.backend)
                            for width in self._state_sizes(states))] * (self.num_layers * len(suffixes))
        else:
            starts = list(zip(*(h.unbind(0) for h in hx)))
        finals: list[State] = []
        for layer in range(self.num_layers):
            outputs = []
            for suffix in suffixes:
                w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, suffix)
                projected = linear(x, w_ih, b_ih)  # every time step's x W_ih^T + b_ih at once
                hs, final = self._direction(projected, sizes, starts[len(finals)], (w_hh, b_hh, w_hr), bool(suffix))
                outputs.append(cat(hs, 0))
                finals.append(final)
            x = outputs[0] if len(outputs) == 1 else cat(outputs, 1)
            if self.training and self.dropout > 0 and layer < self.num_layers - 1:
                x = _dropout(x, self.dropout, training=True)
        return x, tuple(stack([final[i] for final in finals], 0) for i in range(states))

    def _direction(self, projected: Tensor, sizes: list[int], start: State,
                   weights: tuple[Tensor, Tensor | None, Tensor | None], reverse: bool) -> tuple[list[Tensor], State]:
        """One layer in one direction over the packed input projections: every step's h (in time order) and each
        sequence's final state. Forward, a sequence leaves the state when it ends; backward, it joins the state at
        its last step with its initial state; h is projected by ``w_hr`` when there is one."""
        step, (w_hh, b_hh, w_hr) = _STEPS[self.mode], weights
        offsets = [0, *accumulate(sizes[:-1])]
        hs: list[Tensor] = [projected] * len(sizes)
        ended: list[State] = []  # forward: the states of the sequences that ended, shortest first
        state = start
        if reverse and sizes[-1] < sizes[0]:
            state = tuple(s.narrow(0, 0, sizes[-1]) for s in start)
        for t in (range(len(sizes) - 1, -1, -1) if reverse else range(len(sizes))):
            n, have = sizes[t], state[0].shape[0]
            if n > have:  # backward: the sequences whose last step is t start here
                state = tuple(cat([s, s0.narrow(0, have, n - have)], 0) for s, s0 in zip(state, start))
            elif n < have:  # forward: the sequences that ended at step t - 1 are done
                ended.append(tuple(s.narrow(0, n, have - n) for s in state))
                state = tuple(s.narrow(0, 0, n) for s in state)
            state = step(projected.narrow(0, offsets[t], n), state, w_hh, b_hh)
            if w_hr is not None:
                state = (linear(state[0], w_hr), *state[1:])
            hs[t] = state[0]
        if ended:
            state = tuple(cat([s, *(piece[i] for piece in reversed(ended))], 0) for i, s in enumerate(state))
        return hs, state


class RNN(RNNBase):
    r"""A multi-layer Elman RNN: for each layer and time step t,
    :math:`h_t = \tanh(x_t W_{ih}^T + b_{ih} + h_{t-1} W_{hh}^T + b_{hh})` (ReLU with ``nonlinearity='relu'``),
    where :math:`x_t` is the input for layer 0 and the previous layer's output (dropout applied while training,
    except after the last layer) above it.

    ``forward(input, hx=None)``: input (L, N, H_in), (N, L, H_in) with ``batch_first``, or unbatched (L, H_in);
    hx (num_layers * directions, N, H) or unbatched (num_layers * directions, H), zeros when None. Returns
    ``(output, h_n)``: output (L, N, directions * H) (batch-first or unbatched like the input), h_n like hx.
    A :class:`~minitensor.nn.utils.rnn.PackedSequence` input gives a PackedSequence output and each sequence's
    final state at its own length (hx and h_n in the original batch order).
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

    def forward(self, input: Tensor | PackedSequence, hx: Tensor | None = None  # noqa: A002 - torch's name
                ) -> tuple[Tensor | PackedSequence, Tensor]:
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
    tensors (2-D for unbatched input), zeros when None. Returns ``(output, (h_n, c_n))``; PackedSequences as for
    :class:`RNN`. With ``proj_size > 0`` each h is projected, :math:`h_t = (o_t \odot \tanh(c_t)) W_{hr}^T`
    (``weight_hr_l{k}`` of shape (proj_size, hidden_size)), so h, the output and ``weight_hh`` have proj_size
    columns instead of hidden_size (c keeps hidden_size).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None, *, backend: Any = None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype, backend=backend)

    def forward(self, input: Tensor | PackedSequence, hx: tuple[Tensor, Tensor] | None = None  # noqa: A002
                ) -> tuple[Tensor | PackedSequence, tuple[Tensor, Tensor]]:
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

    def forward(self, input: Tensor | PackedSequence, hx: Tensor | None = None  # noqa: A002 - torch's name
                ) -> tuple[Tensor | PackedSequence, Tensor]:
        output, (h_n,) = self._run(input, None if hx is None else (hx,), ("hx",))
        return output, h_n
