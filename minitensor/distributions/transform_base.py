"""The Transform base class and the transforms built from other transforms (``torch.distributions.transforms``).

A transform maps its ``domain`` onto its ``codomain`` (constraints whose ``event_dim`` says how many rightmost dims
form one event); ``log_abs_det_jacobian(x, y)`` has the shape of ``x`` less those event dims. ``t.inv`` is the inverse
as a transform (made once and kept: ``t.inv.inv is t``). With ``cache_size=1`` a transform remembers its last
``(x, y)`` pair, by identity, so ``t.inv(t(x))`` returns ``x`` itself.

Here: ``Transform``, its inverse, ``ComposeTransform`` (and ``identity_transform``, the empty composition),
``IndependentTransform`` and ``ReshapeTransform``; the elementwise maps are in :mod:`.transforms_elementwise`, those
that couple a vector's or a matrix's entries in :mod:`.transforms_vector`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..tensor import Tensor
from . import constraints
from .distribution import _size, full_like, sum_rightmost

Shape = tuple[int, ...]
C = constraints.Constraint


class Transform:
    """The base: ``__call__`` (x -> y), ``inv`` (y -> x), ``log_abs_det_jacobian`` and the shape maps; subclasses
    define ``_call`` and/or ``_inverse`` (and ``_init_args`` when their ``__init__`` takes arguments, for
    ``with_cache``)."""

    bijective = False
    domain: C
    codomain: C

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError(f"cache_size must be 0 or 1, got {cache_size!r}")
        self._cache_size = int(cache_size)
        self._inv: Transform | None = None
        self._cached_x_y: tuple[Any, Any] = (None, None)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_inv": None}

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> Transform:
        """The inverse transform; ``t.inv.inv is t``."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self) -> Any:
        """+1 or -1 (or a tensor of them): whether a bijective elementwise transform increases or decreases."""
        raise NotImplementedError

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This transform with ``cache_size`` (itself when it already has it)."""
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        init_args = getattr(self, "_init_args", None)
        if init_args is None:
            raise NotImplementedError(f"{type(self)}.with_cache is not implemented")
        cls: Any = type(self)
        return cls(*init_args(), cache_size=cache_size)  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = None  # type: ignore[assignment]

    def __call__(self, x: Tensor) -> Tensor:
        """y = f(x) (the cached y when ``x`` is the cached input)."""
        if not self._cache_size:
            return self._call(x)
        if x is self._cached_x_y[0]:
            return self._cached_x_y[1]  # type: ignore[no-any-return]
        y = self._call(x)
        self._cached_x_y = (x, y)
        return y

    def _inv_call(self, y: Tensor) -> Tensor:
        if not self._cache_size:
            return self._inverse(y)
        if y is self._cached_x_y[1]:
            return self._cached_x_y[0]  # type: ignore[no-any-return]
        x = self._inverse(y)
        self._cached_x_y = (x, y)
        return x

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """log |det dy/dx| at the pair (x, y = f(x))."""
        raise NotImplementedError

    def forward_shape(self, shape: Sequence[int]) -> Shape:
        """The shape of f(x) for ``x`` of ``shape``."""
        return _size(shape)

    def inverse_shape(self, shape: Sequence[int]) -> Shape:
        """The shape of f^-1(y) for ``y`` of ``shape``."""
        return _size(shape)

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"


class _InverseTransform(Transform):
    """f^-1 as a transform (made by ``Transform.inv``): domain and codomain swap and the log-Jacobian changes sign."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = self._base = transform

    domain = constraints.dependent_property(lambda self: self._base.codomain, is_discrete=False)
    codomain = constraints.dependent_property(lambda self: self._base.domain, is_discrete=False)
    bijective = property(lambda self: self._base.bijective)  # type: ignore[assignment]
    sign = property(lambda self: self._base.sign)
    inv = property(lambda self: self._base)  # type: ignore[assignment]

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self._base.with_cache(cache_size).inv

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _InverseTransform) and self._base == other._base

    def __call__(self, x: Tensor) -> Tensor:
        return self._base._inv_call(x)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -self._base.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape: Sequence[int]) -> Shape:
        return self._base.inverse_shape(shape)

    def inverse_shape(self, shape: Sequence[int]) -> Shape:
        return self._base.forward_shape(shape)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._base!r})"


def _widen(constraint: C, event_dim: int) -> C:
    """``constraint`` with extra batch dims read as event dims, up to ``event_dim``."""
    extra = event_dim - constraint.event_dim
    return constraints.independent(constraint, extra) if extra > 0 else constraint


class ComposeTransform(Transform):
    """parts[-1] o ... o parts[0]; its event dim is the largest any part needs, and its log-Jacobian sums each
    part's over the dims that part treats as batch."""

    def __init__(self, parts: list[Transform], cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.parts = [p.with_cache(cache_size) for p in parts] if cache_size else list(parts)

    def _init_args(self) -> tuple[Any, ...]:
        return (self.parts,)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> C:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        need = self.parts[-1].codomain.event_dim  # walk back: the event dims each part's input must carry
        for part in reversed(self.parts):
            need = max(need + part.domain.event_dim - part.codomain.event_dim, part.domain.event_dim)
        return _widen(self.parts[0].domain, need)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> C:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        need = self.parts[0].domain.event_dim
        for part in self.parts:
            need = max(need + part.codomain.event_dim - part.domain.event_dim, part.codomain.event_dim)
        return _widen(self.parts[-1].codomain, need)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(p.bijective for p in self.parts)

    @property
    def sign(self) -> Any:
        return math.prod((p.sign for p in self.parts), start=1)

    @property
    def inv(self) -> Transform:
        if self._inv is None:
            inverse = ComposeTransform([p.inv for p in reversed(self.parts)])
            inverse._inv, self._inv = self, inverse
        return self._inv

    def __call__(self, x: Tensor) -> Tensor:
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        if not self.parts:
            return full_like(x, 0.0)
        values = [x]
        for part in self.parts[:-1]:
            values.append(part(values[-1]))
        values.append(y)
        event_dim = self.domain.event_dim
        total: Any = 0
        for part, a, b in zip(self.parts, values[:-1], values[1:]):
            total = total + sum_rightmost(part.log_abs_det_jacobian(a, b), event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total  # type: ignore[no-any-return]

    def forward_shape(self, shape: Sequence[int]) -> Shape:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return _size(shape)

    def inverse_shape(self, shape: Sequence[int]) -> Shape:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return _size(shape)

    def __repr__(self) -> str:
        return self.__class__.__name__ + "(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


identity_transform = ComposeTransform([])
"""The identity map (an empty composition)."""


class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` more rightmost dims read as event dims: the same map,
    with the log-Jacobian summed over those dims."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def _init_args(self) -> tuple[Any, ...]:
        return self.base_transform, self.reinterpreted_batch_ndims

    domain = constraints.dependent_property(
        lambda self: constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims), is_discrete=False)
    codomain = constraints.dependent_property(
        lambda self: constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims), is_discrete=False)

    bijective = property(lambda self: self.base_transform.bijective)  # type: ignore[assignment]
    sign = property(lambda self: self.base_transform.sign)

    def _call(self, x: Tensor) -> Tensor:
        if x.dim() < self.domain.event_dim:
            raise ValueError(f"Too few dimensions on input: {x.dim()} < {self.domain.event_dim}")
        return self.base_transform(x)

    def _inverse(self, y: Tensor) -> Tensor:
        if y.dim() < self.codomain.event_dim:
            raise ValueError(f"Too few dimensions on input: {y.dim()} < {self.codomain.event_dim}")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape: Sequence[int]) -> Shape:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Sequence[int]) -> Shape:
        return self.base_transform.inverse_shape(shape)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


def _swap_tail(shape: Sequence[int], old: Shape, new: Shape) -> Shape:
    """``shape`` with its trailing ``old`` dims replaced by ``new``; ValueError when it does not end in ``old``."""
    shape = _size(shape)
    if len(shape) < len(old):
        raise ValueError(f"Too few dimensions on input: {len(shape)} < {len(old)}")
    cut = len(shape) - len(old)
    if shape[cut:] != old:
        raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
    return shape[:cut] + new


class ReshapeTransform(Transform):
    """Reshapes the rightmost ``in_shape`` dims to ``out_shape`` (same element count); log-Jacobian 0."""

    bijective = True

    def __init__(self, in_shape: Sequence[int], out_shape: Sequence[int], cache_size: int = 0) -> None:
        self.in_shape, self.out_shape = _size(in_shape), _size(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError(f"in_shape, out_shape have different numbers of elements: {self.in_shape} vs {self.out_shape}")
        super().__init__(cache_size=cache_size)

    def _init_args(self) -> tuple[Any, ...]:
        return self.in_shape, self.out_shape

    domain = constraints.dependent_property(lambda self: constraints.independent(constraints.real, len(self.in_shape)))
    codomain = constraints.dependent_property(lambda self: constraints.independent(constraints.real, len(self.out_shape)))

    def _call(self, x: Tensor) -> Tensor:
        return x.reshape(_swap_tail(x.shape, self.in_shape, self.out_shape))

    def _inverse(self, y: Tensor) -> Tensor:
        return y.reshape(_swap_tail(y.shape, self.out_shape, self.in_shape))

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return full_like(x, 0.0, tuple(x.shape[: x.dim() - len(self.in_shape)]))

    def forward_shape(self, shape: Sequence[int]) -> Shape:
        return _swap_tail(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape: Sequence[int]) -> Shape:
        return _swap_tail(shape, self.out_shape, self.in_shape)


class _Stateless(Transform):
    """A transform without parameters: all its instances are equal."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, type(self))


__all__ = ["ComposeTransform", "IndependentTransform", "ReshapeTransform", "Transform", "identity_transform"]
