"""NaN-ignoring and paired reductions (the ``StatsMethods`` mixin) and the matching ``mt.`` functions: nansum,
nanmean, var_mean, std_mean, aminmax.

Each is a composition of the reductions in tensor_reduce.py (same ``dim``/``keepdim`` rules), so gradients come
from autodiff and every backend runs them. Names, signatures, defaults and result dtypes follow PyTorch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from . import tensor_functions as F
from .tensor_reduce import Dim, check_nonempty, int64_if_integral, need_float, reduced_dims

if TYPE_CHECKING:
    from .tensor import Tensor


class MinMax(NamedTuple):
    """(min, max), as ``torch.return_types.aminmax``."""

    min: Tensor
    max: Tensor


def _zero_nans(x: Tensor) -> Tensor:
    """``x`` with NaNs replaced by 0 (gradient 0 there); integer and bool tensors have none."""
    return F.Where.apply(x.isnan(), x._lift(0.0), x) if x.dtype.kind == "f" else x


def nansum(input: Tensor, dim: Dim = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """sum over ``dim`` treating NaN as 0; integers and bools give int64, as ``sum``."""
    return _zero_nans(int64_if_integral(input, dtype)).sum(dim, keepdim)


def nanmean(input: Tensor, dim: Dim = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """mean over ``dim`` of the non-NaN elements (NaN where all are NaN); float tensors only."""
    x = input if dtype is None else input.cast(dtype)
    need_float(x, "nanmean")
    kept = (~x.isnan()).sum(dim, keepdim).cast(x.dtype)
    return _zero_nans(x).sum(dim, keepdim) / kept


def _with_mean(spread: str, input: Tensor, dim: Any, unbiased: bool | None, keepdim: bool,  # noqa: A002
               correction: float | None) -> tuple[Tensor, Tensor]:
    """(input.<spread>(...), mean) for var_mean / std_mean; ``dim`` may be torch's positional ``unbiased`` bool."""
    need_float(input, f"{spread}_mean")
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    return getattr(input, spread)(dim, unbiased, keepdim, correction=correction), input.mean(reduced_dims(input, dim), keepdim)


def var_mean(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,  # noqa: A002
             correction: float | None = None) -> tuple[Tensor, Tensor]:
    """(var, mean) over ``dim`` with ``var``'s arguments (correction 1 by default); float tensors only."""
    return _with_mean("var", input, dim, unbiased, keepdim, correction)


def std_mean(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,  # noqa: A002
             correction: float | None = None) -> tuple[Tensor, Tensor]:
    """(std, mean) over ``dim`` with ``std``'s arguments (correction 1 by default); float tensors only."""
    return _with_mean("std", input, dim, unbiased, keepdim, correction)


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> MinMax:  # noqa: A002
    """(min, max) over one ``dim`` or all of them (NaN if any is NaN) as a named tuple; an empty reduction raises
    ``EmptyReductionError``."""
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"aminmax(): dim must be an int or None, got {dim!r}")
    check_nonempty(input, reduced_dims(input, dim), "aminmax")
    return MinMax(input.amin(dim, keepdim), input.amax(dim, keepdim))


class StatsMethods:
    """NaN-ignoring and paired reductions (methods of Tensor; ``var_mean``/``std_mean`` are functions only, as in PyTorch)."""

    nansum = nansum
    nanmean = nanmean
    aminmax = aminmax


__all__ = ["nansum", "nanmean", "var_mean", "std_mean", "aminmax"]
