"""``nn.MultiheadAttention``: torch's parameters (packed ``in_proj_weight``, or separate ``q/k/v_proj_weight`` when
``kdim``/``vdim`` differ from ``embed_dim``; ``in_proj_bias``; ``out_proj``; ``bias_k``/``bias_v`` with
``add_bias_kv``) and forward, which is ``F.multi_head_attention_forward`` on them (:mod:`minitensor.nn.attention_functional`).

Masks as in PyTorch: bool ``attn_mask`` and ``key_padding_mask`` are True where a query may NOT attend, float masks
are added to the scores.
"""

from __future__ import annotations

from typing import Any

from ..creation import empty
from ..module import Module, Parameter
from ..tensor import Tensor
from . import init
from .attention import _causal
from .attention_functional import multi_head_attention_forward
from .common import check_sizes, factory
from .linear import Linear

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Multi-head attention with torch's parameters and constructor.

    ``forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False)`` returns ``(output, weights)``; inputs are (L, N, E), or
    (N, L, E) with ``batch_first``, or unbatched (L, E). ``weights`` (N, L, S) is averaged over heads unless
    ``average_attn_weights=False`` ((N, H, L, S)), and None when ``need_weights=False``. ``is_causal`` without an
    ``attn_mask`` applies the causal mask (PyTorch requires the mask with the hint).
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None, dtype: Any = None,
                 *, backend: Any = None):
        super().__init__()
        check_sizes("MultiheadAttention", embed_dim=embed_dim, num_heads=num_heads)
        if num_heads == 0 or embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim {embed_dim} must be divisible by num_heads {num_heads}")
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"dropout probability must be in [0, 1], got {dropout}")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.head_dim = embed_dim // num_heads
        kw = factory(device, dtype, backend)
        self.in_proj_weight: Parameter | None
        self.q_proj_weight: Parameter | None
        self.k_proj_weight: Parameter | None
        self.v_proj_weight: Parameter | None
        self.bias_k: Parameter | None
        self.bias_v: Parameter | None
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **kw))
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **kw))
            self.in_proj_weight = None
        self.in_proj_bias = Parameter(empty(3 * embed_dim, **kw)) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """torch's init: xavier_uniform_ input projections, zero biases, xavier_normal_ bias_k and bias_v."""
        for weight in (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
            if weight is not None:
                init.xavier_uniform_(weight)
        for bias in (self.in_proj_bias, self.out_proj.bias):
            if bias is not None:
                init.zeros_(bias)
        for extra in (self.bias_k, self.bias_v):
            if extra is not None:
                init.xavier_normal_(extra)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
                need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        batched = query.dims == 3
        if self.batch_first and batched:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        if is_causal and attn_mask is None:  # the causal mask the hint stands for: key j > query i is masked
            attn_mask = _causal(query.shape[0], key.shape[0], query)
        separate = not self._qkv_same_embed_dim
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        return out, weights

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}, batch_first={self.batch_first}"
