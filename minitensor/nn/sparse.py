"""Embedding lookups: ``F.embedding``, ``F.embedding_bag``, ``nn.Embedding`` and ``nn.EmbeddingBag``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import dtypes
from ..autodiff import no_grad
from ..creation import arange, empty, full, ones, zeros
from ..errors import DTypeError, IndexOutOfRangeError, ShapeError
from ..module import Module, Parameter
from ..tensor import Tensor
from . import init
from .common import check_sizes, factory, tensor_args

__all__ = ["embedding", "embedding_bag", "Embedding", "EmbeddingBag"]


def _check_indices(input: Any, num: int, name: str = "embedding") -> None:  # noqa: A002
    """DTypeError unless ``input`` is an int64/int32 tensor; IndexOutOfRangeError (an IndexError) naming the
    offending value unless every index lies in ``[0, num)`` (reads the min and max back to the host: one sync)."""
    if not isinstance(input, Tensor) or str(input.dtype) not in ("int64", "int32"):
        got = f"a {input.dtype} tensor" if isinstance(input, Tensor) else type(input).__name__
        raise DTypeError(f"{name}: indices must be an int64 or int32 tensor, got {got}")
    if input.numel() == 0:
        return
    lo, hi = int(input.amin().item()), int(input.amax().item())
    bad = lo if lo < 0 else hi
    if lo < 0 or hi >= num:
        raise IndexOutOfRangeError(f"{name}: index {bad} is out of range for {num} embeddings (valid: 0 .. {num - 1})")


def _padding_idx(padding_idx: int | None, num: int) -> int | None:
    """``padding_idx`` in ``[0, num)`` (a negative one counts from the end, as PyTorch)."""
    if padding_idx is None:
        return None
    if not -num <= padding_idx < num:
        raise ValueError(f"padding_idx {padding_idx} must be within num_embeddings {num} (in [-{num}, {num}))")
    return padding_idx + num if padding_idx < 0 else padding_idx


@tensor_args("input", "weight")
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,  # noqa: A002
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """``weight[input]``: rows of ``weight`` (num_embeddings, embedding_dim) for integer indices of any shape,
    as ``torch.nn.functional.embedding``. The backward scatter-adds into the picked rows; positions whose index is
    ``padding_idx`` pass no gradient; ``scale_grad_by_freq`` divides each row's gradient by how often its index
    occurs in ``input``. ``max_norm`` and ``sparse`` gradients are not supported (NotImplementedError)."""
    if max_norm is not None:
        raise NotImplementedError("embedding: max_norm (in-place renormalisation of weight rows) is not supported")
    if sparse:
        raise NotImplementedError("embedding: sparse gradients are not supported; use sparse=False (dense gradients)")
    if weight.dims != 2:
        raise ShapeError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), got shape {weight.shape}")
    num = weight.shape[0]
    _check_indices(input, num)
    flat = input.reshape(-1)
    out = weight.index_select(0, flat)  # (n, D)
    if scale_grad_by_freq and flat.numel():
        with no_grad():
            counts = empty(num, dtype=weight.dtype, backend=weight.backend).zero_()
            counts = counts.scatter_add(0, flat, ones(flat.shape[0], dtype=weight.dtype, backend=weight.backend))
            scale = (1.0 / counts.index_select(0, flat)).unsqueeze(-1)
        out = out.detach() + (out - out.detach()) * scale  # forward unchanged, gradient scaled
    p = _padding_idx(padding_idx, num)
    if p is not None:
        out = out.detach().where((flat == p).unsqueeze(-1), out)  # same values; no gradient at padding positions
    return out.view(*input.shape, weight.shape[1])


class Embedding(Module):
    """A lookup table of ``num_embeddings`` vectors of size ``embedding_dim``, as ``torch.nn.Embedding``; weight
    initialised N(0, 1), the ``padding_idx`` row to zero (that row never gets a gradient)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Tensor | None = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None, *, backend: Any = None):
        super().__init__()
        check_sizes("Embedding", num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        if max_norm is not None:
            raise NotImplementedError("Embedding: max_norm is not supported")
        if sparse:
            raise NotImplementedError("Embedding: sparse gradients are not supported; use sparse=False")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = _padding_idx(padding_idx, num_embeddings)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, **factory(device, dtype, backend)),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ShapeError(f"Embedding: _weight of shape {_weight.shape} does not match "
                                 f"(num_embeddings, embedding_dim) = ({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight.detach(), requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        """PyTorch's init: N(0, 1), then the padding row set to zero."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight.narrow(0, self.padding_idx, 1).fill_(0)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                         self.scale_grad_by_freq, self.sparse)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding whose weight is ``embeddings`` (2-D; shares its storage), frozen unless ``freeze=False``."""
        if embeddings.dims != 2:
            raise ShapeError(f"Embedding.from_pretrained: embeddings must be 2-D, got shape {embeddings.shape}")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse, _weight=embeddings,
                   _freeze=freeze)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        return s


# --- bags ---

_MODES = ("sum", "mean", "max")


def _bag_ids(offsets: Any, n: int, include_last_offset: bool) -> tuple[int, Tensor]:
    """(number of bag rows, int64 bag id of each of the n indices) for a 1-D input: the bag of position k is the
    number of offsets <= k, less one (a cumulative sum of bag starts). Checks offsets on the host (one sync): an int
    1-D tensor starting at 0, non-decreasing, at most n (equal to n last with ``include_last_offset``, whose extra
    last row, empty, the caller drops)."""
    if not isinstance(offsets, Tensor):
        raise TypeError(f"embedding_bag(): argument 'offsets' must be Tensor, not {type(offsets).__name__}")
    if str(offsets.dtype) not in ("int64", "int32"):
        raise DTypeError(f"embedding_bag: offsets must be an int64 or int32 tensor, got a {offsets.dtype} tensor")
    if offsets.dims != 1:
        raise ShapeError(f"embedding_bag: offsets has to be a 1D Tensor, got shape {offsets.shape}")
    host = offsets.to_numpy()
    if include_last_offset and host.size == 0:
        raise ValueError("embedding_bag: include_last_offset=True needs at least one offset (the end of the last bag)")
    if host.size:
        if host[0] != 0:
            raise ValueError(f"embedding_bag: offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                             f"start from position 0. However, got {host[0]}")
        drops = np.flatnonzero(np.diff(host) < 0)
        if drops.size:
            i = int(drops[0])
            raise ValueError(f"embedding_bag: offsets must be non-decreasing, got offsets[{i}] = {host[i]} > "
                             f"offsets[{i + 1}] = {host[i + 1]}")
        if host[-1] > n:
            raise ValueError(f"embedding_bag: offsets[-1] can not be greater than input's length {n} but got "
                             f"offsets[-1] of {host[-1]}")
        if include_last_offset and host[-1] != n:  # PyTorch's kernels disagree on such input (by dtype and mode)
            raise ValueError(f"embedding_bag: with include_last_offset=True the last offset ends the last bag and must "
                             f"equal input's length {n}, got offsets[-1] of {host[-1]}")
    count = host.size
    starts = zeros(n + 1, dtype=dtypes.int64, backend=offsets.backend)
    starts = starts.index_add(0, offsets.cast(dtypes.int64), ones(count, dtype=dtypes.int64, backend=offsets.backend))
    return count, starts.cumsum(0).narrow(0, 0, n) - 1


def _bag_max(rows: Tensor, bags: Tensor, keep: Tensor | None, count: int) -> Tensor:
    """Per bag and column, the max of ``rows`` (n, D) over the positions of that bag (``keep`` ones only), and 0 for an
    empty bag; its gradient goes to the first position holding the max (PyTorch's rule: a later tie does not win)."""
    n, width = rows.shape
    with no_grad():
        values = rows.detach()
        if keep is not None:
            values = values.where(keep.unsqueeze(-1), -math.inf)
        slots = bags.unsqueeze(-1).expand(n, width)
        top = full((count, width), -math.inf, dtype=rows.dtype, backend=rows.backend)
        top = top.scatter_reduce(0, slots, values, "amax")
        hit = values == top.index_select(0, bags)
        if keep is not None:
            hit = hit.logical_and(keep.unsqueeze(-1))
        position = arange(n, backend=rows.backend).unsqueeze(-1).expand(n, width).where(hit, n)
        first = full((count, width), n, dtype=dtypes.int64, backend=rows.backend)
        first = first.scatter_reduce(0, slots, position, "amin")
        found = first < n
    return rows.gather(0, first.clamp_max(n - 1)).where(found, 0.0)


@tensor_args("input", "weight")
def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,  # noqa: A002
                  max_norm: float | None = None, norm_type: float = 2, scale_grad_by_freq: bool = False,
                  mode: str = "mean", sparse: bool = False, per_sample_weights: Tensor | None = None,
                  include_last_offset: bool = False, padding_idx: int | None = None) -> Tensor:
    """The sum, mean or max of each bag of rows of ``weight`` (num_embeddings, D), as
    ``torch.nn.functional.embedding_bag``, without materialising a padded (B, L, D) tensor: -> (B, D).

    Bags: a 2-D input (B, L) is B bags of L indices (offsets must be None); a 1-D input is cut at ``offsets`` (B,)
    into bags ``input[offsets[b]:offsets[b + 1]]``, the last running to the end, or with ``include_last_offset``
    offsets has B + 1 entries and the last one, equal to input's length, ends the last bag. Indices equal to ``padding_idx`` are left out of
    their bag (not counted by mean, no gradient). An empty bag gives zeros. ``per_sample_weights`` (input's shape, mode
    'sum' only) scales each row before the sum. In 'max' mode the gradient goes to the first index holding each max.
    ``max_norm``, ``scale_grad_by_freq`` and ``sparse`` are not supported (NotImplementedError)."""
    if per_sample_weights is not None:
        if not isinstance(per_sample_weights, Tensor):
            raise TypeError(f"embedding_bag(): per_sample_weights must be Tensor, not {type(per_sample_weights).__name__}")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ShapeError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                             f"must have the same shape as the input ({input.shape})")
    if weight.dims != 2:
        raise ShapeError(f"embedding_bag: weight has to be a 2D Tensor (num_embeddings, embedding_dim), got shape {weight.shape}")
    if weight.dtype.kind != "f":
        raise DTypeError(f"embedding_bag: weight must be a floating-point tensor, got {weight.dtype}")
    if input.dims == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: if input is 2D, then offsets has to be None, as input is treated is a "
                             f"mini-batch of fixed length sequences. However, found offsets of type {type(offsets).__name__}")
        include_last_offset = False
    elif input.dims == 1:
        if offsets is None:
            raise ValueError("embedding_bag: offsets has to be a 1D Tensor but got None")
    else:
        raise ShapeError(f"embedding_bag: input has to be 1D or 2D Tensor, but got shape {input.shape}")
    if mode not in _MODES:
        raise ValueError(f"embedding_bag: mode has to be one of sum, mean or max, got {mode!r}")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("embedding_bag: max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("embedding_bag: max mode does not support sparse weights")
    if max_norm is not None:
        raise NotImplementedError("embedding_bag: max_norm (in-place renormalisation of weight rows) is not supported")
    if scale_grad_by_freq:
        raise NotImplementedError("embedding_bag: scale_grad_by_freq is not supported")
    if sparse:
        raise NotImplementedError("embedding_bag: sparse gradients are not supported; use sparse=False (dense gradients)")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode={mode!r})")
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise DTypeError(f"embedding_bag: per_sample_weights dtype {per_sample_weights.dtype} differs from weight "
                         f"dtype {weight.dtype}")
    num = weight.shape[0]
    _check_indices(input, num, "embedding_bag")
    pad = _padding_idx(padding_idx, num)
    flat = input.reshape(-1).cast(dtypes.int64)
    n = flat.shape[0]
    if input.dims == 2:
        count = input.shape[0]
        bags = arange(n, backend=input.backend) // max(input.shape[1], 1)
    else:
        count, bags = _bag_ids(offsets, n, include_last_offset)
        if count == 0:  # no bags at all
            return zeros(0, weight.shape[1], dtype=weight.dtype, backend=weight.backend)
    rows = weight.index_select(0, flat)  # (n, D)
    keep = None if pad is None else flat != pad
    if mode == "max" and n:
        out = _bag_max(rows, bags, keep, count)
    else:
        if per_sample_weights is not None:
            rows = rows * per_sample_weights.reshape(-1, 1)
        if keep is not None:
            rows = rows.where(keep.unsqueeze(-1), 0.0)
        out = zeros(count, weight.shape[1], dtype=weight.dtype, backend=weight.backend).index_add(0, bags, rows)
        if mode == "mean":
            sizes = ones(n, dtype=weight.dtype, backend=weight.backend) if keep is None else keep.cast(weight.dtype)
            sizes = zeros(count, dtype=weight.dtype, backend=weight.backend).index_add(0, bags, sizes)
            out = out / sizes.clamp_min(1.0).unsqueeze(-1)
    return out.narrow(0, 0, count - 1) if include_last_offset else out


class EmbeddingBag(Module):
    """The sums, means or maxima of bags of embeddings (:func:`embedding_bag`) from a table of ``num_embeddings``
    vectors of size ``embedding_dim``, as ``torch.nn.EmbeddingBag``: weight initialised N(0, 1), the ``padding_idx``
    row to zero. ``forward(input, offsets=None, per_sample_weights=None)``."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                 _weight: Tensor | None = None, include_last_offset: bool = False, padding_idx: int | None = None,
                 device: Any = None, dtype: Any = None, *, backend: Any = None):
        super().__init__()
        check_sizes("EmbeddingBag", num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        if mode not in _MODES:
            raise ValueError(f"EmbeddingBag: mode has to be one of sum, mean or max, got {mode!r}")
        if max_norm is not None:
            raise NotImplementedError("EmbeddingBag: max_norm is not supported")
        if scale_grad_by_freq:
            raise NotImplementedError("EmbeddingBag: scale_grad_by_freq is not supported")
        if sparse:
            raise NotImplementedError("EmbeddingBag: sparse gradients are not supported; use sparse=False")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.padding_idx = _padding_idx(padding_idx, num_embeddings)
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, **factory(device, dtype, backend)))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ShapeError(f"EmbeddingBag: _weight of shape {_weight.shape} does not match "
                                 f"(num_embeddings, embedding_dim) = ({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight.detach())
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset

    def reset_parameters(self) -> None:
        """PyTorch's init: N(0, 1), then the padding row set to zero."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight.narrow(0, self.padding_idx, 1).fill_(0)

    def forward(self, input: Tensor, offsets: Tensor | None = None,  # noqa: A002
                per_sample_weights: Tensor | None = None) -> Tensor:
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                             self.mode, self.sparse, per_sample_weights, self.include_last_offset, self.padding_idx)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag whose weight is ``embeddings`` (2-D; shares its storage), frozen unless ``freeze=False``."""
        if not isinstance(embeddings, Tensor) or embeddings.dims != 2:
            got = embeddings.shape if isinstance(embeddings, Tensor) else type(embeddings).__name__
            raise ShapeError(f"EmbeddingBag.from_pretrained: embeddings must be a 2-D tensor, got {got}")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse, _weight=embeddings,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s
