"""Pairwise measures and small shape layers: ``F.bilinear pairwise_distance pdist channel_shuffle`` and
``nn.Bilinear PairwiseDistance CosineSimilarity ChannelShuffle`` (``F.cosine_similarity`` lives in norm.py).

Each is a composition of differentiable Tensor ops (einsum, norm, index_select, reshape/permute), so it runs on every
backend and autodiff gives the gradients. Names, signatures, defaults and shapes follow PyTorch.
"""

from __future__ import annotations

import math
from typing import Any

from ..creation import empty, triu_indices
from ..errors import DTypeError, ShapeError
from ..linalg import einsum
from ..module import Module, Parameter
from ..tensor import Tensor
from . import init
from .common import check_sizes, factory, tensor_args
from .norm import cosine_similarity

__all__ = [
    "bilinear", "pairwise_distance", "pdist", "channel_shuffle",
    "Bilinear", "PairwiseDistance", "CosineSimilarity", "ChannelShuffle",
]


# --- bilinear ---


@tensor_args("input1", "input2", "weight")
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., k] = sum_ij input1[..., i] weight[k, i, j] input2[..., j] + bias[k]``, as
    ``torch.nn.functional.bilinear``: input1 (*, in1), input2 (*, in2) with the same leading dims (no broadcasting),
    weight (out, in1, in2), bias (out,) -> (*, out). One einsum (two matmuls) over the flattened leading dims."""
    if weight.dims != 3:
        raise ShapeError(f"bilinear(): weight must be 3-D (out_features, in1_features, in2_features), got shape {weight.shape}")
    if input1.dims != input2.dims:
        raise ShapeError(f"bilinear(): input dimensions do not match: got {input1.dims} and {input2.dims} "
                         f"(shapes {input1.shape} and {input2.shape})")
    if input1.dims == 0:
        raise ShapeError("bilinear(): inputs must have at least 1 dim (the features), got 0-d tensors")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise ShapeError(f"bilinear(): input batch dimensions do not match: input1 {input1.shape} and input2 {input2.shape}")
    out_f, in1, in2 = weight.shape
    for name, x, size in (("input1", input1, in1), ("input2", input2, in2)):
        if x.shape[-1] != size:
            raise ShapeError(f"bilinear(): {name} size does not match weight size: got {x.shape[-1]} but expected {size} "
                             f"({name} {x.shape}, weight {weight.shape})")
    if bias is not None and tuple(bias.shape) != (out_f,):
        raise ShapeError(f"bilinear(): bias must have shape ({out_f},) to match weight {weight.shape}, got {bias.shape}")
    dtypes = {str(t.dtype) for t in (input1, input2, weight) + ((bias,) if bias is not None else ())}
    if len(dtypes) > 1:
        raise DTypeError(f"bilinear(): all tensors must have the same dtype, got input1: {input1.dtype}, input2: "
                         f"{input2.dtype}, weight: {weight.dtype}" + (f", bias: {bias.dtype}" if bias is not None else ""))
    lead = input1.shape[:-1]
    rows = math.prod(lead)
    out = einsum("ni,oij,nj->no", input1.reshape(rows, in1), weight, input2.reshape(rows, in2))
    if bias is not None:
        out = out + bias
    return out.reshape(*lead, out_f)


class Bilinear(Module):
    """``y = x1^T A x2 + b`` with weight A of shape (out_features, in1_features, in2_features) and bias (out_features,),
    as ``torch.nn.Bilinear``; both initialised U(-1/sqrt(in1_features), 1/sqrt(in1_features))."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None, *, backend: Any = None):
        super().__init__()
        check_sizes("Bilinear", in1_features=in1_features, in2_features=in2_features, out_features=out_features)
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        kw = factory(device, dtype, backend)
        self.weight = Parameter(empty(out_features, in1_features, in2_features, **kw))
        self.bias = Parameter(empty(out_features, **kw)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's init: U(-1/sqrt(in1_features), 1/sqrt(in1_features)) for weight and bias (in1_features > 0)."""
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features={self.in1_features})")
        bound = 1.0 / math.sqrt(self.in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


# --- distances ---


def _vector_norm(x: Tensor, p: float, dim: int, keepdim: bool) -> Tensor:
    """``x.norm(p, dim, keepdim)``, a 0-d ``x`` read as one element (PyTorch's norm over dim -1 of a scalar)."""
    if x.dims == 0:
        return x.reshape(1).norm(p, 0)
    return x.norm(p, dim, keepdim)


@tensor_args("x1", "x2")
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` over the last dim of the broadcast shape, as ``torch.nn.functional.pairwise_distance``
    (eps is added to every difference, so equal inputs give ``eps * D**(1/p)``; p may be any float, inf, -inf or 0)."""
    try:
        diff = x1 - x2 + eps
    except ShapeError as error:
        raise ShapeError(f"pairwise_distance: shapes {x1.shape} and {x2.shape} do not broadcast") from error
    return _vector_norm(diff, p, -1, keepdim)


@tensor_args("input")
def pdist(input: Tensor, p: float = 2.0) -> Tensor:  # noqa: A002 - torch's name
    """The p-norm distances between every pair of rows ``i < j`` of an (N, M) input, as ``torch.nn.functional.pdist``:
    a 1-D tensor of N (N - 1) / 2 entries in row-major order of the upper triangle (``torch.triu_indices(N, N, 1)``).
    A zero distance passes a zero gradient; for p = inf every tied coordinate gets the full gradient, as PyTorch's
    pdist backward (torch.norm splits it)."""
    if input.dims != 2:
        raise ShapeError(f"pdist only supports 2D tensors, got: {input.dims}D (shape {input.shape})")
    if input.dtype.kind != "f":
        raise DTypeError(f"pdist only supports floating-point dtypes, got {input.dtype}")
    if p < 0:
        raise ValueError(f"pdist only supports non-negative p values, got p={p}")
    n, m = input.shape
    rows, cols = triu_indices(n, n, 1, backend=input.backend)
    diff = input.index_select(0, rows) - input.index_select(0, cols)  # (P, M)
    if m == 0:
        return diff.sum(1)  # zeros, still on the graph
    if p == math.inf:
        size = diff.abs()
        flat = size.detach()
        top = flat.amax(1, keepdim=True)
        # value: the max; gradient: sign(diff) at every coordinate equal to the max (no split among ties)
        return top.squeeze(1) + ((size - flat) * (flat == top).cast(size.dtype)).sum(1)
    return diff.norm(p, 1)


class PairwiseDistance(Module):
    """:func:`pairwise_distance` as a module (``torch.nn.PairwiseDistance``; p is stored as ``norm``)."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """:func:`cosine_similarity` along ``dim`` as a module (``torch.nn.CosineSimilarity``)."""

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return cosine_similarity(x1, x2, self.dim, self.eps)


# --- channel shuffle ---


@tensor_args("input")
def channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002 - torch's name
    """Split the C channels (dim 1) of an (N, C, *) input into ``groups`` groups of C / groups and interleave them:
    ``input.view(N, g, C // g, *).transpose(1, 2).reshape(N, C, *)``, as ``torch.nn.functional.channel_shuffle``."""
    if isinstance(groups, bool) or not isinstance(groups, int):
        raise TypeError(f"channel_shuffle(): groups must be an int, got {type(groups).__name__}")
    if input.dims <= 2:
        raise ShapeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise ValueError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise ShapeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(*input.shape)


class ChannelShuffle(Module):
    """:func:`channel_shuffle` with a fixed number of ``groups`` (``torch.nn.ChannelShuffle``)."""

    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
