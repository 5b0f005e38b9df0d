"""Attention: ``F.scaled_dot_product_attention`` and ``nn.MultiheadAttention`` (torch's parameters and masks).

Mask conventions follow PyTorch, which uses two opposite ones:

* ``scaled_dot_product_attention``: a bool ``attn_mask`` is True where a query MAY attend;
* ``MultiheadAttention``: bool ``attn_mask`` and ``key_padding_mask`` are True where a query may NOT attend.

Float masks are added to the scores in both. A query row with every key masked gives NaN, as in PyTorch.
"""

from __future__ import annotations

import math
from typing import Any

from ..creation import empty, ones, zeros
from ..dtypes import bool_
from ..errors import DTypeError, ShapeError
from ..functions_reduce import MatMul
from ..module import Module, Parameter
from ..tensor import Tensor
from ..tensor_softmax import fused_softmax
from . import init
from .activation import softmax
from .common import check_sizes, factory, tensor_args
from .dropout import dropout
from .linear import Linear, linear

__all__ = ["scaled_dot_product_attention", "MultiheadAttention"]


def _zeros(shape: tuple[int, ...], like: Tensor) -> Tensor:
    return zeros(*shape, dtype=like.dtype, backend=like.backend)


def _additive(mask: Tensor, like: Tensor, masked_when: bool) -> Tensor:
    """``mask`` as a float tensor to add to attention scores: bool entries equal to ``masked_when`` become -inf."""
    if mask.dtype == bool_:
        blocked = mask if masked_when else mask.logical_not()
        return _zeros(mask.shape, like).masked_fill(blocked, float("-inf"))
    if not mask.is_floating_point():
        raise DTypeError(f"attention masks must be bool or floating point, got {mask.dtype}")
    return mask if mask.dtype == like.dtype else mask.to(like.dtype)


def _causal(length: int, source: int, like: Tensor) -> Tensor:
    """(L, S) additive mask that lets query i see keys 0..i (top-left aligned, as torch's ``is_causal``)."""
    allowed = ones(length, source, dtype=bool_, backend=like.backend).tril()
    return _zeros((length, source), like).masked_fill(allowed.logical_not(), float("-inf"))


@tensor_args("query", "key", "value")
def scaled_dot_product_attention(
    query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None, dropout_p: float = 0.0,
    is_causal: bool = False, scale: float | None = None, enable_gqa: bool = False,
) -> Tensor:
    """softmax(Q K^T * scale + mask) V over (..., L, E) queries, (..., S, E) keys and (..., S, Ev) values.

    ``scale`` defaults to 1/sqrt(E). A bool ``attn_mask`` is True where attention is allowed; a float one is
    added. ``is_causal`` masks key j > query i (and may not be combined with ``attn_mask``). ``dropout_p`` drops
    attention weights (always: pass 0.0 in eval, as in PyTorch).
    """
    if enable_gqa:
        raise NotImplementedError("scaled_dot_product_attention(enable_gqa=True) is not supported")
    if query.dims < 2 or key.dims < 2 or value.dims < 2:
        raise ShapeError(f"attention needs (..., L, E) tensors, got query {query.shape}, key {key.shape}, value {value.shape}")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise ShapeError(
            f"attention shapes do not fit: query {query.shape} and key {key.shape} need the same last dim, "
            f"key and value {value.shape} the same length (dim -2)"
        )
    if is_causal and attn_mask is not None:
        raise ValueError("scaled_dot_product_attention: pass either attn_mask or is_causal=True, not both")
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = query @ key.transpose(-2, -1)
    if attn_mask is None and scores.dtype.kind == "f":  # scale and causal mask folded into one softmax kernel
        weights = fused_softmax(scores, -1, scale=factor, causal=is_causal)
    else:
        scores = scores * factor
        if is_causal:
            scores = scores + _causal(query.shape[-2], key.shape[-2], scores)
        elif attn_mask is not None:
            scores = scores + _additive(attn_mask, scores, masked_when=False)
        weights = softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return _weighted(weights, value, 4)


def _weighted(weights: Tensor, value: Tensor, dims: int) -> Tensor:
    """``weights @ value``; for ``dims``-D operands with the same batch dims stored with the query dim (-2) outside
    the last batch dim, as PyTorch's CPU attention stores it: (B, H, L, E) laid out as (B, L, H, E), so merging the
    heads (``transpose(1, 2).contiguous().view(B, L, H * E)``) copies nothing."""
    if weights.dims != dims or value.dims != dims or weights.shape[:-2] != value.shape[:-2] or weights.dtype != value.dtype:
        return weights @ value
    order = (*range(dims - 3), dims - 2, dims - 3, dims - 1)
    return MatMul.apply(weights, value, order)  # type: ignore[no-any-return]


class MultiheadAttention(Module):
    """Multi-head attention with torch's parameters: ``in_proj_weight`` (3E, E), ``in_proj_bias`` (3E,), ``out_proj``.

    ``forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False)`` returns ``(output, weights)``; inputs are (L, N, E), or
    (N, L, E) with ``batch_first``, or unbatched (L, E). ``weights`` (N, L, S) is averaged over heads unless
    ``average_attn_weights=False`` ((N, H, L, S)), and None when ``need_weights=False``.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None, dtype: Any = None,
                 *, backend: Any = None):
        super().__init__()
        check_sizes("MultiheadAttention", embed_dim=embed_dim, num_heads=num_heads)
        if num_heads == 0 or embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim {embed_dim} must be divisible by num_heads {num_heads}")
        if add_bias_kv or add_zero_attn or (kdim not in (None, embed_dim)) or (vdim not in (None, embed_dim)):
            raise NotImplementedError("MultiheadAttention: add_bias_kv, add_zero_attn and kdim/vdim != embed_dim are not supported")
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"dropout probability must be in [0, 1], got {dropout}")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        kw = factory(device, dtype, backend)
        self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **kw))
        self.in_proj_bias = Parameter(empty(3 * embed_dim, **kw)) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, **kw)
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """torch's init: xavier_uniform_ in_proj_weight, zero biases."""
        init.xavier_uniform_(self.in_proj_weight)
        for bias in (self.in_proj_bias, self.out_proj.bias):
            if bias is not None:
                init.zeros_(bias)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
                need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        unbatched = query.dims == 2
        if unbatched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            key_padding_mask = key_padding_mask.unsqueeze(0) if key_padding_mask is not None else None
        elif self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        # now (L, N, E) like torch's internal layout
        if query.dims != 3 or key.dims != 3 or value.dims != 3 or query.shape[2] != self.embed_dim:
            raise ShapeError(f"MultiheadAttention({self.embed_dim}) got query {query.shape}, key {key.shape}, value {value.shape}")
        L, N, E = query.shape
        S = key.shape[0]
        if key.shape[:2] != (S, N) or value.shape[:2] != (S, N) or key.shape[2] != E or value.shape[2] != E:
            raise ShapeError(f"MultiheadAttention: key {key.shape} and value {value.shape} do not fit query {query.shape}")
        w, b = self.in_proj_weight, self.in_proj_bias
        q = linear(query, w[:E], b[:E] if b is not None else None)
        k = linear(key, w[E : 2 * E], b[E : 2 * E] if b is not None else None)
        v = linear(value, w[2 * E :], b[2 * E :] if b is not None else None)
        H, D = self.num_heads, self.head_dim
        q, k, v = (t.reshape(t.shape[0], N * H, D).transpose(0, 1) for t in (q, k, v))  # (N*H, L|S, D)
        scores = (q @ k.transpose(1, 2)) * (1.0 / math.sqrt(D))  # (N*H, L, S)
        mask = self._mask(attn_mask, key_padding_mask, is_causal, N, L, S, scores)
        if mask is not None:
            scores = scores + mask
        weights = softmax(scores, -1)
        if self.training and self.dropout > 0.0:
            weights = dropout(weights, self.dropout, training=True)
        out = _weighted(weights, v, 3).transpose(0, 1).reshape(L, N, E)
        out = self.out_proj(out)
        if unbatched:
            out = out.squeeze(1)
        elif self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        per_head = weights.view(N, H, L, S)
        shown = per_head.mean(1) if average_attn_weights else per_head
        return out, (shown.squeeze(0) if unbatched else shown)

    def _mask(self, attn_mask: Tensor | None, key_padding_mask: Tensor | None, is_causal: bool,
              N: int, L: int, S: int, scores: Tensor) -> Tensor | None:
        """Every mask as one additive tensor broadcasting against (N*H, L, S) scores; None when there is none."""
        H = self.num_heads
        mask = None
        if attn_mask is not None:
            if attn_mask.shape not in ((L, S), (N * H, L, S)):
                raise ShapeError(f"attn_mask must have shape ({L}, {S}) or ({N * H}, {L}, {S}), got {attn_mask.shape}")
            mask = _additive(attn_mask, scores, masked_when=True)
        elif is_causal:
            mask = _causal(L, S, scores)
        if key_padding_mask is not None:
            if key_padding_mask.shape != (N, S):
                raise ShapeError(f"key_padding_mask must have shape ({N}, {S}), got {key_padding_mask.shape}")
            padding = _additive(key_padding_mask, scores, masked_when=True)  # (N, S) -> (N*H, 1, S)
            padding = padding.view(N, 1, 1, S).expand(N, H, 1, S).reshape(N * H, 1, S)
            mask = padding if mask is None else mask + padding
        return mask

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}, batch_first={self.batch_first}"
