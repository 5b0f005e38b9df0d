"""Recurrent cells and layers against torch with the same parameters: outputs, final states and the gradients of the
input, the initial states and every parameter; state_dict names, init, repr and errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor import nn
from minitensor.errors import DTypeError, ShapeError

RNG = np.random.default_rng(17)

CELLS = {"RNNCell": (nn.RNNCell, torch.nn.RNNCell), "LSTMCell": (nn.LSTMCell, torch.nn.LSTMCell),
         "GRUCell": (nn.GRUCell, torch.nn.GRUCell)}
LAYERS = {"RNN": (nn.RNN, torch.nn.RNN), "LSTM": (nn.LSTM, torch.nn.LSTM), "GRU": (nn.GRU, torch.nn.GRU)}


def make_pair(kind: str, backend: str, *args: Any, **options: Any) -> tuple[Any, Any]:
    """torch's module (float64, seeded) and ours with its parameters copied in; the state_dict names must agree."""
    ours, theirs = {**CELLS, **LAYERS}[kind]
    torch.manual_seed(3)
    torch_module = theirs(*args, **options, dtype=torch.float64)
    mine = ours(*args, **options, dtype=mt.float64, device=backend)
    assert list(mine.state_dict()) == list(torch_module.state_dict())
    for (name, p), (_, q) in zip(mine.named_parameters(), torch_module.named_parameters()):
        assert p.shape == tuple(q.shape), name
    mine.load_state_dict({k: v.detach().numpy() for k, v in torch_module.state_dict().items()})
    return mine, torch_module


def _flat(out: Any) -> list[Any]:
    return [t for item in out for t in _flat(item)] if isinstance(out, tuple) else [out]


def compare(mine: Any, theirs: Any, backend: str, x: np.ndarray, hx: Any = None, tol: float = 1e-10) -> None:
    """Run both on x (and hx: None, an array, or a pair of arrays), compare every result, then the gradients of a
    fixed weighted sum of the results for x, hx and every parameter."""
    def ours_and_theirs(a: np.ndarray) -> tuple[mt.Tensor, torch.Tensor]:
        return mt.tensor(a, backend=backend, requires_grad=True), torch.tensor(a, requires_grad=True)

    mx, tx = ours_and_theirs(x)
    states = [] if hx is None else [ours_and_theirs(a) for a in (hx if isinstance(hx, tuple) else (hx,))]
    mh = None if hx is None else (tuple(s[0] for s in states) if isinstance(hx, tuple) else states[0][0])
    th = None if hx is None else (tuple(s[1] for s in states) if isinstance(hx, tuple) else states[0][1])
    got, want = _flat(mine(mx, mh)), _flat(theirs(tx, th))
    assert len(got) == len(want)
    total_m: Any = 0
    total_t: Any = 0
    for g, w in zip(got, want):
        assert g.shape == tuple(w.shape) and g.dtype == mt.float64
        np.testing.assert_allclose(g.numpy(), w.detach().numpy(), rtol=tol, atol=tol)
        weights = np.linspace(-1.3, 2.0, max(w.numel(), 1))[: w.numel()].reshape(tuple(w.shape))
        total_m = total_m + (g * mt.tensor(weights, backend=backend)).sum()
        total_t = total_t + (w * torch.tensor(weights)).sum()
    total_m.backward()
    total_t.backward()
    pairs = [("input", mx, tx), *((f"state {i}", m, t) for i, (m, t) in enumerate(states))]
    pairs += [(n, p, q) for (n, p), (_, q) in zip(mine.named_parameters(), theirs.named_parameters())]
    for name, m, t in pairs:
        assert m.grad is not None, name
        np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol, err_msg=name)


def cell_args(kind: str) -> tuple[str, dict[str, Any]]:
    name, _, nonlinearity = kind.partition("-")
    return name, {"nonlinearity": nonlinearity} if nonlinearity else {}


RELU_CASES = ("batched", "unbatched", "one-layer", "two-layers-bidirectional")
"""The cases run with nonlinearity='relu' too (relu and tanh RNNs differ only in the activation)."""


def initial(kind: str, shape: tuple[int, ...]) -> Any:
    """A random initial state of ``shape``: a pair for LSTM."""
    return (RNG.standard_normal(shape), RNG.standard_normal(shape)) if "LSTM" in kind else RNG.standard_normal(shape)


CELL_CASES = ["batched", "zero-state", "unbatched", "no-bias", "empty-batch"]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("kind", "case"), [(kind, case) for kind in ("RNNCell", "RNNCell-relu", "LSTMCell", "GRUCell")
                                            for case in CELL_CASES if "relu" not in kind or case in RELU_CASES])
def test_cells_match_torch(backend: str, kind: str, case: str) -> None:
    name, options = cell_args(kind)
    mine, theirs = make_pair(name, backend, 3, 4, bias=case != "no-bias", **options)
    batch = {"unbatched": (), "empty-batch": (0,)}.get(case, (2,))
    hx = None if case == "zero-state" else initial(kind, (*batch, 4))
    compare(mine, theirs, backend, RNG.standard_normal((*batch, 3)), hx)


LAYER_CASES: dict[str, tuple[tuple[int, ...], dict[str, Any], bool]] = {
    # name: (input shape, options, with an initial state)
    "one-layer": ((5, 2, 3), {}, True),
    "one-layer-zero-state": ((4, 2, 3), {}, False),
    "two-layers": ((3, 2, 3), {"num_layers": 2}, True),
    "bidirectional": ((4, 2, 3), {"bidirectional": True}, True),
    "two-layers-bidirectional": ((3, 2, 3), {"num_layers": 2, "bidirectional": True}, True),
    "batch-first": ((2, 4, 3), {"batch_first": True, "num_layers": 2}, True),
    "unbatched": ((4, 3), {"num_layers": 2, "bidirectional": True}, True),
    "unbatched-zero-state": ((3, 3), {"batch_first": True}, False),
    "no-bias": ((3, 2, 3), {"bias": False, "bidirectional": True}, False),
    "empty-batch": ((3, 0, 3), {"num_layers": 2, "bidirectional": True}, True),
}


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("kind", "case"), [(kind, case) for kind in ("RNN", "RNN-relu", "LSTM", "GRU")
                                            for case in LAYER_CASES if "relu" not in kind or case in RELU_CASES])
def test_layers_match_torch(backend: str, kind: str, case: str) -> None:
    shape, options, with_state = LAYER_CASES[case]
    name, extra = cell_args(kind)
    mine, theirs = make_pair(name, backend, 3, 4, **options, **extra)
    count = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
    batch = () if len(shape) == 2 else (shape[0] if options.get("batch_first") else shape[1],)
    hx = initial(kind, (count, *batch, 4)) if with_state else None
    compare(mine, theirs, backend, RNG.standard_normal(shape), hx)
    if options.get("batch_first"):  # (N, L, directions * H) laid out as such, as torch's: view works
        output = mine(mt.tensor(RNG.standard_normal(shape), backend=backend))[0]
        assert output.view(-1).shape == (math.prod(output.shape),)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_every_backend(backend: str, kind: str) -> None:
    """One tiny case per layer type on every backend (cuda runs on the slow simulator; the cells share the layers'
    steps)."""
    mine, theirs = make_pair(kind, backend, 2, 2)
    compare(mine, theirs, backend, RNG.standard_normal((2, 1, 2)), initial(kind, (1, 1, 2)))


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_dropout_between_layers(kind: str) -> None:
    mine, theirs = make_pair(kind, "simple", 3, 4, num_layers=2, dropout=1.0)
    x = RNG.standard_normal((3, 2, 3))
    compare(mine.eval(), theirs.eval(), "simple", x)  # no dropout in eval
    mine.zero_grad()
    theirs.zero_grad()
    compare(mine.train(), theirs.train(), "simple", x)  # p = 1: layer 1 sees zeros in both
    mine.dropout = 0.5
    mt.manual_seed(0)
    out, _ = mine(mt.tensor(x, backend="simple"))
    out_eval, _ = mine.eval()(mt.tensor(x, backend="simple"))
    assert not np.allclose(out.numpy(), out_eval.numpy())
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        single = getattr(nn, kind)(3, 4, dropout=0.5, dtype=mt.float64, device="simple")
    inputs = mt.tensor(x, backend="simple")  # dropout after the only layer is never applied: train == eval
    np.testing.assert_array_equal(single(inputs)[0].numpy(), single.eval()(inputs)[0].numpy())


def test_default_float32_init_and_repr() -> None:
    for kind, (ours, theirs) in LAYERS.items():
        mine = ours(3, 4, num_layers=2, bidirectional=True)
        bound = 1 / math.sqrt(4)
        values = np.concatenate([p.numpy().ravel() for p in mine.parameters()])
        assert all(p.dtype == mt.float32 for p in mine.parameters())
        assert np.abs(values).max() <= bound and values.std() > bound / 4  # U(-1/sqrt(H), 1/sqrt(H))
        assert [[tuple(p.shape) for p in ps] for ps in mine.all_weights] == [
            [tuple(p.shape) for p in ps] for ps in theirs(3, 4, num_layers=2, bidirectional=True).all_weights]
        x = RNG.standard_normal((3, 2, 3)).astype(np.float32)
        torch_module = theirs(3, 4, num_layers=2, bidirectional=True)
        torch_module.load_state_dict({k: torch.tensor(v.numpy()) for k, v in mine.state_dict().items()})
        np.testing.assert_allclose(mine(mt.tensor(x))[0].numpy(), torch_module(torch.tensor(x))[0].detach().numpy(),
                                   rtol=1e-5, atol=1e-6, err_msg=kind)
    for args, options in [((3, 4), {}), ((3, 4, 2), {"bias": False, "batch_first": True, "dropout": 0.5,
                                                      "bidirectional": True})]:
        for ours, theirs in LAYERS.values():
            assert repr(ours(*args, **options)) == repr(theirs(*args, **options))
    assert repr(nn.RNN(3, 4, nonlinearity="relu")) == repr(torch.nn.RNN(3, 4, nonlinearity="relu"))
    for ours, theirs in CELLS.values():
        assert repr(ours(3, 4, bias=False)) == repr(theirs(3, 4, bias=False))
    assert repr(nn.RNNCell(3, 4, nonlinearity="relu")) == repr(torch.nn.RNNCell(3, 4, nonlinearity="relu"))


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNNCell(3, 4, nonlinearity="gelu")
    with pytest.raises(ValueError, match="hidden_size"):
        nn.GRU(3, 0)
    with pytest.raises(ValueError, match="num_layers"):
        nn.LSTM(3, 4, num_layers=0)
    with pytest.raises(ValueError, match="dropout"):
        nn.RNN(3, 4, dropout=1.5)
    with pytest.raises(TypeError, match="bias"):
        nn.GRU(3, 4, bias=1)
    with pytest.raises(ValueError, match="proj_size"):
        nn.LSTM(3, 4, proj_size=4)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_layer_input_errors(kind: str) -> None:
    layer = getattr(nn, kind)(3, 4, num_layers=2, dtype=mt.float64, device="simple")
    lstm = kind == "LSTM"

    def state(*shape: int) -> Any:
        h = mt.zeros(*shape, dtype=mt.float64, backend="simple")
        return (h, h) if lstm else h

    x = mt.zeros(5, 2, 3, dtype=mt.float64, backend="simple")
    with pytest.raises(ShapeError, match=r"1-D shape \(3,\)"):
        layer(mt.zeros(3, dtype=mt.float64, backend="simple"))
    with pytest.raises(ShapeError, match=r"input_size 3.*\(5, 2, 6\)"):
        layer(mt.zeros(5, 2, 6, dtype=mt.float64, backend="simple"))
    with pytest.raises(ShapeError, match="sequence length"):
        layer(mt.zeros(0, 2, 3, dtype=mt.float64, backend="simple"))
    with pytest.raises(DTypeError, match="float32"):
        layer(mt.zeros(5, 2, 3, dtype=mt.float32, backend="simple"))
    with pytest.raises(ShapeError, match=r"\(2, 2, 4\).*\(1, 2, 4\)"):
        layer(x, state(1, 2, 4))
    with pytest.raises(ShapeError, match=r"\(2, 2, 4\).*\(2, 3, 4\)"):
        layer(x, state(2, 3, 4))
    with pytest.raises(ShapeError, match=r"\(2, 4\).*\(2, 1, 4\)"):  # unbatched input, batched state
        layer(mt.zeros(5, 3, dtype=mt.float64, backend="simple"), state(2, 1, 4))
    with pytest.raises(TypeError, match="Tensor"):
        layer([[1.0, 2.0, 3.0]])
    if lstm:
        with pytest.raises(TypeError, match="pair"):
            layer(x, mt.zeros(2, 2, 4, dtype=mt.float64, backend="simple"))
        h = mt.zeros(2, 2, 4, dtype=mt.float64, backend="simple")
        with pytest.raises(ShapeError, match="c_0"):
            layer(x, (h, mt.zeros(2, 2, 5, dtype=mt.float64, backend="simple")))


@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_input_errors(kind: str) -> None:
    cell = getattr(nn, kind)(3, 4, dtype=mt.float64, device="simple")
    lstm = kind == "LSTMCell"

    def state(*shape: int) -> Any:
        h = mt.zeros(*shape, dtype=mt.float64, backend="simple")
        return (h, h) if lstm else h

    with pytest.raises(ShapeError, match=r"3-D shape \(1, 2, 3\)"):
        cell(mt.zeros(1, 2, 3, dtype=mt.float64, backend="simple"))
    with pytest.raises(ShapeError, match=r"input_size 3"):
        cell(mt.zeros(2, 5, dtype=mt.float64, backend="simple"))
    with pytest.raises(ShapeError, match=r"\(2, 4\).*\(3, 4\)"):
        cell(mt.zeros(2, 3, dtype=mt.float64, backend="simple"), state(3, 4))
    with pytest.raises(ShapeError, match=r"\(4,\).*\(1, 4\)"):
        cell(mt.zeros(3, dtype=mt.float64, backend="simple"), state(1, 4))
    with pytest.raises(DTypeError):
        cell(mt.zeros(2, 3, dtype=mt.float32, backend="simple"))
