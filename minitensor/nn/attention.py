"""Attention: ``F.scaled_dot_product_attention`` and the mask helpers that ``F.multi_head_attention_forward``
(:mod:`minitensor.nn.attention_functional`) and ``nn.MultiheadAttention`` (:mod:`minitensor.nn.multihead_attention`)
share.

Mask conventions follow PyTorch, which uses two opposite ones:

* ``scaled_dot_product_attention``: a bool ``attn_mask`` is True where a query MAY attend;
* ``MultiheadAttention``: bool ``attn_mask`` and ``key_padding_mask`` are True where a query may NOT attend.

Float masks are added to the scores in both. A query row with every key masked gives NaN, as in PyTorch.
"""

from __future__ import annotations

import math

from ..creation import ones, zeros
from ..dtypes import bool_
from ..errors import DTypeError, ShapeError
from ..functions_reduce import MatMul
from ..tensor import Tensor
from ..tensor_softmax import fused_softmax
from .activation import softmax
from .common import tensor_args
from .dropout import dropout

__all__ = ["scaled_dot_product_attention"]


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
