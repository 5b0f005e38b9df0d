"""Transformer encoder blocks with torch's submodule names: ``nn.TransformerEncoderLayer``, ``nn.TransformerEncoder``.

A state dict exported from the same PyTorch architecture loads by name (``self_attn.in_proj_weight``,
``linear1.weight``, ``norm1.weight`` ...). :class:`TransformerLayerBase` holds what the encoder and decoder layers
(``transformer_decoder.py``) share: the activation lookup, the feed-forward block and the residual/LayerNorm wiring.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ..module import Module
from ..tensor import Tensor
from .activation import gelu, relu
from .common import factory
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .multihead_attention import MultiheadAttention
from .norm import LayerNorm

__all__ = ["TransformerEncoderLayer", "TransformerEncoder"]

_ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {"relu": relu, "gelu": gelu}


def activation_fn(activation: str | Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    """``"relu"``/``"gelu"`` as their functions; a callable as itself (ValueError for another string)."""
    if isinstance(activation, str):
        if activation not in _ACTIVATIONS:
            raise ValueError(f"activation should be relu/gelu, not {activation}")
        return _ACTIVATIONS[activation]
    return activation


class TransformerLayerBase(Module):
    """The pieces a transformer layer with ``blocks`` residual sub-blocks shares, registered in torch's order after
    the attention modules: ``linear1``, ``dropout``, ``linear2``, ``norm1..blocks``, ``dropout1..blocks``.
    The last sub-block is the feed-forward one: ``ff(x) = dropout<blocks>(linear2(dropout(activation(linear1(x)))))``.
    """

    norm_first: bool

    def _build_feed_forward(self, d_model: int, dim_feedforward: int, dropout: float,
                            activation: str | Callable[[Tensor], Tensor], layer_norm_eps: float, norm_first: bool,
                            bias: bool, blocks: int, kw: dict[str, Any]) -> None:
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        for i in range(1, blocks + 1):
            self.register_module(f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        for i in range(1, blocks + 1):
            self.register_module(f"dropout{i}", Dropout(dropout))
        self._ff_dropout = f"dropout{blocks}"
        self.activation = activation_fn(activation)

    def _residual(self, x: Tensor, norm: Module, block: Callable[[Tensor], Tensor]) -> Tensor:
        """``x + block(norm(x))`` with ``norm_first``, else ``norm(x + block(x))``."""
        return x + block(norm(x)) if self.norm_first else norm(x + block(x))

    def _attend(self, attn: MultiheadAttention, x: Tensor, source: Tensor, mask: Tensor | None,
                padding: Tensor | None, is_causal: bool, drop: Module) -> Tensor:
        """``drop(attn(x, source, source))`` without the attention weights."""
        out, _ = attn(x, source, source, attn_mask=mask, key_padding_mask=padding, need_weights=False, is_causal=is_causal)
        return drop(out)  # type: ignore[no-any-return]

    def _ff_block(self, x: Tensor) -> Tensor:
        out = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return getattr(self, self._ff_dropout)(out)  # type: ignore[no-any-return]


class TransformerEncoderLayer(TransformerLayerBase):
    """Self-attention then a feed-forward block, each with a residual connection and LayerNorm.

    Post-norm (default): ``x = norm1(x + sa(x)); x = norm2(x + ff(x))``; with ``norm_first``:
    ``x = x + sa(norm1(x)); x = x + ff(norm2(x))``. ``ff(x) = linear2(dropout(activation(linear1(x))))``.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None, *, backend: Any = None):
        super().__init__()
        kw = factory(device, dtype, backend)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw)
        self._build_feed_forward(d_model, dim_feedforward, dropout, activation, layer_norm_eps, norm_first, bias, 2, kw)

    def forward(self, src: Tensor, src_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool = False) -> Tensor:
        x = self._residual(src, self.norm1, lambda h: self._sa_block(h, src_mask, src_key_padding_mask, is_causal))
        return self._residual(x, self.norm2, self._ff_block)

    def _sa_block(self, x: Tensor, mask: Tensor | None, padding: Tensor | None, is_causal: bool) -> Tensor:
        return self._attend(self.self_attn, x, x, mask, padding, is_causal, self.dropout1)


class TransformerEncoder(Module):
    """``num_layers`` deep copies of ``encoder_layer`` applied in turn (``layers.0`` ...), then ``norm`` if given."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src: Tensor, mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        return self.norm(x) if self.norm is not None else x
