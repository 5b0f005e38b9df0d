"""Padding and packing variable-length sequences (``torch.nn.utils.rnn``).

``pad_sequence``/``unpad_sequence`` convert between a list of (L_i, *) tensors and one padded (L_max, B, *) tensor;
``pack_padded_sequence``/``pad_packed_sequence`` and ``pack_sequence``/``unpack_sequence`` convert those to and from
a :class:`PackedSequence` (see :mod:`minitensor.nn.packed_sequence`), the input the recurrent layers take to skip the
padding. Everything is made of differentiable Tensor ops (narrow, index_select, cat, stack), so gradients flow
through packing and unpacking.
"""

from __future__ import annotations

from collections.abc import Sequence

from ... import dtypes
from ...creation import full, tensor
from ...errors import ShapeError
from ...tensor import Tensor
from ...tensor_join import cat, stack
from ..packed_sequence import PackedSequence, sizes_of

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence", "unpack_sequence",
           "pad_sequence", "unpad_sequence"]


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


def _lengths_list(lengths: Tensor | Sequence[int]) -> list[int]:
    if isinstance(lengths, Tensor):
        if lengths.dims != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dims}D tensor")
        return [int(n) for n in lengths.tolist()]
    return [int(n) for n in lengths]


def pack_padded_sequence(input: Tensor, lengths: Tensor | Sequence[int], batch_first: bool = False,  # noqa: A002
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack the padded batch ``input`` (T, B, *) (``batch_first``: (B, T, *)) whose sequence b has ``lengths[b]``
    steps. ``enforce_sorted``: the lengths must be decreasing (``sorted_indices`` is None); otherwise the batch is
    sorted by decreasing length first (stably) and ``sorted_indices`` records the order. RuntimeError for unsorted
    lengths when enforced, a count that is not the batch size, or a length <= 0; ValueError for a length > T."""
    if not isinstance(input, Tensor):
        raise TypeError(f"pack_padded_sequence(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dims < 2:
        raise ShapeError(f"pack_padded_sequence: input must have a time and a batch dim, got shape {input.shape}")
    counts = _lengths_list(lengths)
    x = input.transpose(0, 1) if batch_first else input
    if enforce_sorted:
        if any(a < b for a, b in zip(counts, counts[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                               "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep "
                               "this requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        order = sorted(range(len(counts)), key=lambda b: -counts[b])
        counts = [counts[b] for b in order]
        sorted_indices = tensor(order, dtype=dtypes.int64, backend=input.backend)
        if len(counts) == x.shape[1]:
            x = x.index_select(1, sorted_indices)
    if len(counts) != x.shape[1]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(counts)} "
                           f"(batch_size={x.shape[1]})")
    if counts and counts[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0")
    if counts and counts[0] > x.shape[0]:
        raise ValueError(f"pack_padded_sequence: a length of {counts[0]} exceeds the padded sequence length "
                         f"{x.shape[0]} of input of shape {input.shape}")
    sizes = [sum(1 for n in counts if n > t) for t in range(counts[0] if counts else 0)]
    data = cat([x[t].narrow(0, 0, n) for t, n in enumerate(sizes)], 0)
    return PackedSequence(data, tensor(sizes, dtype=dtypes.int64, backend="cpu"), sorted_indices)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The inverse of :func:`pack_padded_sequence`: ``(padded, lengths)`` with padded (T, B, *) (``batch_first``:
    (B, T, *)) in the original batch order, padded with ``padding_value`` up to ``total_length`` steps (default: the
    longest sequence; a smaller one is a ValueError), and lengths an int64 CPU tensor."""
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"pad_packed_sequence: expected a PackedSequence, got {type(sequence).__name__}")
    data, sizes = sequence.data, sizes_of(sequence.batch_sizes)
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {steps}")
    else:
        total_length = steps
    batch, rest = sizes[0], data.shape[1:]
    rows, offset = [], 0
    for n in sizes:
        step = data.narrow(0, offset, n)
        offset += n
        if n < batch:
            step = cat([step, full((batch - n, *rest), padding_value, dtype=data.dtype, backend=data.backend)], 0)
        rows.append(step)
    padded = stack(rows, 0)
    if total_length > steps:
        pad = full((total_length - steps, batch, *rest), padding_value, dtype=data.dtype, backend=data.backend)
        padded = cat([padded, pad], 0)
    counts = [sum(1 for n in sizes if n > b) for b in range(batch)]
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        counts = [counts[int(i)] for i in sequence.unsorted_indices.tolist()]
    lengths = tensor(counts, dtype=dtypes.int64, backend="cpu")
    return (padded.transpose(0, 1).contiguous() if batch_first else padded), lengths


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of (L_i, *) tensors (decreasing lengths unless ``enforce_sorted=False``):
    ``pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)``."""
    items = list(sequences)
    if not items:
        raise RuntimeError("received an empty list of sequences")
    lengths = [seq.shape[0] if isinstance(seq, Tensor) and seq.dims else 0 for seq in items]
    return pack_padded_sequence(pad_sequence(items), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The inverse of :func:`pack_sequence`: the list of (L_i, *) tensors in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

