"""Packed sequences (pack/pad/unpack and PackedSequence), recurrent layers on packed input, LSTM projections and the
orthogonal parametrization, against torch: values, final states and every gradient (float64), names and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor import nn
from minitensor.errors import ShapeError
from minitensor.nn.utils import parametrizations as MP
from minitensor.nn.utils import rnn as R

TR = torch.nn.utils.rnn
TP = torch.nn.utils.parametrizations
RNG = np.random.default_rng(23)
LAYERS = {"RNN": (nn.RNN, torch.nn.RNN), "LSTM": (nn.LSTM, torch.nn.LSTM), "GRU": (nn.GRU, torch.nn.GRU)}
TOL = 1e-10


def close(got: Any, want: Any, tol: float = TOL, msg: str = "") -> None:
    want = want.detach().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
    assert tuple(got.shape) == want.shape, (msg, got.shape, want.shape)
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol, err_msg=msg)


def pair(a: np.ndarray, backend: str) -> tuple[mt.Tensor, torch.Tensor]:
    return mt.tensor(a, backend=backend, requires_grad=True), torch.tensor(a, requires_grad=True)


def weighted(outputs: list[Any], lib: Any, backend: str) -> Any:
    """A fixed weighted sum of the outputs (so every element gets its own gradient)."""
    total: Any = 0
    for out in outputs:
        w = np.linspace(-1.3, 2.0, out.numel()).reshape(tuple(out.shape))
        total = total + (out * (torch.tensor(w) if lib is torch else mt.tensor(w, backend=backend))).sum()
    return total


# --- packing ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths, enforce_sorted", [([4, 3, 1], True), ([4, 4, 2], True), ([2, 4, 1], False),
                                                      ([3, 3, 4], False)])
def test_pack_and_pad_match_torch(backend: str, batch_first: bool, lengths: list[int], enforce_sorted: bool) -> None:
    shape = (3, 5, 2) if batch_first else (5, 3, 2)
    mx, tx = pair(RNG.standard_normal(shape), backend)
    mp = R.pack_padded_sequence(mx, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    tp = TR.pack_padded_sequence(tx, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    close(mp.data, tp.data)
    assert mp.batch_sizes.tolist() == tp.batch_sizes.tolist() and mp.batch_sizes.dtype == mt.int64
    for ours, theirs in ((mp.sorted_indices, tp.sorted_indices), (mp.unsorted_indices, tp.unsorted_indices)):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert ours.tolist() == theirs.tolist() and ours.dtype == mt.int64
    got, got_lengths = R.pad_packed_sequence(mp, batch_first=batch_first, padding_value=-2.5, total_length=6)
    want, want_lengths = TR.pad_packed_sequence(tp, batch_first=batch_first, padding_value=-2.5, total_length=6)
    close(got, want)
    assert got_lengths.tolist() == want_lengths.tolist() and got_lengths.dtype == mt.int64
    weighted([got], mt, backend).backward()
    weighted([want], torch, backend).backward()
    close(mx.grad, tx.grad, msg="input gradient through pack and pad")


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_sequence_and_unpack(backend: str, enforce_sorted: bool) -> None:
    lengths = [4, 2, 1] if enforce_sorted else [2, 4, 1]
    arrays = [RNG.standard_normal((n, 2)) for n in lengths]
    ours, theirs = zip(*(pair(a, backend) for a in arrays))
    mp, tp = R.pack_sequence(list(ours), enforce_sorted), TR.pack_sequence(list(theirs), enforce_sorted)
    close(mp.data, tp.data)
    got, want = R.unpack_sequence(mp), TR.unpack_sequence(tp)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        close(g, w)
    weighted(got, mt, backend).backward()
    weighted(want, torch, backend).backward()
    for m, t in zip(ours, theirs):
        close(m.grad, t.grad)
    back = R.unpad_sequence(*R.pad_packed_sequence(mp))
    for b, a in zip(back, arrays):
        close(b, a)


def test_packing_errors() -> None:
    x = mt.zeros(4, 3, 2, dtype=mt.float64, backend="simple")
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        R.pack_padded_sequence(x, [3, 4, 2])
    with pytest.raises(RuntimeError, match="greater than 0"):
        R.pack_padded_sequence(x, [4, 2, 0])
    with pytest.raises(RuntimeError, match="greater than 0"):
        R.pack_padded_sequence(x, [0, 4, 2], enforce_sorted=False)
    with pytest.raises(RuntimeError, match=r"got 2 \(batch_size=3\)"):
        R.pack_padded_sequence(x, [4, 3])
    with pytest.raises(ValueError, match="exceeds"):
        R.pack_padded_sequence(x, [5, 3, 2])
    with pytest.raises(RuntimeError, match="1D"):
        R.pack_padded_sequence(x, mt.tensor([[4, 3, 2]]))
    with pytest.raises(ShapeError):
        R.pack_padded_sequence(mt.zeros(4), [4])
    with pytest.raises(RuntimeError, match="empty list"):
        R.pack_sequence([])
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        R.pack_sequence([mt.zeros(2, 1), mt.zeros(3, 1)])
    packed = R.pack_padded_sequence(x, mt.tensor([4, 3, 2]))
    with pytest.raises(ValueError, match="total_length=2 and max sequence length being 4"):
        R.pad_packed_sequence(packed, total_length=2)
    with pytest.raises(TypeError, match="PackedSequence"):
        R.pad_packed_sequence(x)


def test_packed_sequence_tuple_and_conversions() -> None:
    data = mt.tensor(np.arange(6.0).reshape(3, 2), dtype=mt.float32, backend="simple")
    sizes = mt.tensor([2, 1], dtype=mt.int64)
    packed = R.PackedSequence(data, sizes, mt.tensor([1, 0], dtype=mt.int64, backend="simple"))
    assert packed.unsorted_indices is not None and packed.unsorted_indices.tolist() == [1, 0]
    assert packed._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    d, b, s, u = packed
    assert d is data and b is sizes and s is packed[2] and u is packed.unsorted_indices
    same = R.PackedSequence((data, sizes))
    assert same.data is data and same.sorted_indices is None and same.unsorted_indices is None
    assert packed.to(mt.float32) is packed and packed.float() is packed and not packed.is_cuda
    double = packed.double()
    assert isinstance(double, R.PackedSequence) and double.data.dtype == mt.float64 and double.batch_sizes is sizes
    assert double.to("fast").data.backend.name == "fast" and double.to("fast").sorted_indices.backend.name == "fast"
    with pytest.raises(ShapeError, match="batch_sizes"):
        R.PackedSequence(data, mt.tensor([2.0, 1.0]))
    with pytest.raises(TypeError, match="pair"):
        R.PackedSequence(data)


# --- recurrent layers on packed input ---


def make_pair(kind: str, backend: str, *args: Any, **options: Any) -> tuple[Any, Any]:
    """torch's layer (float64, seeded) and ours with its parameters copied in; the state_dict names must agree."""
    ours, theirs = LAYERS[kind]
    torch.manual_seed(5)
    torch_module = theirs(*args, **options, dtype=torch.float64)
    mine = ours(*args, **options, dtype=mt.float64, device=backend)
    assert list(mine.state_dict()) == list(torch_module.state_dict())
    mine.load_state_dict({k: v.detach().numpy() for k, v in torch_module.state_dict().items()})
    return mine, torch_module


def run_packed(kind: str, backend: str, lengths: list[int], enforce_sorted: bool, with_state: bool,
               size: tuple[int, int] = (3, 3), **options: Any) -> None:
    """Pack a padded batch, run both layers, compare the padded outputs and final states, then the gradients of the
    input, the initial states and every parameter."""
    mine, theirs = make_pair(kind, backend, *size, **options)
    batch_first, batch, steps = options.get("batch_first", False), len(lengths), max(lengths) + 1
    mx, tx = pair(RNG.standard_normal((batch, steps, size[0]) if batch_first else (steps, batch, size[0])), backend)
    count = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
    widths = [options.get("proj_size") or size[1], size[1]][: 2 if kind == "LSTM" else 1]
    states = [pair(RNG.standard_normal((count, batch, w)), backend) for w in widths] if with_state else []
    mh = None if not states else (tuple(s[0] for s in states) if kind == "LSTM" else states[0][0])
    th = None if not states else (tuple(s[1] for s in states) if kind == "LSTM" else states[0][1])
    m_out, m_final = mine(R.pack_padded_sequence(mx, lengths, batch_first, enforce_sorted), mh)
    t_out, t_final = theirs(TR.pack_padded_sequence(tx, lengths, batch_first, enforce_sorted), th)
    assert isinstance(m_out, R.PackedSequence) and m_out.batch_sizes.tolist() == t_out.batch_sizes.tolist()
    close(m_out.data, t_out.data, msg="packed output")
    got = [R.pad_packed_sequence(m_out, batch_first)[0], *(m_final if kind == "LSTM" else (m_final,))]
    want = [TR.pad_packed_sequence(t_out, batch_first)[0], *(t_final if kind == "LSTM" else (t_final,))]
    for i, (g, w) in enumerate(zip(got, want)):
        close(g, w, msg=f"result {i}")
    weighted(got, mt, backend).backward()
    weighted(want, torch, backend).backward()
    pairs = [("input", mx, tx), *((f"state {i}", m, t) for i, (m, t) in enumerate(states))]
    pairs += [(n, p, q) for (n, p), (_, q) in zip(mine.named_parameters(), theirs.named_parameters())]
    for name, m, t in pairs:
        assert m.grad is not None, name
        close(m.grad, t.grad, msg=name)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_layers_match_torch(backend: str, kind: str, bidirectional: bool, batch_first: bool,
                                   enforce_sorted: bool) -> None:
    lengths = [4, 2, 1] if enforce_sorted else [2, 4, 1]
    run_packed(kind, backend, lengths, enforce_sorted, with_state=batch_first, num_layers=2,
               bidirectional=bidirectional, batch_first=batch_first)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_packed_relu_rnn_equal_lengths(backend: str) -> None:
    run_packed("RNN", backend, [3, 3], False, with_state=True, nonlinearity="relu", bidirectional=True)


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b == "cuda"])
def test_packed_lstm_cuda(backend: str) -> None:
    run_packed("LSTM", backend, [2, 1], False, with_state=False, size=(2, 2), bidirectional=True)


def test_packed_layer_errors() -> None:
    layer = nn.GRU(3, 4, dtype=mt.float64, device="simple")
    packed = R.pack_sequence([mt.zeros(3, 3, dtype=mt.float64), mt.zeros(2, 3, dtype=mt.float64)])
    with pytest.raises(ShapeError, match="input_size 3"):
        layer(R.pack_sequence([mt.zeros(3, 2, dtype=mt.float64)]))
    with pytest.raises(ShapeError, match=r"\(1, 2, 4\)"):
        layer(packed, mt.zeros(1, 3, 4, dtype=mt.float64))


# --- LSTM projections ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_lstm_proj_padded_matches_torch(backend: str, bidirectional: bool, batch_first: bool) -> None:
    mine, theirs = make_pair("LSTM", backend, 3, 4, num_layers=2, bidirectional=bidirectional,
                             batch_first=batch_first, proj_size=2)
    for (name, p), (_, q) in zip(mine.named_parameters(), theirs.named_parameters()):
        assert p.shape == tuple(q.shape), name
    count = 4 if bidirectional else 2
    mx, tx = pair(RNG.standard_normal((2, 4, 3) if batch_first else (4, 2, 3)), backend)
    (mh, th), (mc, tc) = pair(RNG.standard_normal((count, 2, 2)), backend), pair(RNG.standard_normal((count, 2, 4)), backend)
    m_out, (m_h, m_c) = mine(mx, (mh, mc))
    t_out, (t_h, t_c) = theirs(tx, (th, tc))
    for g, w in ((m_out, t_out), (m_h, t_h), (m_c, t_c)):
        close(g, w)
    weighted([m_out, m_h, m_c], mt, backend).backward()
    weighted([t_out, t_h, t_c], torch, backend).backward()
    for name, m, t in [("input", mx, tx), ("h0", mh, th), ("c0", mc, tc),
                       *((n, p, q) for (n, p), (_, q) in zip(mine.named_parameters(), theirs.named_parameters()))]:
        close(m.grad, t.grad, msg=name)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_lstm_proj_packed_matches_torch(backend: str, enforce_sorted: bool) -> None:
    run_packed("LSTM", backend, [3, 1, 2] if not enforce_sorted else [3, 2, 1], enforce_sorted, with_state=True,
               size=(3, 4), proj_size=3, bidirectional=True, num_layers=2)


def test_lstm_proj_unbatched_init_repr_and_errors() -> None:
    mine, theirs = make_pair("LSTM", "simple", 3, 5, proj_size=2)
    x = RNG.standard_normal((4, 3))
    got, (h, c) = mine(mt.tensor(x, backend="simple"))
    want, (th, tc) = theirs(torch.tensor(x))
    for g, w in ((got, want), (h, th), (c, tc)):
        close(g, w)
    assert repr(mine) == repr(theirs)
    lstm = nn.LSTM(3, 100, proj_size=7, num_layers=2, dtype=mt.float64)
    assert lstm.weight_hr_l1.shape == (7, 100) and lstm.weight_ih_l1.shape == (400, 7)
    assert lstm.weight_hh_l0.shape == (400, 7) and [len(w) for w in lstm.all_weights] == [5, 5]
    values = np.concatenate([p.numpy().ravel() for p in lstm.parameters()])
    assert np.abs(values).max() <= 0.1 and np.abs(values).max() > 0.09  # U(-1/sqrt(100), 1/sqrt(100))
    with pytest.raises(ValueError, match="positive integer or zero"):
        nn.LSTM(3, 4, proj_size=-1)
    with pytest.raises(ValueError, match="smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(TypeError, match="proj_size"):
        nn.LSTM(3, 4, proj_size=1.5)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        nn.RNNBase("GRU", 3, 4, proj_size=2)
    with pytest.raises(ShapeError, match=r"\(1, 2, 2\)"):
        nn.LSTM(3, 4, proj_size=2)(mt.zeros(5, 2, 3), (mt.zeros(1, 2, 4), mt.zeros(1, 2, 4)))


# --- orthogonal ---


def orthogonal_pair(backend: str, shape: tuple[int, ...], orthogonal_map: str | None,
                    use_trivialization: bool) -> tuple[Any, Any]:
    """A bare module with ``weight`` of ``shape`` parametrized by ours and torch's orthogonal from the same weight;
    torch's random completion ``base`` is copied into ours, then both originals are moved off their start (not on the
    diagonal: the householder map truncates it to ints, as torch's, so a step there would zero a column)."""
    w = RNG.standard_normal(shape)
    theirs, mine = torch.nn.Module(), nn.Module()
    theirs.weight = torch.nn.Parameter(torch.tensor(w))
    mine.weight = nn.Parameter(mt.tensor(w, backend=backend))
    TP.orthogonal(theirs, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
    MP.orthogonal(mine, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    if use_trivialization:
        close(mine.weight, theirs.weight, msg="weight at registration")
        mine.parametrizations.weight[0].base = mt.tensor(theirs.parametrizations.weight[0].base.numpy(), backend=backend)
    step = 0.3 * RNG.standard_normal(shape)
    step[..., range(min(shape[-2:])), range(min(shape[-2:]))] = 0  # householder reads the diagonal's signs (as ints)
    with torch.no_grad():
        theirs.parametrizations.weight.original.add_(torch.tensor(step))
    with mt.no_grad():
        mine.parametrizations.weight.original.add_(mt.tensor(step, backend=backend))
    return mine, theirs


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 2)])
@pytest.mark.parametrize("use_trivialization", [True, False])
def test_orthogonal_matches_torch(backend: str, orthogonal_map: str, shape: tuple[int, ...],
                                  use_trivialization: bool) -> None:
    mine, theirs = orthogonal_pair(backend, shape, orthogonal_map, use_trivialization)
    got, want = mine.weight, theirs.weight
    close(got, want)
    q = got.numpy() if shape[-2] >= shape[-1] else np.swapaxes(got.numpy(), -1, -2)
    gram = np.swapaxes(q, -1, -2) @ q  # Q^T Q = I for the tall orientation
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(gram.shape[-1]), gram.shape), atol=1e-12)
    weighted([got], mt, backend).backward()
    weighted([want], torch, backend).backward()
    close(mine.parametrizations.weight.original.grad, theirs.parametrizations.weight.original.grad)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("orthogonal_map, use_trivialization", [("matrix_exp", True), ("cayley", True),
                                                                 ("householder", True), ("householder", False)])
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
def test_orthogonal_assignment(backend: str, orthogonal_map: str, use_trivialization: bool,
                               shape: tuple[int, ...]) -> None:
    module = nn.Linear(shape[1], shape[0], dtype=mt.float64, device=backend)
    MP.orthogonal(module, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
    tall = np.linalg.qr(RNG.standard_normal((max(shape), min(shape))))[0]
    q = tall if shape[0] >= shape[1] else tall.T
    module.weight = mt.tensor(q, backend=backend)
    close(module.weight, q, tol=1e-12)
    out = module(mt.ones(1, shape[1], dtype=mt.float64, backend=backend))
    close(out, np.ones((1, shape[1])) @ q.T + module.bias.numpy(), tol=1e-12)


def test_orthogonal_defaults_and_errors() -> None:
    square, tall = nn.Linear(3, 3, dtype=mt.float64), nn.Linear(2, 4, dtype=mt.float64)
    MP.orthogonal(square)
    MP.orthogonal(tall)
    assert square.parametrizations.weight[0].orthogonal_map.name == "matrix_exp"
    assert tall.parametrizations.weight[0].orthogonal_map.name == "householder"
    with pytest.raises(ValueError, match="shape"):
        square.weight = mt.eye(2, dtype=mt.float64)
    with pytest.raises(ValueError, match='one of "matrix_exp", "cayley", "householder". Got: qr'):
        MP.orthogonal(nn.Linear(3, 3), orthogonal_map="qr")
    with pytest.raises(ValueError, match="Got a tensor of 1 dimensions"):
        MP.orthogonal(nn.Linear(3, 3), name="bias")
    with pytest.raises(ValueError, match="no parameter or buffer with name 'nope'"):
        MP.orthogonal(nn.Linear(3, 3), name="nope")
    fixed = MP.orthogonal(nn.Linear(3, 3, dtype=mt.float64), orthogonal_map="cayley", use_trivialization=False)
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        fixed.weight = mt.eye(3, dtype=mt.float64)
