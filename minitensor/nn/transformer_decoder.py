"""Transformer decoder blocks and the full encoder-decoder model with torch's submodule names:
``nn.TransformerDecoderLayer``, ``nn.TransformerDecoder``, ``nn.Transformer``.

A state dict exported from the same PyTorch architecture loads by name (``decoder.layers.0.multihead_attn.in_proj_weight``,
``encoder.norm.weight`` ...). Masks follow ``nn.MultiheadAttention``: a bool mask is True where attention is NOT
allowed, a float mask is added to the attention scores.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ..creation import full
from ..errors import ShapeError
from ..module import Module
from ..tensor import Tensor
from . import init
from .activation import relu
from .common import factory
from .container import ModuleList
from .multihead_attention import MultiheadAttention
from .norm import LayerNorm
from .transformer import TransformerEncoder, TransformerEncoderLayer, TransformerLayerBase

__all__ = ["TransformerDecoderLayer", "TransformerDecoder", "Transformer"]


def _pair(first: str, a: Tensor, second: str, b: Tensor, d_model: int, batch_first: bool) -> tuple[int | None, int, int]:
    """Check two sequences that meet in one model: both unbatched (L, E) or both batched ((L, N, E), or (N, L, E)
    with ``batch_first``), with the same batch size N and feature size E == ``d_model``. Returns (N or None, La, Lb)."""
    if a.dims not in (2, 3) or b.dims != a.dims:
        raise ShapeError(f"{first} and {second} must both be unbatched (L, E) or both batched 3-D, "
                         f"got {first} {a.shape} and {second} {b.shape}")
    if a.shape[-1] != d_model or b.shape[-1] != d_model:
        raise ShapeError(f"the feature number of {first} {a.shape} and {second} {b.shape} must be equal to d_model {d_model}")
    if a.dims == 2:
        return None, a.shape[0], b.shape[0]
    batch, seq = (0, 1) if batch_first else (1, 0)
    if a.shape[batch] != b.shape[batch]:
        raise ShapeError(f"the batch number of {first} {a.shape} and {second} {b.shape} must be equal (dim {batch})")
    return a.shape[batch], a.shape[seq], b.shape[seq]


def _check_mask(name: str, mask: Tensor | None, *shapes: tuple[int, ...]) -> None:
    if mask is not None and mask.shape not in shapes:
        raise ShapeError(f"{name} must have shape {' or '.join(map(str, shapes))}, got {mask.shape}")


class TransformerDecoderLayer(TransformerLayerBase):
    """Self-attention over ``tgt``, attention from ``tgt`` to ``memory``, then a feed-forward block, each with a
    residual connection, dropout and LayerNorm.

    Post-norm (default): ``x = norm1(x + sa(x)); x = norm2(x + mha(x, memory)); x = norm3(x + ff(x))``; with
    ``norm_first``: ``x = x + sa(norm1(x)); x = x + mha(norm2(x), memory); x = x + ff(norm3(x))``, where
    ``ff(x) = linear2(dropout(activation(linear1(x))))``. Shapes: tgt (T, N, E), memory (S, N, E) ((N, T, E) and
    (N, S, E) with ``batch_first``; (T, E), (S, E) unbatched); tgt_mask (T, T) or (N*nhead, T, T); memory_mask (T, S)
    or (N*nhead, T, S); tgt/memory_key_padding_mask (N, T)/(N, S) ((T,)/(S,) unbatched).
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None, *, backend: Any = None):
        super().__init__()
        kw = factory(device, dtype, backend)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw)
        self._build_feed_forward(d_model, dim_feedforward, dropout, activation, layer_norm_eps, norm_first, bias, 3, kw)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        """The layer's output, shaped like ``tgt``. ``tgt_is_causal``/``memory_is_causal`` without the matching mask
        apply a causal mask (query i sees keys 0..i); with one, the mask is used as given."""
        self._check(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask)
        x = self._residual(tgt, self.norm1, lambda h: self._sa_block(h, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self._residual(x, self.norm2, lambda h: self._mha_block(h, memory, memory_mask, memory_key_padding_mask,
                                                                     memory_is_causal))
        return self._residual(x, self.norm3, self._ff_block)

    def _sa_block(self, x: Tensor, mask: Tensor | None, padding: Tensor | None, is_causal: bool = False) -> Tensor:
        return self._attend(self.self_attn, x, x, mask, padding, is_causal, self.dropout1)

    def _mha_block(self, x: Tensor, memory: Tensor, mask: Tensor | None, padding: Tensor | None,
                   is_causal: bool = False) -> Tensor:
        return self._attend(self.multihead_attn, x, memory, mask, padding, is_causal, self.dropout2)

    def _check(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None, memory_mask: Tensor | None,
               tgt_padding: Tensor | None, memory_padding: Tensor | None) -> None:
        """ShapeError naming the argument whose shape does not fit ``tgt`` and ``memory``."""
        attn: MultiheadAttention = self.self_attn
        N, T, S = _pair("tgt", tgt, "memory", memory, attn.embed_dim, attn.batch_first)
        NH = (N or 1) * attn.num_heads
        _check_mask("tgt_mask", tgt_mask, (T, T), (NH, T, T))
        _check_mask("memory_mask", memory_mask, (T, S), (NH, T, S))
        _check_mask("tgt_key_padding_mask", tgt_padding, (T,) if N is None else (N, T))
        _check_mask("memory_key_padding_mask", memory_padding, (S,) if N is None else (N, S))


class TransformerDecoder(Module):
    """``num_layers`` deep copies of ``decoder_layer`` (``layers.0`` ...) applied in turn to ``tgt`` with the same
    ``memory`` and masks, then ``norm`` if given. Every copy starts with the same parameters, as in PyTorch."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        """The decoded ``tgt`` (same shape); see :class:`TransformerDecoderLayer` for the shapes and masks."""
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=bool(tgt_is_causal),
                      memory_is_causal=memory_is_causal)
        return self.norm(x) if self.norm is not None else x


class Transformer(Module):
    """The encoder-decoder model of "Attention Is All You Need": ``encoder`` (a :class:`TransformerEncoder` of
    ``num_encoder_layers`` layers and a final LayerNorm ``norm``) turns ``src`` into ``memory``; ``decoder`` (a
    :class:`TransformerDecoder` of ``num_decoder_layers`` layers and a final LayerNorm) decodes ``tgt`` against it.

    ``custom_encoder``/``custom_decoder`` replace the built ones. Every parameter with more than one dim (the
    custom modules' too) is re-initialised with ``init.xavier_uniform_``, as PyTorch does.
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = relu,
                 custom_encoder: Module | None = None, custom_decoder: Module | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: Any = None, dtype: Any = None, *, backend: Any = None):
        super().__init__()
        kw = factory(device, dtype, backend)
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*layer_args, **kw), num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*layer_args, **kw), num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def _reset_parameters(self) -> None:
        """torch's init: xavier_uniform_ on every parameter with more than one dim."""
        for p in self.parameters():
            if p.dims > 1:
                init.xavier_uniform_(p)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        """``decoder(tgt, encoder(src))``: src (S, N, E), tgt (T, N, E) ((N, S, E), (N, T, E) with ``batch_first``;
        (S, E), (T, E) unbatched) give (T, N, E). src_mask (S, S), tgt_mask (T, T), memory_mask (T, S) (or with a
        leading N*nhead dim); src/tgt/memory_key_padding_mask (N, S)/(N, T)/(N, S). Bool masks are True where
        attention is not allowed; float masks are added to the scores."""
        _pair("src", src, "tgt", tgt, self.d_model, self.batch_first)
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,  # type: ignore[no-any-return]
                            tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None, *, backend: Any = None) -> Tensor:
        """The (sz, sz) float causal mask: -inf above the diagonal (key j > query i), 0.0 on and below it."""
        return full((sz, sz), float("-inf"), dtype=dtype, backend=backend, device=device).triu(1)
