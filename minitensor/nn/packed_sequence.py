"""``PackedSequence``: a batch of variable-length sequences stored time step by time step (``torch.nn.utils.rnn``).

With the sequences sorted by decreasing length, ``data`` holds every sequence's step 0, then every still-running
sequence's step 1, and so on; ``batch_sizes[t]`` is how many sequences have a step t. ``sorted_indices[i]`` is the
original batch position of the i-th longest sequence and ``unsorted_indices`` its inverse (both None when the batch
was already sorted). The recurrent layers (:mod:`.recurrent`) take and return PackedSequences.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .. import dtypes
from ..creation import tensor
from ..errors import ShapeError
from ..tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "sizes_of"]


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse permutation (on the same backend, int64), None for None."""
    if permutation is None:
        return None
    order = [int(i) for i in permutation.tolist()]
    inverse = [0] * len(order)
    for position, index in enumerate(order):
        inverse[index] = position
    return tensor(inverse, dtype=dtypes.int64, backend=permutation.backend)


def sizes_of(batch_sizes: Tensor) -> list[int]:
    """``batch_sizes`` as a list of Python ints."""
    return [int(n) for n in batch_sizes.tolist()]


class _Fields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_Fields):
    """A named tuple ``(data, batch_sizes, sorted_indices, unsorted_indices)``; build it with
    :func:`~minitensor.nn.utils.rnn.pack_padded_sequence` or :func:`~minitensor.nn.utils.rnn.pack_sequence`.

    ``data`` (sum(batch_sizes), *) on any backend; ``batch_sizes`` a 1-D int64 tensor on the CPU backend;
    ``PackedSequence(data, batch_sizes, sorted_indices)`` fills ``unsorted_indices`` in, and
    ``PackedSequence((data, batch_sizes))`` takes the pair as its first argument, as torch does.
    """

    def __new__(cls, data: Any, batch_sizes: Tensor | None = None, sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not isinstance(data, (tuple, list)) or len(data) != 2:
                raise TypeError("PackedSequence: without batch_sizes, data must be the pair (data, batch_sizes)")
            data, batch_sizes = data
        if not isinstance(data, Tensor) or not isinstance(batch_sizes, Tensor):
            raise TypeError(f"PackedSequence: data and batch_sizes must be Tensors, got {type(data).__name__} and "
                            f"{type(batch_sizes).__name__}")
        if batch_sizes.dims != 1 or batch_sizes.dtype != dtypes.int64:
            raise ShapeError(f"PackedSequence: batch_sizes must be a 1-D int64 tensor, got shape {batch_sizes.shape} "
                             f"and dtype {batch_sizes.dtype}")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data.to(*args, **kwargs)``, the index tensors following it to its backend (``batch_sizes`` stays on the
        CPU, as in torch); itself when ``data`` does not change."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = [None if t is None else t.to(data.backend) for t in (self.sorted_indices, self.unsorted_indices)]
        return type(self)(data, self.batch_sizes, move[0], move[1])

    def cuda(self) -> PackedSequence:
        return self.to("cuda")

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def double(self) -> PackedSequence:
        return self.to(dtype=dtypes.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=dtypes.float32)

    def long(self) -> PackedSequence:
        return self.to(dtype=dtypes.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=dtypes.int32)

    def pin_memory(self) -> PackedSequence:
        """Itself (there is no pinned memory here)."""
        return self

    def is_pinned(self) -> bool:
        return False

    @property
    def is_cuda(self) -> bool:
        """Whether ``data`` lives on the cuda backend."""
        return self.data.backend.name == "cuda"
