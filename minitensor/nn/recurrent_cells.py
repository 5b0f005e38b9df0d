"""Recurrent cells: ``nn.RNNCell``, ``nn.LSTMCell``, ``nn.GRUCell`` (torch's parameters, init and signatures), and
the one-step updates that they and the multi-layer ``nn.RNN``/``nn.LSTM``/``nn.GRU`` share.

A step takes ``gi``, the input projection ``x W_ih^T + b_ih`` (computed for a whole sequence at once by the layers),
and the previous state, and returns the new state; all of it is made of differentiable Tensor ops.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..creation import empty, zeros
from ..errors import DTypeError, ShapeError
from ..module import Module, Parameter
from ..tensor import Tensor
from . import init
from .common import check_sizes, factory
from .linear import linear

__all__ = ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

State = tuple[Tensor, ...]
"""A recurrent state: ``(h,)`` for RNN and GRU, ``(h, c)`` for LSTM."""

Step = Callable[[Tensor, State, Tensor, "Tensor | None"], State]


def rnn_tanh_step(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None) -> State:
    """h' = tanh(gi + h W_hh^T + b_hh)."""
    return ((gi + linear(state[0], w_hh, b_hh)).tanh(),)


def rnn_relu_step(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None) -> State:
    """h' = relu(gi + h W_hh^T + b_hh)."""
    return ((gi + linear(state[0], w_hh, b_hh)).relu(),)


def lstm_step(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None) -> State:
    """(i, f, g, o) = gi + h W_hh^T + b_hh split in four; c' = sigmoid(f) c + sigmoid(i) tanh(g);
    h' = sigmoid(o) tanh(c')."""
    h, c = state
    gates = gi + linear(h, w_hh, b_hh)
    size = gates.shape[-1] // 4
    i, f, _, o = gates.sigmoid().chunk(4, -1)  # one sigmoid for i, f and o; g's quarter is taken from gates
    g = gates.narrow(-1, 2 * size, size).tanh()
    c_new = f * c + i * g
    return o * c_new.tanh(), c_new


def gru_step(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None) -> State:
    """(r, z, n) gates: r = sigmoid(gi_r + gh_r), z = sigmoid(gi_z + gh_z), n = tanh(gi_n + r * gh_n) with
    gh = h W_hh^T + b_hh; h' = (1 - z) n + z h."""
    (h,) = state
    gh = linear(h, w_hh, b_hh)
    size = gh.shape[-1] // 3
    rz = (gi.narrow(-1, 0, 2 * size) + gh.narrow(-1, 0, 2 * size)).sigmoid()
    r, z = rz.narrow(-1, 0, size), rz.narrow(-1, size, size)
    n = (gi.narrow(-1, 2 * size, size) + r * gh.narrow(-1, 2 * size, size)).tanh()
    return (n + z * (h - n),)


def check_dtype(name: str, what: str, tensor: Tensor, weight: Tensor) -> None:
    """DTypeError unless ``tensor`` has the parameters' dtype (torch does not promote in recurrent layers)."""
    if tensor.dtype != weight.dtype:
        raise DTypeError(f"{name}: {what} dtype ({tensor.dtype}) does not match the weight dtype ({weight.dtype}); "
                         f"convert the {what} with .to({weight.dtype}) or the module with .to({tensor.dtype})")


def check_tensor(name: str, what: str, value: Any) -> Tensor:
    """``value`` itself when it is a Tensor, else a TypeError naming it."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{what}' must be Tensor, not {type(value).__name__}")
    return value


def init_recurrent(module: Module, hidden_size: int) -> None:
    """torch's init for recurrent weights and biases alike: U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
    bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0.0
    for weight in module.parameters():
        init.uniform_(weight, -bound, bound)


class RNNCellBase(Module):
    """What the cells share: ``weight_ih`` (chunks*hidden, input), ``weight_hh`` (chunks*hidden, hidden),
    ``bias_ih`` and ``bias_hh`` (chunks*hidden,) (None without bias), torch's init and input checks."""

    _states = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: Any = None,
                 dtype: Any = None, *, backend: Any = None):
        super().__init__()
        name = type(self).__name__
        check_sizes(name, input_size=input_size, hidden_size=hidden_size)
        if not isinstance(bias, bool):
            raise TypeError(f"{name}: bias should be of type bool, got: {type(bias).__name__}")
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        kw = factory(device, dtype, backend)
        self.weight_ih = Parameter(empty(num_chunks * hidden_size, input_size, **kw))
        self.weight_hh = Parameter(empty(num_chunks * hidden_size, hidden_size, **kw))
        for which in ("ih", "hh"):
            self.register_parameter(f"bias_{which}", Parameter(empty(num_chunks * hidden_size, **kw)) if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as torch."""
        init_recurrent(self, self.hidden_size)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        return s + (f", nonlinearity={nonlinearity}" if nonlinearity != "tanh" else "")

    def _run(self, input: Tensor, hx: State | None, step: Step) -> State:  # noqa: A002 - torch's name
        """Check ``input`` (H_in) or (N, H_in) and the state tensors ((H,) or (N, H), zeros when ``hx`` is None),
        then one ``step``; unbatched results lose their batch dim again."""
        name, p = type(self).__name__, self._parameters
        w_ih = p["weight_ih"]
        input = check_tensor(name, "input", input)  # noqa: A001
        if input.dims not in (1, 2):
            raise ShapeError(f"{name}: expected input to be 1-D (H_in) or 2-D (N, H_in), got {input.dims}-D shape {input.shape}")
        check_dtype(name, "input", input, w_ih)
        if input.shape[-1] != self.input_size:
            raise ShapeError(f"{name}: input has {input.shape[-1]} features (shape {input.shape}), expected input_size {self.input_size}")
        batched = input.dims == 2
        x = input if batched else input.unsqueeze(0)
        expected = (x.shape[0], self.hidden_size)
        if hx is None:
            state = (zeros(*expected, dtype=x.dtype, backend=x.backend),) * self._states
        else:
            state = hx
            for i, h in enumerate(hx):
                what = "hx" if self._states == 1 else f"hx[{i}]"
                want = expected if batched else expected[1:]
                if check_tensor(name, what, h).shape != want:
                    raise ShapeError(f"{name}: {what} must have shape {want} for input of shape {input.shape}, got {h.shape}")
                check_dtype(name, what, h, w_ih)
            state = state if batched else tuple(h.unsqueeze(0) for h in state)
        out = step(linear(x, w_ih, p["bias_ih"]), state, p["weight_hh"], p["bias_hh"])
        return out if batched else tuple(h.squeeze(0) for h in out)


class RNNCell(RNNCellBase):
    r"""An Elman RNN cell: :math:`h' = \tanh(x W_{ih}^T + b_{ih} + h W_{hh}^T + b_{hh})` (ReLU with
    ``nonlinearity='relu'``).

    ``forward(input, hx=None)``: input (N, H_in) or unbatched (H_in); hx (N, H) or (H), zeros when None; returns h'.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None, *, backend: Any = None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype, backend=backend)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002 - torch's name
        step = rnn_tanh_step if self.nonlinearity == "tanh" else rnn_relu_step
        return self._run(input, None if hx is None else (hx,), step)[0]


class LSTMCell(RNNCellBase):
    r"""A long short-term memory cell, gates in torch's order (i, f, g, o):

    .. math::
        i = \sigma(W_{ii} x + b_{ii} + W_{hi} h + b_{hi}), \quad f = \sigma(W_{if} x + b_{if} + W_{hf} h + b_{hf}),
        g = \tanh(W_{ig} x + b_{ig} + W_{hg} h + b_{hg}), \quad o = \sigma(W_{io} x + b_{io} + W_{ho} h + b_{ho}),
        c' = f \odot c + i \odot g, \quad h' = o \odot \tanh(c')

    ``forward(input, hx=None)``: input (N, H_in) or (H_in); hx a pair (h, c) of (N, H) or (H) tensors, zeros when
    None; returns (h', c').
    """

    _states = 2

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None, dtype: Any = None,
                 *, backend: Any = None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype, backend=backend)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError(f"LSTMCell: hx must be a pair (h_0, c_0) of tensors, got {type(hx).__name__}")
        h, c = self._run(input, None if hx is None else tuple(hx), lstm_step)
        return h, c


class GRUCell(RNNCellBase):
    r"""A gated recurrent unit cell, gates in torch's order (r, z, n):

    .. math::
        r = \sigma(W_{ir} x + b_{ir} + W_{hr} h + b_{hr}), \quad z = \sigma(W_{iz} x + b_{iz} + W_{hz} h + b_{hz}),
        n = \tanh(W_{in} x + b_{in} + r \odot (W_{hn} h + b_{hn})), \quad h' = (1 - z) \odot n + z \odot h

    ``forward(input, hx=None)``: input (N, H_in) or (H_in); hx (N, H) or (H), zeros when None; returns h'.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None, dtype: Any = None,
                 *, backend: Any = None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype, backend=backend)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002 - torch's name
        return self._run(input, None if hx is None else (hx,), gru_step)[0]
