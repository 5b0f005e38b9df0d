"""Attention and transformer blocks against torch with the same weights: outputs, attention weights and gradients."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from conftest import CPU_BACKENDS

import minitensor as mt
from minitensor import nn
from minitensor.nn import functional as F

RNG = np.random.default_rng(5)


def close(mine: Any, theirs: Any, tol: float = 1e-10) -> None:
    a = mine.numpy() if isinstance(mine, mt.Tensor) else np.asarray(mine)
    b = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else np.asarray(theirs)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def pair(a: np.ndarray, backend: str, grad: bool = True) -> tuple[mt.Tensor, torch.Tensor]:
    return mt.tensor(a, backend=backend, requires_grad=grad), torch.tensor(a, requires_grad=grad)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("mask", ["none", "bool", "float", "causal"])
def test_scaled_dot_product_attention_matches_torch(backend: str, mask: str) -> None:
    L, S = 3, 4
    (mq, tq), (mk, tk), (mv, tv) = (pair(RNG.standard_normal(s), backend) for s in ((2, 2, L, 5), (2, 2, S, 5), (2, 2, S, 3)))
    kwargs_m: dict[str, Any] = {"scale": 0.7} if mask == "none" else {}
    kwargs_t: dict[str, Any] = dict(kwargs_m)
    if mask == "bool":
        allowed = RNG.random((L, S)) < 0.7
        allowed[:, 0] = True  # every query sees at least one key
        kwargs_m["attn_mask"], kwargs_t["attn_mask"] = mt.tensor(allowed, backend=backend), torch.tensor(allowed)
    elif mask == "float":
        bias = RNG.standard_normal((2, 1, L, S))
        kwargs_m["attn_mask"], kwargs_t["attn_mask"] = mt.tensor(bias, backend=backend), torch.tensor(bias)
    elif mask == "causal":
        kwargs_m["is_causal"] = kwargs_t["is_causal"] = True
    mine = F.scaled_dot_product_attention(mq, mk, mv, **kwargs_m)
    theirs = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, **kwargs_t)
    close(mine, theirs)
    w = RNG.standard_normal(theirs.shape)
    (mine * mt.tensor(w, backend=backend)).sum().backward()
    (theirs * torch.tensor(w)).sum().backward()
    for m, t in ((mq, tq), (mk, tk), (mv, tv)):
        close(m.grad, t.grad)


def _mha_pair(backend: str, E: int = 6, H: int = 2, bias: bool = True, batch_first: bool = False) -> tuple[Any, Any]:
    torch.manual_seed(1)
    theirs = torch.nn.MultiheadAttention(E, H, bias=bias, batch_first=batch_first, dtype=torch.float64)
    if bias:  # torch zeroes them at init: make them matter
        with torch.no_grad():
            theirs.in_proj_bias.normal_()
            theirs.out_proj.bias.normal_()
    mine = nn.MultiheadAttention(E, H, bias=bias, batch_first=batch_first, dtype=mt.float64, device=backend)
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    assert list(mine.state_dict()) == list(theirs.state_dict())
    return mine, theirs


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("masks", ["none", "bool", "float+padding", "causal"])
def test_multihead_attention_matches_torch(backend: str, batch_first: bool, masks: str) -> None:
    mine, theirs = _mha_pair(backend, batch_first=batch_first)
    N, L, S, E = 3, 4, 5, 6
    shape_q, shape_kv = ((N, L, E), (N, S, E)) if batch_first else ((L, N, E), (S, N, E))
    (mq, tq), (mk, tk), (mv, tv) = (pair(RNG.standard_normal(s), backend) for s in (shape_q, shape_kv, shape_kv))
    km: dict[str, Any] = {}
    kt: dict[str, Any] = {}
    if masks == "bool":
        blocked = np.triu(np.ones((L, S), bool), 2)
        km["attn_mask"], kt["attn_mask"] = mt.tensor(blocked, backend=backend), torch.tensor(blocked)
    elif masks == "float+padding":
        add = RNG.standard_normal((N * 2, L, S))
        pad = np.zeros((N, S), bool)
        pad[1, 3:] = True
        km["attn_mask"], kt["attn_mask"] = mt.tensor(add, backend=backend), torch.tensor(add)
        km["key_padding_mask"], kt["key_padding_mask"] = mt.tensor(pad, backend=backend), torch.tensor(pad)
    elif masks == "causal":
        causal = np.triu(np.ones((L, S), bool), 1)
        km["is_causal"] = True  # minitensor builds the causal mask itself; torch needs it passed with the hint
        kt["attn_mask"], kt["is_causal"] = torch.tensor(causal), True
    m_out, m_w = mine(mq, mk, mv, average_attn_weights=masks != "bool", **km)
    t_out, t_w = theirs(tq, tk, tv, average_attn_weights=masks != "bool", **kt)
    close(m_out, t_out)
    close(m_w, t_w)
    w = RNG.standard_normal(t_out.shape)
    (m_out * mt.tensor(w, backend=backend)).sum().backward()
    (t_out * torch.tensor(w)).sum().backward()
    for m, t in ((mq, tq), (mk, tk), (mv, tv)):
        close(m.grad, t.grad)
    for (name, p), (_, q) in zip(mine.named_parameters(), theirs.named_parameters()):
        close(p.grad, q.grad), name


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("options", [{"add_bias_kv": True}, {"add_zero_attn": True}, {"kdim": 4, "vdim": 3},
                                     {"kdim": 5, "add_bias_kv": True, "add_zero_attn": True, "batch_first": True}])
def test_multihead_attention_options_match_torch(backend: str, options: dict[str, Any]) -> None:
    """add_bias_kv, add_zero_attn and kdim/vdim (separate q/k/v projection weights): torch's parameters, state-dict
    keys in torch's order, outputs, weights and every gradient, with a padding mask (extended for the extra keys)."""
    E, H, N, L, S = 6, 2, 2, 3, 4
    torch.manual_seed(2)
    theirs = torch.nn.MultiheadAttention(E, H, dtype=torch.float64, **options)
    with torch.no_grad():
        theirs.in_proj_bias.normal_()
    mine = nn.MultiheadAttention(E, H, dtype=mt.float64, device=backend, **options)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    first = options.get("batch_first", False)
    shapes = [(L, E), (S, options.get("kdim", E)), (S, options.get("vdim", E))]
    (mq, tq), (mk, tk), (mv, tv) = (pair(RNG.standard_normal((N, *s) if first else (s[0], N, s[1])), backend) for s in shapes)
    pad = np.zeros((N, S), bool)
    pad[1, 2:] = True
    m_out, m_w = mine(mq, mk, mv, key_padding_mask=mt.tensor(pad, backend=backend), average_attn_weights=False)
    t_out, t_w = theirs(tq, tk, tv, key_padding_mask=torch.tensor(pad), average_attn_weights=False)
    close(m_out, t_out)
    close(m_w, t_w)
    w = RNG.standard_normal(t_out.shape)
    (m_out * mt.tensor(w, backend=backend)).sum().backward()
    (t_out * torch.tensor(w)).sum().backward()
    for m, t in ((mq, tq), (mk, tk), (mv, tv)):
        close(m.grad, t.grad)
    for (name, p), (their_name, q) in zip(mine.named_parameters(), theirs.named_parameters()):
        assert name == their_name
        close(p.grad, q.grad)


def test_multihead_attention_unbatched_no_bias_and_errors() -> None:
    mine, theirs = _mha_pair(mt.default_backend_name(), bias=False)
    x = RNG.standard_normal((4, 6))
    m_out, m_w = mine(mt.tensor(x), mt.tensor(x), mt.tensor(x), need_weights=False)
    t_out, _ = theirs(torch.tensor(x), torch.tensor(x), torch.tensor(x), need_weights=False)
    close(m_out, t_out)
    assert m_w is None
    with pytest.raises(ValueError, match="divisible"):
        nn.MultiheadAttention(6, 4)
    with pytest.raises(mt.ShapeError, match="key_padding_mask"):
        mine(mt.tensor(x), mt.tensor(x), mt.tensor(x), key_padding_mask=mt.zeros(3, dtype=mt.bool))
    with pytest.raises(mt.ShapeError, match="attention shapes"):
        F.scaled_dot_product_attention(mt.ones(2, 3), mt.ones(2, 4), mt.ones(2, 4))


def test_attention_dropout_only_in_training() -> None:
    mine = nn.MultiheadAttention(4, 2, dropout=0.5)
    x = mt.randn(3, 2, 4)
    mine.eval()
    a, _ = mine(x, x, x)
    b, _ = mine(x, x, x)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    mine.train()
    mt.manual_seed(0)
    c, w = mine(x, x, x)
    assert not np.allclose(c.numpy(), a.numpy())


def test_multihead_attention_on_cuda() -> None:
    if "cuda" not in mt.backend_names():
        pytest.skip("no cuda backend")
    mine, theirs = _mha_pair("cuda", E=2, H=1)
    x = RNG.standard_normal((2, 1, 2))
    mx, tx = pair(x, "cuda")
    m_out, _ = mine(mx, mx, mx)
    t_out, _ = theirs(tx, tx, tx)
    close(m_out, t_out)
    m_out.sum().backward()
    t_out.sum().backward()
    close(mx.grad, tx.grad)


def _encoder_pair(backend: str, norm_first: bool, activation: str, batch_first: bool) -> tuple[Any, Any]:
    torch.manual_seed(2)
    kwargs = dict(dim_feedforward=12, dropout=0.0, activation=activation, batch_first=batch_first, norm_first=norm_first)
    theirs = torch.nn.TransformerEncoderLayer(6, 2, dtype=torch.float64, **kwargs)  # type: ignore[arg-type]
    with torch.no_grad():
        for p in theirs.parameters():
            p.add_(torch.randn_like(p) * 0.1)  # non-trivial biases and norm weights
    mine = nn.TransformerEncoderLayer(6, 2, dtype=mt.float64, device=backend, **kwargs)  # type: ignore[arg-type]
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    assert list(mine.state_dict()) == list(theirs.state_dict())
    return mine, theirs


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("norm_first,activation,batch_first", [(False, "relu", False), (True, "gelu", True)])
def test_transformer_encoder_layer_matches_torch(backend: str, norm_first: bool, activation: str, batch_first: bool) -> None:
    """A state dict exported from torch's TransformerEncoderLayer loads by name and gives the same outputs and grads."""
    mine, theirs = _encoder_pair(backend, norm_first, activation, batch_first)
    x = RNG.standard_normal((3, 4, 6))
    pad = np.zeros((4 if not batch_first else 3, 3 if not batch_first else 4), bool)
    pad[1, -1] = True
    mx, tx = pair(x, backend)
    causal = np.triu(np.ones((3 if not batch_first else 4,) * 2, bool), 1)
    m_out = mine(mx, src_mask=mt.tensor(causal, backend=backend), src_key_padding_mask=mt.tensor(pad, backend=backend))
    t_out = theirs(tx, src_mask=torch.tensor(causal), src_key_padding_mask=torch.tensor(pad))
    close(m_out, t_out, 1e-9)
    w = RNG.standard_normal(t_out.shape)
    (m_out * mt.tensor(w, backend=backend)).sum().backward()
    (t_out * torch.tensor(w)).sum().backward()
    close(mx.grad, tx.grad, 1e-9)
    for (name, p), (_, q) in zip(mine.named_parameters(), theirs.named_parameters()):
        close(p.grad, q.grad, 1e-9), name


def test_transformer_encoder_stacks_deep_copies_like_torch() -> None:
    mine_layer, theirs_layer = _encoder_pair("fast", True, "gelu", True)
    theirs = torch.nn.TransformerEncoder(theirs_layer, 2, norm=torch.nn.LayerNorm(6, dtype=torch.float64), enable_nested_tensor=False)
    mine = nn.TransformerEncoder(mine_layer, 2, norm=nn.LayerNorm(6, dtype=mt.float64))
    assert list(mine.state_dict()) == list(theirs.state_dict())
    first, second = mine.layers[0].linear1.weight, mine.layers[1].linear1.weight
    assert first is not second and first.unique_id != second.unique_id and np.array_equal(first.numpy(), second.numpy())
    with torch.no_grad():
        for p in theirs.parameters():
            p.add_(torch.randn_like(p) * 0.1)  # the copies differ from here on
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = RNG.standard_normal((2, 3, 6))
    mx, tx = pair(x, "fast")
    m_out, t_out = mine(mx, is_causal=True, mask=mt.tensor(np.triu(np.ones((3, 3), bool), 1))), theirs(
        tx, is_causal=True, mask=torch.tensor(np.triu(np.ones((3, 3), bool), 1))
    )
    close(m_out, t_out, 1e-9)
    m_out.sum().backward()
    t_out.sum().backward()
    close(mx.grad, tx.grad, 1e-9)
