"""``F.multi_head_attention_forward``: multi-head attention from explicit weights, with PyTorch's signature, masks and
options (packed or separate input projections, ``bias_k``/``bias_v``, ``add_zero_attn``, ``static_k``/``static_v``).

Layout as in PyTorch: query (L, N, E), key and value (S, N, E), or unbatched (L, E) and (S, E); bool masks are True
where a query may NOT attend, float masks are added to the scores (the conventions of ``nn.MultiheadAttention``,
whose mask helpers this module shares).
"""

from __future__ import annotations

import math

from ..creation import zeros
from ..errors import ShapeError
from ..tensor import Tensor
from ..tensor_join import cat
from .activation import softmax
from .attention import _additive, _causal, _weighted
from .common import tensor_args
from .dropout import dropout
from .linear import linear

__all__ = ["multi_head_attention_forward"]


@tensor_args("query", "key", "value")
def multi_head_attention_forward(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
    in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None, bias_v: Tensor | None,
    add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None, training: bool = True,
    key_padding_mask: Tensor | None = None, need_weights: bool = True, attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None, static_k: Tensor | None = None, static_v: Tensor | None = None,
    average_attn_weights: bool = True, is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """(attention output (L, N, E), weights (N, L, S) averaged over heads, (N, H, L, S) when not
    ``average_attn_weights``, None when not ``need_weights``): softmax(q k^T / sqrt(E / H) + masks) v per head, then
    the output projection. ``is_causal`` is a hint that ``attn_mask`` (required with it) is causal: as in PyTorch, the
    causal mask replaces ``attn_mask`` when there is no ``key_padding_mask`` and no weights are returned."""
    batched = _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        key_padding_mask = key_padding_mask.unsqueeze(0) if key_padding_mask is not None else None
    tgt_len, bsz, embed_dim = query.shape
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
                           "`generate_square_subsequent_mask` to create this mask.")
    if embed_dim != embed_dim_to_check:
        raise ShapeError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    if num_heads <= 0 or embed_dim % num_heads:
        raise ShapeError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    head_dim = embed_dim // num_heads
    padding = _additive(key_padding_mask, query, masked_when=True) if key_padding_mask is not None else None
    causal = is_causal and padding is None and not need_weights  # the hint replaces attn_mask (built below)
    mask = _additive(attn_mask, query, masked_when=True) if attn_mask is not None and not causal else None
    q, k, v = _in_projections(query, key, value, in_proj_weight, in_proj_bias, use_separate_proj_weight,
                              (q_proj_weight, k_proj_weight, v_proj_weight))
    mask = _batched_mask(mask, tgt_len, key.shape[0], bsz * num_heads)
    if bias_k is not None or bias_v is not None:
        if bias_k is None or bias_v is None:
            raise ValueError(f"bias_k and bias_v must be given together, got only {'bias_k' if bias_v is None else 'bias_v'}")
        if static_k is not None or static_v is not None:
            raise ValueError("bias cannot be added to static key or value (bias_k/bias_v with static_k/static_v)")
        k, v = cat([k, bias_k.repeat(1, bsz, 1)]), cat([v, bias_v.repeat(1, bsz, 1)])
        mask, padding = _pad_column(mask), _pad_column(padding)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _heads(v, static_v, "static_v", bsz * num_heads, head_dim)
    if add_zero_attn:
        k = cat([k, zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype, backend=k.backend)], 1)
        v = cat([v, zeros(bsz * num_heads, 1, head_dim, dtype=v.dtype, backend=v.backend)], 1)
        mask, padding = _pad_column(mask), _pad_column(padding)
    src_len = k.shape[1]
    if causal:
        mask = _causal(tgt_len, src_len, q)
    if padding is not None:
        if padding.shape != (bsz, src_len):
            raise ShapeError(f"expected key_padding_mask of shape {(bsz, src_len)}, got {padding.shape}")
        padding = padding.view(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len).reshape(bsz * num_heads, 1, src_len)
        mask = padding if mask is None else mask + padding
    scores = (q * math.sqrt(1.0 / head_dim)) @ k.transpose(1, 2)
    weights = softmax(scores if mask is None else scores + mask, -1)
    if training and dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    out = _weighted(weights, v, 3).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, out_proj_weight.shape[0])
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    per_head = weights.view(bsz, num_heads, tgt_len, src_len)
    shown = per_head.mean(1) if average_attn_weights else per_head
    return out, (shown.squeeze(0) if not batched else shown)


def _check_shapes(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                  attn_mask: Tensor | None, num_heads: int) -> bool:
    """Whether the inputs are batched (3-D query) or not (2-D); ShapeError for dims that fit neither."""
    if query.dims not in (2, 3):
        raise ShapeError(f"query should be unbatched 2D or batched 3D tensor but received {query.dims}-D query tensor")
    batched = query.dims == 3
    if key.dims != query.dims or value.dims != query.dims:
        raise ShapeError(f"for {query.dims}-D query, expected key and value to be {query.dims}-D but found "
                         f"{key.dims}-D and {value.dims}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dims != query.dims - 1:
        raise ShapeError(f"for {query.dims}-D query, expected key_padding_mask to be None or {query.dims - 1}-D but "
                         f"found {key_padding_mask.dims}-D tensor instead")
    if attn_mask is not None and attn_mask.dims not in (2, 3):
        raise ShapeError(f"expected attn_mask to be None, 2-D or 3-D but found {attn_mask.dims}-D tensor instead")
    if not batched and attn_mask is not None and attn_mask.dims == 3:
        expected = (num_heads, query.shape[0], key.shape[0])
        if attn_mask.shape != expected:
            raise ShapeError(f"expected a 3-D attn_mask of shape {expected} for unbatched input, got {attn_mask.shape}")
    return batched


def _in_projections(query: Tensor, key: Tensor, value: Tensor, in_proj_weight: Tensor | None,
                    in_proj_bias: Tensor | None, separate: bool,
                    weights: tuple[Tensor | None, Tensor | None, Tensor | None]) -> tuple[Tensor, Tensor, Tensor]:
    """q, k, v: the rows E, 2E, 3E of the packed (3E, E) ``in_proj_weight`` (and bias), or the separate weights
    (key and value may then have other embedding sizes) with the packed bias split in three."""
    e = query.shape[-1]
    bias = [None, None, None] if in_proj_bias is None else [in_proj_bias[i * e : (i + 1) * e] for i in range(3)]
    if separate:
        if any(w is None for w in weights):
            raise ValueError("use_separate_proj_weight is True but q_proj_weight, k_proj_weight or v_proj_weight is None")
        if key.shape[:2] != value.shape[:2]:
            raise ShapeError(f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}")
        projections = weights
    else:
        if in_proj_weight is None:
            raise ValueError("use_separate_proj_weight is False but in_proj_weight is None")
        if key.shape != value.shape:
            raise ShapeError(f"key shape {key.shape} does not match value shape {value.shape}")
        projections = (in_proj_weight[:e], in_proj_weight[e : 2 * e], in_proj_weight[2 * e :])
    q, k, v = (linear(x, w, b) for x, w, b in zip((query, key, value), projections, bias))  # type: ignore[arg-type]
    return q, k, v


def _batched_mask(mask: Tensor | None, tgt_len: int, src_len: int, heads: int) -> Tensor | None:
    """An additive (L, S) or (N*H, L, S) mask as 3-D (1 or N*H, L, S); ShapeError for another shape."""
    if mask is None:
        return None
    if mask.dims == 2:
        if mask.shape != (tgt_len, src_len):
            raise ShapeError(f"The shape of the 2D attn_mask is {mask.shape}, but should be {(tgt_len, src_len)}.")
        return mask.unsqueeze(0)
    if mask.shape != (heads, tgt_len, src_len):
        raise ShapeError(f"The shape of the 3D attn_mask is {mask.shape}, but should be {(heads, tgt_len, src_len)}.")
    return mask


def _pad_column(mask: Tensor | None) -> Tensor | None:
    """An additive mask with one more key (a zero last column, the key always allowed); None stays None."""
    if mask is None:
        return None
    return cat([mask, zeros(*mask.shape[:-1], 1, dtype=mask.dtype, backend=mask.backend)], -1)


def _heads(x: Tensor, static: Tensor | None, name: str, heads: int, head_dim: int) -> Tensor:
    """Keys or values (S, N, E) as (N*H, S, E/H), or the given ``static`` ones (N*H, S, E/H) after checking."""
    if static is None:
        return x.reshape(x.shape[0], heads, head_dim).transpose(0, 1)
    if static.dims != 3 or static.shape[0] != heads or static.shape[2] != head_dim:
        raise ShapeError(f"expecting {name} of shape ({heads}, S, {head_dim}), but got {static.shape}")
    return static
