"""``torch.nn.modules.transformer``'s names, for code that imports them from there: the transformer modules."""

from __future__ import annotations

from ..transformer import TransformerEncoder, TransformerEncoderLayer
from ..transformer_decoder import Transformer, TransformerDecoder, TransformerDecoderLayer

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer", "TransformerDecoderLayer"]
