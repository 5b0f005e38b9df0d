"""Transforms from unconstrained reals onto a constraint's set (``torch.distributions.constraint_registry``).

``biject_to(c)`` is a bijection real -> c (for HMC-style samplers: it has ``log_abs_det_jacobian``);
``transform_to(c)`` is any map onto c (for optimising constrained parameters: ``transform_to(c)(u)`` lies in c for
every real ``u``). They differ on the simplex (stick-breaking vs softmax) and on lower-Cholesky, positive-definite and
positive-semidefinite matrices, which only ``transform_to`` covers; ``cat`` and ``stack`` constraints get the
CatTransform or StackTransform of their parts' transforms from the same registry. ``register`` adds a factory for a
constraint class (or the class of a constraint instance).
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Number
from typing import Any

from . import constraints
from .transform_base import ComposeTransform, IndependentTransform, Transform, identity_transform
from .transforms_elementwise import AffineTransform, ExpTransform, SigmoidTransform
from .transforms_join import CatTransform, StackTransform
from .transforms_vector import (
    CorrCholeskyTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    SoftmaxTransform,
    StickBreakingTransform,
)

Factory = Callable[[Any], Transform]


class ConstraintRegistry:
    """Constraint classes -> factories ``f(constraint) -> Transform``; calling the registry looks one up by the
    constraint's exact class."""

    def __init__(self) -> None:
        self._registry: dict[type, Factory] = {}

    def register(self, constraint: Any, factory: Factory | None = None) -> Any:
        """Register ``factory`` for ``constraint`` (a Constraint subclass or instance); without ``factory``, a
        decorator that registers the function it decorates."""
        if factory is None:
            return lambda f: self.register(constraint, f)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not (isinstance(constraint, type) and issubclass(constraint, constraints.Constraint)):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: constraints.Constraint) -> Transform:
        """The registered transform onto ``constraint``; NotImplementedError naming its class when there is none."""
        factory = self._registry.get(type(constraint))
        if factory is None:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints")
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(*cs: constraints.Constraint) -> Callable[[Factory], Factory]:
    """Register a factory with both registries for each of ``cs``."""

    def decorator(f: Factory) -> Factory:
        for c in cs:
            biject_to.register(c, f)
            transform_to.register(c, f)
        return f

    return decorator


@_both(constraints.real)
def _to_real(constraint: Any) -> Transform:
    return identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint: Any) -> Transform:
    return IndependentTransform(biject_to(constraint.base_constraint), constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint: Any) -> Transform:
    return IndependentTransform(transform_to(constraint.base_constraint), constraint.reinterpreted_batch_ndims)


@_both(constraints.greater_than(0.0), constraints.greater_than_eq(0.0))
def _to_greater_than(constraint: Any) -> Transform:
    """x -> lower_bound + exp(x) (positive and nonnegative included, as in PyTorch)."""
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.lower_bound, 1)])


@_both(constraints.less_than(0.0))
def _to_less_than(constraint: Any) -> Transform:
    """x -> upper_bound - exp(x)."""
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.upper_bound, -1)])


@_both(constraints.interval(0.0, 1.0), constraints.half_open_interval(0.0, 1.0))
def _to_interval(constraint: Any) -> Transform:
    """x -> lower + (upper - lower) sigmoid(x); the bare sigmoid for the number bounds 0 and 1."""
    low, high = constraint.lower_bound, constraint.upper_bound
    if isinstance(low, Number) and isinstance(high, Number) and low == 0 and high == 1:
        return SigmoidTransform()
    return ComposeTransform([SigmoidTransform(), AffineTransform(low, high - low)])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint: Any) -> Transform:
    return StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint: Any) -> Transform:
    return SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint: Any) -> Transform:
    return LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint: Any) -> Transform:
    return PositiveDefiniteTransform()


@_both(constraints.corr_cholesky)
def _to_corr_cholesky(constraint: Any) -> Transform:
    return CorrCholeskyTransform()


def _register_joins(registry: ConstraintRegistry) -> None:
    """``cat`` and ``stack`` constraints -> CatTransform / StackTransform of ``registry``'s transforms of their parts."""

    @registry.register(constraints.cat)
    def _to_cat(constraint: Any) -> Transform:
        return CatTransform([registry(c) for c in constraint.cseq], constraint.dim, constraint.lengths)

    @registry.register(constraints.stack)
    def _to_stack(constraint: Any) -> Transform:
        return StackTransform([registry(c) for c in constraint.cseq], constraint.dim)


_register_joins(biject_to)
_register_joins(transform_to)


__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]
