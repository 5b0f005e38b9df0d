"""softmax and log_softmax (the ``SoftmaxMethods`` mixin) and the matching ``mt.`` functions, as ``torch.softmax``
and ``Tensor.softmax``. Float tensors run one fused backend kernel each way (``FusedSoftmax``); other dtypes are cast
to ``dtype`` first or computed from max, exp and sum. ``minitensor.nn.functional`` builds on these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import tensor_functions as F

if TYPE_CHECKING:
    from .tensor import Tensor


def fused_softmax(x: Tensor, dim: int, log: bool = False, scale: float = 1.0, causal: bool = False) -> Tensor:
    """softmax(scale * x) (or log_softmax) along ``dim`` through :class:`FusedSoftmax`; float tensors of >= 1 dim.
    ``causal`` masks entry j of row i (indices along the last two dims, ``dim`` the last) when j > i."""
    if x.dims == 0 or x.dtype.kind != "f":
        raise TypeError(f"fused_softmax needs a float tensor with >= 1 dim, got {x.dtype} of shape {x.shape}")
    return F.FusedSoftmax.apply(x, dim, log, float(scale), causal)


def _input(name: str, x: Tensor, dim: int | None, dtype: Any) -> tuple[Tensor, int]:
    if dim is None:
        raise ValueError(f"{name}() needs dim= (PyTorch's implicit choice is deprecated); input has shape {x.shape}")
    return (x if dtype is None else x.to(dtype)), dim


def softmax(input: Tensor, dim: int | None = None, dtype: Any = None) -> Tensor:  # noqa: A002 - torch's names
    """exp(x) / sum(exp(x)) along ``dim`` (cast to ``dtype`` first), with the row max subtracted so huge logits do
    not overflow; -inf entries give 0, and a row of only -inf gives NaN, as in PyTorch."""
    x, d = _input("softmax", input, dim, dtype)
    if x.dims and x.dtype.kind == "f":
        return fused_softmax(x, d)
    e = (x - x.amax(d, keepdim=True).detach()).exp()
    return e / e.sum(d, keepdim=True)


def log_softmax(input: Tensor, dim: int | None = None, dtype: Any = None) -> Tensor:  # noqa: A002
    """x - logsumexp(x) along ``dim`` computed as z - log(sum(exp(z))) with z = x - max(x) (exact for huge logits;
    -inf entries stay -inf with gradient passing; an all -inf row gives NaN, as in PyTorch)."""
    x, d = _input("log_softmax", input, dim, dtype)
    if x.dims and x.dtype.kind == "f":
        return fused_softmax(x, d, log=True)
    z = x - x.amax(d, keepdim=True).detach()
    return z - z.exp().sum(d, keepdim=True).log()


class SoftmaxMethods:
    """softmax and log_softmax (methods of Tensor)."""

    softmax = softmax
    log_softmax = log_softmax


__all__ = ["softmax", "log_softmax"]
