"""Transforms that apply other transforms to slices of their input (``torch.distributions.transforms``):
CatTransform (the i-th transform to the i-th block of ``lengths[i]`` entries along ``dim``) and StackTransform (the
i-th transform to the i-th entry along ``dim``); their domains and codomains are ``constraints.cat`` and
``constraints.stack`` of the parts'. A tensor of the wrong size along ``dim`` raises AssertionError, as in PyTorch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..tensor import Tensor
from ..tensor_join import cat, stack
from . import constraints
from .distribution import sum_rightmost
from .transform_base import Transform


def _check_transforms(tseq: Sequence[Any]) -> None:
    if not all(isinstance(t, Transform) for t in tseq):
        raise AssertionError("All elements of tseq must be Transform instances")


def _check_size(name: str, t: Tensor, dim: int, size: int, what: str) -> None:
    """AssertionError unless ``dim`` is a dim of ``t`` and ``t`` has ``size`` entries along it."""
    if not -t.dim() <= dim < t.dim():
        raise AssertionError(f"dim {dim} out of range for {name} with {t.dim()} dimensions")
    if t.shape[dim] != size:
        raise AssertionError(f"{name}.size({dim}) = {t.shape[dim]} must equal {what} {size}")


class CatTransform(Transform):
    """``tseq[i]`` applied to the i-th block (``lengths[i]`` entries, 1 each by default) along ``dim``."""

    def __init__(self, tseq: Sequence[Transform], dim: int = 0, lengths: Sequence[int] | None = None,
                 cache_size: int = 0) -> None:
        _check_transforms(tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})")
        self.dim = dim

    def _init_args(self) -> tuple[Any, ...]:
        return self.transforms, self.dim, self.lengths

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self) -> int:
        return sum(self.lengths)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)

    def _blocks(self, t: Tensor, name: str) -> list[Tensor]:
        _check_size(name, t, self.dim, self.length, "length")
        starts = [sum(self.lengths[:i]) for i in range(len(self.lengths))]
        return [t.narrow(self.dim, s, n) for s, n in zip(starts, self.lengths)]

    def _call(self, x: Tensor) -> Tensor:
        return cat([t(block) for t, block in zip(self.transforms, self._blocks(x, "x"))], self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        return cat([t.inv(block) for t, block in zip(self.transforms, self._blocks(y, "y"))], self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """Each block's log |det J| summed over the event dims it has beyond its transform's; concatenated along
        ``dim`` when ``dim`` is a batch dim, else summed."""
        parts = []
        for t, xb, yb in zip(self.transforms, self._blocks(x, "x"), self._blocks(y, "y")):
            parts.append(sum_rightmost(t.log_abs_det_jacobian(xb, yb), self.event_dim - t.event_dim))
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        if dim < 0:
            return cat(parts, dim)
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        return total


class StackTransform(Transform):
    """``tseq[i]`` applied to the i-th entry along ``dim`` (the tensor's size there is ``len(tseq)``)."""

    def __init__(self, tseq: Sequence[Transform], dim: int = 0, cache_size: int = 0) -> None:
        _check_transforms(tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def _init_args(self) -> tuple[Any, ...]:
        return self.transforms, self.dim

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.stack([t.codomain for t in self.transforms], self.dim)

    def _slices(self, t: Tensor, name: str) -> list[Tensor]:
        _check_size(name, t, self.dim, len(self.transforms), "len(transforms)")
        return [t.select(self.dim, i) for i in range(t.shape[self.dim])]

    def _call(self, x: Tensor) -> Tensor:
        return stack([t(s) for t, s in zip(self.transforms, self._slices(x, "x"))], self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        return stack([t.inv(s) for t, s in zip(self.transforms, self._slices(y, "y"))], self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """The slices' log |det J| stacked along ``dim``."""
        pairs = zip(self.transforms, self._slices(x, "x"), self._slices(y, "y"))
        return stack([t.log_abs_det_jacobian(xs, ys) for t, xs, ys in pairs], self.dim)


__all__ = ["CatTransform", "StackTransform"]
