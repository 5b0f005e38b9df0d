"""Padding variable-length sequences into one tensor (``torch.nn.utils.rnn``)."""

from __future__ import annotations

from collections.abc import Sequence

from ...creation import full
from ...errors import ShapeError
from ...tensor import Tensor
from ...tensor_join import cat, stack

__all__ = ["pad_sequence", "unpad_sequence"]


def pad_sequence(sequences: Tensor | Sequence[Tensor], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack tensors of shapes (L_i, *) into (L_max, B, *) (``batch_first``: (B, L_max, *)), each padded with
    ``padding_value`` after (``padding_side='right'``) or before (``'left'``) its elements; differentiable."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"pad_sequence: padding_side must be 'left' or 'right', got {padding_side!r}")
    items = [sequences[i] for i in range(len(sequences))] if isinstance(sequences, Tensor) else list(sequences)
    if not items:
        raise ValueError("pad_sequence: received an empty list of sequences")
    for i, seq in enumerate(items):
        if not isinstance(seq, Tensor):
            raise TypeError(f"pad_sequence: sequences[{i}] must be a Tensor, not {type(seq).__name__}")
        if seq.dims == 0:
            raise ShapeError(f"pad_sequence: sequences[{i}] is 0-d; every sequence needs a length dim")
        if seq.shape[1:] != items[0].shape[1:] or seq.dtype != items[0].dtype or seq.backend is not items[0].backend:
            raise ShapeError(f"pad_sequence: every sequence must have trailing shape {items[0].shape[1:]}, dtype "
                             f"{items[0].dtype} and backend {items[0].backend.name!r}; sequences[{i}] has shape {seq.shape}, "
                             f"dtype {seq.dtype} and backend {seq.backend.name!r}")
    longest = max(seq.shape[0] for seq in items)
    padded = []
    for seq in items:
        missing = longest - seq.shape[0]
        if missing:
            pad = full((missing, *seq.shape[1:]), padding_value, dtype=seq.dtype, backend=seq.backend)
            seq = cat([seq, pad] if padding_side == "right" else [pad, seq])
        padded.append(seq)
    return stack(padded, dim=0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor | Sequence[int], batch_first: bool = False) -> list[Tensor]:
    """The inverse of right-padded :func:`pad_sequence`: sequence i is the first ``lengths[i]`` steps of entry i."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    counts = [int(n) for n in (lengths.tolist() if isinstance(lengths, Tensor) else lengths)]
    if len(counts) != padded_sequences.shape[0]:
        raise ShapeError(f"unpad_sequence: {len(counts)} lengths for a batch of {padded_sequences.shape[0]} sequences")
    return [padded_sequences[i, :n] for i, n in enumerate(counts)]
