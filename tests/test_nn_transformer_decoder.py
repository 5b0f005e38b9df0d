"""TransformerDecoderLayer, TransformerDecoder and Transformer against torch with the same weights: outputs, gradients
of the inputs and every parameter, state-dict names, signatures, init, dropout and errors."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor import nn

RNG = np.random.default_rng(7)
E, H, FF = 6, 2, 12  # d_model, nhead, dim_feedforward

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # torch: mixed bool/float masks, nested tensors


def close(mine: Any, theirs: Any, tol: float = 1e-9) -> None:
    a = mine.numpy() if isinstance(mine, mt.Tensor) else np.asarray(mine)
    b = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else np.asarray(theirs)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def pair(a: np.ndarray, backend: str, grad: bool = True) -> tuple[mt.Tensor, torch.Tensor]:
    return mt.tensor(a, backend=backend, requires_grad=grad), torch.tensor(a, requires_grad=grad)


def masks(backend: str, **arrays: np.ndarray | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The same keyword masks for minitensor and torch (None entries are left out)."""
    mine = {k: mt.tensor(v, backend=backend) for k, v in arrays.items() if v is not None}
    theirs = {k: torch.tensor(v) for k, v in arrays.items() if v is not None}
    return mine, theirs


def load(mine: Any, theirs: torch.nn.Module) -> None:
    """Perturb torch's parameters (non-trivial biases and norm weights), then load them into ``mine`` by name."""
    with torch.no_grad():
        for p in theirs.parameters():
            p.add_(torch.randn_like(p) * 0.1)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})


def check_backward(mine: Any, theirs: torch.nn.Module, m_out: mt.Tensor, t_out: torch.Tensor, backend: str,
                   inputs: list[tuple[mt.Tensor, torch.Tensor]], tol: float = 1e-9) -> None:
    """Outputs equal; a random weighting's gradients equal for every input and parameter (by name)."""
    assert m_out.shape == tuple(t_out.shape)
    close(m_out, t_out, tol)
    w = RNG.standard_normal(t_out.shape)
    (m_out * mt.tensor(w, backend=backend)).sum().backward()
    (t_out * torch.tensor(w)).sum().backward()
    for m, t in inputs:
        close(m.grad, t.grad, tol)
    named_mine, named_theirs = list(mine.named_parameters()), list(theirs.named_parameters())
    assert [n for n, _ in named_mine] == [n for n, _ in named_theirs]
    for (name, p), (_, q) in zip(named_mine, named_theirs):
        assert p.grad is not None, name
        close(p.grad, q.grad, tol)


def layer_pair(backend: str, norm_first: bool = False, activation: str = "relu", batch_first: bool = False,
               dropout: float = 0.0) -> tuple[Any, Any]:
    torch.manual_seed(3)
    kwargs: dict[str, Any] = dict(dim_feedforward=FF, dropout=dropout, activation=activation, batch_first=batch_first,
                                  norm_first=norm_first)
    theirs = torch.nn.TransformerDecoderLayer(E, H, dtype=torch.float64, **kwargs)
    mine = nn.TransformerDecoderLayer(E, H, dtype=mt.float64, device=backend, **kwargs)
    load(mine, theirs)
    return mine, theirs


def causal(n: int) -> np.ndarray:
    return np.triu(np.ones((n, n), bool), 1)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(
    "norm_first,activation,batch_first,mode",
    [(False, "relu", False, "bool"), (True, "gelu", True, "float"), (False, "gelu", True, "hint"),
     (True, "relu", False, "none")],
)
def test_decoder_layer_matches_torch(backend: str, norm_first: bool, activation: str, batch_first: bool, mode: str) -> None:
    """Post-/pre-norm, relu/gelu, both layouts; bool masks (causal tgt_mask, memory_mask, key padding), float masks,
    and the tgt_is_causal hint without a mask (torch needs the mask passed with the hint)."""
    mine, theirs = layer_pair(backend, norm_first, activation, batch_first)
    N, T, S = 2, 3, 4
    (mt_tgt, t_tgt), (m_mem, t_mem) = (pair(RNG.standard_normal((N, L, E) if batch_first else (L, N, E)), backend)
                                       for L in (T, S))
    pad_t, pad_s = np.zeros((N, T), bool), np.zeros((N, S), bool)
    pad_t[1, -1] = pad_s[0, -1] = pad_s[1, -2:] = True
    km: dict[str, Any] = {}
    kt: dict[str, Any] = {}
    if mode == "bool":
        blocked = np.zeros((T, S), bool)
        blocked[0, 2] = blocked[2, 0] = True
        km, kt = masks(backend, tgt_mask=causal(T), memory_mask=blocked, tgt_key_padding_mask=pad_t,
                       memory_key_padding_mask=pad_s)
    elif mode == "float":
        km, kt = masks(backend, tgt_mask=RNG.standard_normal((N * H, T, T)), memory_mask=RNG.standard_normal((T, S)),
                       memory_key_padding_mask=pad_s)
    elif mode == "hint":
        km, kt = {"tgt_is_causal": True}, {"tgt_is_causal": True, "tgt_mask": torch.tensor(causal(T))}
    m_out = mine(mt_tgt, m_mem, **km)
    t_out = theirs(t_tgt, t_mem, **kt)
    check_backward(mine, theirs, m_out, t_out, backend, [(mt_tgt, t_tgt), (m_mem, t_mem)])


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_decoder_layer_unbatched_matches_torch(backend: str) -> None:
    mine, theirs = layer_pair(backend, norm_first=True)
    (mt_tgt, t_tgt), (m_mem, t_mem) = pair(RNG.standard_normal((3, E)), backend), pair(RNG.standard_normal((4, E)), backend)
    km, kt = masks(backend, tgt_mask=causal(3), tgt_key_padding_mask=np.array([False, False, True]),
                   memory_key_padding_mask=np.array([False, True, False, False]), memory_mask=RNG.standard_normal((H, 3, 4)))
    check_backward(mine, theirs, mine(mt_tgt, m_mem, **km), theirs(t_tgt, t_mem, **kt), backend,
                   [(mt_tgt, t_tgt), (m_mem, t_mem)])


@pytest.mark.parametrize("with_norm", [False, True])
def test_transformer_decoder_stacks_deep_copies_like_torch(with_norm: bool) -> None:
    backend = "fast"
    mine_layer, theirs_layer = layer_pair(backend, batch_first=True)
    theirs = torch.nn.TransformerDecoder(theirs_layer, 2, norm=torch.nn.LayerNorm(E, dtype=torch.float64) if with_norm else None)
    mine = nn.TransformerDecoder(mine_layer, 2, norm=nn.LayerNorm(E, dtype=mt.float64, device=backend) if with_norm else None)
    assert mine.num_layers == 2 and (mine.norm is None) != with_norm
    first, second = mine.layers[0].multihead_attn.in_proj_weight, mine.layers[1].multihead_attn.in_proj_weight
    assert first is not second and first is not mine_layer.multihead_attn.in_proj_weight
    assert np.array_equal(first.numpy(), second.numpy())
    load(mine, theirs)  # the copies differ from here on
    (mt_tgt, t_tgt), (m_mem, t_mem) = pair(RNG.standard_normal((2, 3, E)), backend), pair(RNG.standard_normal((2, 4, E)), backend)
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=mt.float64, device=backend)
    m_out = mine(mt_tgt, m_mem, tgt_mask=mask)
    t_out = theirs(t_tgt, t_mem, tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(3, dtype=torch.float64))
    check_backward(mine, theirs, m_out, t_out, backend, [(mt_tgt, t_tgt), (m_mem, t_mem)])
    close(mine(mt_tgt, m_mem, tgt_is_causal=True), t_out)  # the hint alone applies the causal mask


@pytest.mark.parametrize("backend", BACKENDS)
def test_transformer_matches_torch(backend: str) -> None:
    """The full model, forward and backward on the CPU backends, forward on cuda (the simulator is slow: the
    backward's kernels are the forward's, and test_gpt differentiates attention on cuda)."""
    torch.manual_seed(4)
    d, N, S, T = (4, 1, 2, 2) if backend == "cuda" else (4, 2, 3, 2)
    kwargs: dict[str, Any] = dict(num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=4, dropout=0.0)
    theirs = torch.nn.Transformer(d, 2, dtype=torch.float64, **kwargs)
    built_on = "simple" if backend == "cuda" else backend  # the simulator is slow at init and loading: move once
    mine = nn.Transformer(d, 2, dtype=mt.float64, device=built_on, **kwargs)
    load(mine, theirs)
    mine.to(backend)
    assert all(p.backend.name == backend for p in mine.parameters())
    (m_src, t_src), (mt_tgt, t_tgt) = pair(RNG.standard_normal((S, N, d)), backend), pair(RNG.standard_normal((T, N, d)), backend)
    pad = np.zeros((N, S), bool)
    pad[-1, 0] = True
    km, kt = masks(backend, src_key_padding_mask=pad, memory_key_padding_mask=pad, tgt_mask=causal(T))
    if backend == "cuda":
        with mt.no_grad(), torch.no_grad():
            close(mine(m_src, mt_tgt, **km), theirs(t_src, t_tgt, **kt))
        return
    check_backward(mine, theirs, mine(m_src, mt_tgt, **km), theirs(t_src, t_tgt, **kt), backend,
                   [(m_src, t_src), (mt_tgt, t_tgt)])


@pytest.mark.parametrize("batch_first,norm_first", [(True, True), (False, False)])
def test_transformer_masks_and_layouts_match_torch(batch_first: bool, norm_first: bool) -> None:
    backend = "simple"
    torch.manual_seed(5)
    kwargs: dict[str, Any] = dict(num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=FF, dropout=0.0,
                                  activation="gelu", batch_first=batch_first, norm_first=norm_first)
    theirs = torch.nn.Transformer(E, H, dtype=torch.float64, **kwargs)
    mine = nn.Transformer(E, H, dtype=mt.float64, device=backend, **kwargs)
    load(mine, theirs)
    N, S, T = 2, 4, 3
    shape = (lambda L: (N, L, E)) if batch_first else (lambda L: (L, N, E))
    (m_src, t_src), (mt_tgt, t_tgt) = pair(RNG.standard_normal(shape(S)), backend), pair(RNG.standard_normal(shape(T)), backend)
    pad_s, pad_t = np.zeros((N, S), bool), np.zeros((N, T), bool)
    pad_s[0, -1] = pad_t[1, -1] = True
    km, kt = masks(backend, src_mask=RNG.standard_normal((S, S)), tgt_mask=causal(T), memory_mask=RNG.standard_normal((T, S)),
                   src_key_padding_mask=pad_s, tgt_key_padding_mask=pad_t, memory_key_padding_mask=pad_s)
    check_backward(mine, theirs, mine(m_src, mt_tgt, **km), theirs(t_src, t_tgt, **kt), backend,
                   [(m_src, t_src), (mt_tgt, t_tgt)])
    _, kt = masks(backend, src_mask=causal(S), tgt_mask=causal(T))
    with torch.no_grad():
        close(mine(m_src, mt_tgt, src_is_causal=True, tgt_is_causal=True), theirs(t_src, t_tgt, **kt))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_generate_square_subsequent_mask_matches_torch(backend: str) -> None:
    for sz in range(5):
        mine = nn.Transformer.generate_square_subsequent_mask(sz, device=backend)
        theirs = torch.nn.Transformer.generate_square_subsequent_mask(sz)
        assert mine.dtype == mt.float32 and mine.shape == (sz, sz) and mine.backend.name == backend
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=mt.float64).dtype == mt.float64
    assert nn.Transformer(8, 2, 0, 0, 16).generate_square_subsequent_mask(1).numpy().tolist() == [[0.0]]


def _signature(fn: Any) -> list[tuple[str, Any]]:
    params = inspect.signature(fn).parameters.values()
    return [(p.name, "relu" if p.name == "activation" else p.default) for p in params if p.kind != p.KEYWORD_ONLY]


@pytest.mark.parametrize("name", ["TransformerDecoderLayer", "TransformerDecoder", "Transformer"])
def test_signatures_match_torch(name: str) -> None:
    mine, theirs = getattr(nn, name), getattr(torch.nn, name)
    assert _signature(mine.__init__) == _signature(theirs.__init__)
    assert _signature(mine.forward) == _signature(theirs.forward)
    assert inspect.signature(nn.TransformerDecoderLayer.__init__).parameters["activation"].default is nn.functional.relu


def test_transformer_state_dict_names_and_xavier_init_like_torch() -> None:
    d, ff = 8, 16
    mine = nn.Transformer(d, 2, 2, 1, ff, bias=False)
    theirs = torch.nn.Transformer(d, 2, 2, 1, ff, bias=False)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert [tuple(v.shape) for v in mine.state_dict().values()] == [tuple(v.shape) for v in theirs.state_dict().values()]
    assert mine.d_model == d and mine.nhead == 2 and not mine.batch_first
    assert isinstance(mine.encoder, nn.TransformerEncoder) and isinstance(mine.encoder.norm, nn.LayerNorm)
    assert isinstance(mine.decoder, nn.TransformerDecoder) and isinstance(mine.decoder.norm, nn.LayerNorm)
    for name, p in mine.named_parameters():
        w = np.abs(p.numpy())
        if p.dims > 1:
            fan_out, fan_in = p.shape
            bound = np.sqrt(6.0 / (fan_in + fan_out))
            assert w.max() <= bound, name
            if name.endswith("linear1.weight"):  # default Linear init is bounded by 1/sqrt(fan_in) < xavier's bound
                assert w.max() > 1.0 / np.sqrt(fan_in), name
        else:
            np.testing.assert_array_equal(w, 1.0, err_msg=name)  # LayerNorm weights untouched
    custom = nn.Linear(d, d)
    model = nn.Transformer(d, 2, 1, 1, ff, custom_decoder=custom)
    assert model.decoder is custom and isinstance(model.encoder, nn.TransformerEncoder)
    assert np.abs(custom.weight.numpy()).max() > 1.0 / np.sqrt(d)  # re-initialised with xavier_uniform_ too


def test_dropout_only_in_training() -> None:
    mine = nn.Transformer(4, 2, 1, 1, 8, dropout=0.5)
    src, tgt = mt.randn(3, 2, 4), mt.randn(2, 2, 4)
    mine.eval()
    a, b = mine(src, tgt), mine(src, tgt)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    mine.train()
    mt.manual_seed(0)
    assert not np.allclose(mine(src, tgt).numpy(), a.numpy())
    layer = nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0)
    mem = mt.randn(3, 2, 4)
    train = layer(tgt, mem)
    np.testing.assert_array_equal(train.numpy(), layer.eval()(tgt, mem).numpy())
    for p in (0.3, 1.0):  # each dropout site is active while training
        layer = nn.TransformerDecoderLayer(4, 2, 8, dropout=p)
        assert all(m.p == p for m in (layer.dropout, layer.dropout1, layer.dropout2, layer.dropout3))
        assert layer.self_attn.dropout == layer.multihead_attn.dropout == p
    layer = nn.TransformerDecoderLayer(4, 2, 8, dropout=1.0, norm_first=True)
    # p=1 zeroes every sub-block's output: the pre-norm layer is the identity while training
    np.testing.assert_array_equal(layer(tgt, mem).numpy(), tgt.numpy())


def test_errors() -> None:
    with pytest.raises(ValueError, match="divisible"):
        nn.TransformerDecoderLayer(6, 4)
    with pytest.raises(ValueError, match="divisible"):
        nn.Transformer(6, 4, 1, 1, 8)
    with pytest.raises(ValueError, match="relu/gelu"):
        nn.TransformerDecoderLayer(4, 2, activation="tanh")
    layer = nn.TransformerDecoderLayer(4, 2, 8)
    tgt, mem = mt.randn(3, 2, 4), mt.randn(5, 2, 4)
    with pytest.raises(mt.ShapeError, match=r"feature number of tgt \(3, 2, 4\) and memory \(5, 2, 6\)"):
        layer(tgt, mt.randn(5, 2, 6))
    with pytest.raises(mt.ShapeError, match=r"batch number of tgt \(3, 2, 4\) and memory \(5, 3, 4\)"):
        layer(tgt, mt.randn(5, 3, 4))
    with pytest.raises(mt.ShapeError, match="both be unbatched"):
        layer(mt.randn(3, 4), mem)
    bad: list[tuple[str, mt.Tensor]] = [
        ("tgt_mask", mt.zeros(2, 3)), ("memory_mask", mt.zeros(3, 3)), ("memory_mask", mt.zeros(2, 3, 5)),
        ("tgt_key_padding_mask", mt.zeros(2, 5, dtype=mt.bool)), ("memory_key_padding_mask", mt.zeros(5, dtype=mt.bool)),
    ]
    for name, mask in bad:
        with pytest.raises(mt.ShapeError, match=f"{name} must have shape"):
            layer(tgt, mem, **{name: mask})
    model = nn.Transformer(4, 2, 1, 1, 8, batch_first=True)
    with pytest.raises(mt.ShapeError, match="batch number of src"):
        model(mt.randn(2, 3, 4), mt.randn(3, 3, 4))
    with pytest.raises(mt.ShapeError, match="must be equal to d_model 4"):
        model(mt.randn(2, 3, 4), mt.randn(2, 3, 6))
    with pytest.raises(mt.ShapeError, match="both be unbatched"):
        model(mt.randn(3, 4), mt.randn(2, 3, 4))
