"""Embedding lookups: ``F.embedding`` and ``nn.Embedding``."""

from __future__ import annotations

from typing import Any

from ..autodiff import no_grad
from ..creation import empty, ones
from ..errors import DTypeError, IndexOutOfRangeError, ShapeError
from ..module import Module, Parameter
from ..tensor import Tensor
from . import init
from .common import check_sizes, factory, tensor_args

__all__ = ["embedding", "Embedding"]


def _check_indices(input: Any, num: int) -> None:  # noqa: A002
    """DTypeError unless ``input`` is an int64/int32 tensor; IndexOutOfRangeError (an IndexError) naming the
    offending value unless every index lies in ``[0, num)`` (reads the min and max back to the host: one sync)."""
    if not isinstance(input, Tensor) or str(input.dtype) not in ("int64", "int32"):
        got = f"a {input.dtype} tensor" if isinstance(input, Tensor) else type(input).__name__
        raise DTypeError(f"embedding: indices must be an int64 or int32 tensor, got {got}")
    if input.numel() == 0:
        return
    lo, hi = int(input.amin().item()), int(input.amax().item())
    bad = lo if lo < 0 else hi
    if lo < 0 or hi >= num:
        raise IndexOutOfRangeError(f"embedding: index {bad} is out of range for {num} embeddings (valid: 0 .. {num - 1})")


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
