"""Elementwise transforms (``torch.distributions.transforms``): exp, sigmoid, softplus, tanh, abs, power, affine
and a distribution's cdf. Each maps every entry on its own, so log |det J| is elementwise too (the affine map sums
it over its ``event_dim`` rightmost dims)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Number
from typing import Any

from ..tensor import Tensor
from ..tensor_broadcast import broadcast_shapes
from ..type_info import finfo
from . import constraints
from .distribution import Distribution, _size, broadcast_all, full_like, softplus, sum_rightmost
from .transform_base import Shape, Transform, _Stateless, _widen


class _Increasing(_Stateless):
    """An increasing elementwise bijection from the reals."""

    domain = constraints.real
    bijective = True
    sign = +1  # type: ignore[assignment]


class ExpTransform(_Increasing):
    """y = exp(x); log |dy/dx| = x."""

    codomain = constraints.positive
    _call = staticmethod(Tensor.exp)  # type: ignore[assignment]
    _inverse = staticmethod(Tensor.log)  # type: ignore[assignment]

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x


def _clipped_sigmoid(x: Tensor) -> Tensor:
    """sigmoid(x) kept inside [tiny, 1 - eps] of x's dtype."""
    info = finfo(x.dtype)
    return x.sigmoid().clamp(min=info.tiny, max=1.0 - info.eps)


class SigmoidTransform(_Increasing):
    """y = 1 / (1 + exp(-x)), clipped into (0, 1); x = logit(y); log |dy/dx| = -softplus(-x) - softplus(x)."""

    codomain = constraints.unit_interval
    _call = staticmethod(_clipped_sigmoid)  # type: ignore[assignment]

    def _inverse(self, y: Tensor) -> Tensor:
        info = finfo(y.dtype)
        y = y.clamp(min=info.tiny, max=1.0 - info.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x) - softplus(x)


class SoftplusTransform(_Increasing):
    """y = log(1 + exp(x)); x = y + log(1 - exp(-y)); log |dy/dx| = -softplus(-x)."""

    codomain = constraints.positive
    _call = staticmethod(softplus)  # type: ignore[assignment]

    def _inverse(self, y: Tensor) -> Tensor:
        return (-(-y).expm1()).log() + y

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x)


class TanhTransform(_Increasing):
    """y = tanh(x); x = atanh(y), not clamped (use cache_size=1 near +-1); log |dy/dx| = 2 (log 2 - x - softplus(-2x))."""

    codomain = constraints.interval(-1.0, 1.0)
    _call = staticmethod(Tensor.tanh)  # type: ignore[assignment]
    _inverse = staticmethod(Tensor.atanh)  # type: ignore[assignment]

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AbsTransform(_Stateless):
    """y = |x|, not bijective: its ``inv`` is the identity on [0, inf)."""

    domain = constraints.real
    codomain = constraints.positive
    _call = staticmethod(Tensor.abs)  # type: ignore[assignment]

    def _inverse(self, y: Tensor) -> Tensor:
        return y


def _broadcast_with(shape: Sequence[int], *params: Any) -> Shape:
    """``shape`` broadcast with the shapes of the tensors among ``params``."""
    return tuple(broadcast_shapes(_size(shape), *[tuple(p.shape) for p in params if isinstance(p, Tensor)]))


class PowerTransform(Transform):
    """y = x ** exponent on (0, inf); log |dy/dx| = log |exponent y / x|."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def _init_args(self) -> tuple[Any, ...]:
        return (self.exponent,)

    sign = property(lambda self: self.exponent.sign())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PowerTransform) and bool((self.exponent == other.exponent).all().item())

    def _call(self, x: Tensor) -> Tensor:
        return x.pow(self.exponent)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape: Sequence[int]) -> Shape:
        return _broadcast_with(shape, self.exponent)

    inverse_shape = forward_shape


class AffineTransform(Transform):
    """y = loc + scale * x, with ``event_dim`` rightmost dims per event; log |det| = sum over the event of
    log |scale|."""

    bijective = True

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    def _init_args(self) -> tuple[Any, ...]:
        return self.loc, self.scale, self._event_dim

    event_dim = property(lambda self: self._event_dim)  # type: ignore[assignment]
    domain = constraints.dependent_property(lambda self: _widen(constraints.real, self._event_dim), is_discrete=False)
    codomain = constraints.dependent_property(lambda self: _widen(constraints.real, self._event_dim), is_discrete=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        pairs = ((self.loc, other.loc), (self.scale, other.scale))
        return all(a == b if isinstance(a, Number) and isinstance(b, Number) else bool((a == b).all().item())
                   for a, b in pairs)

    @property
    def sign(self) -> Any:
        if isinstance(self.scale, Tensor):
            return self.scale.sign()
        return (self.scale > 0) - (self.scale < 0)

    def _call(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        shape = tuple(x.shape)[: x.dim() - self._event_dim]
        if isinstance(self.scale, Tensor):
            result = self.scale.abs().log()
        else:
            result = full_like(x, math.log(abs(float(self.scale))))
        return sum_rightmost(result, self._event_dim).expand(*shape)

    def forward_shape(self, shape: Sequence[int]) -> Shape:
        return _broadcast_with(shape, self.loc, self.scale)

    inverse_shape = forward_shape


class CumulativeDistributionTransform(Transform):
    """y = F(x) for the cdf F of a univariate ``distribution``; log |dy/dx| = log p(x)."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1  # type: ignore[assignment]

    def __init__(self, distribution: Distribution, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    def _init_args(self) -> tuple[Any, ...]:
        return (self.distribution,)

    domain = property(lambda self: self.distribution.support)  # type: ignore[assignment]

    def _call(self, x: Tensor) -> Tensor:
        return self.distribution.cdf(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return self.distribution.log_prob(x)


__all__ = ["AbsTransform", "AffineTransform", "CumulativeDistributionTransform", "ExpTransform", "PowerTransform",
           "SigmoidTransform", "SoftplusTransform", "TanhTransform"]
