"""The ``Distribution`` base class and the helpers the distributions share (``torch.distributions.distribution`` and
``torch.distributions.utils``).

A distribution has a ``batch_shape`` (independent, differently parametrised copies) and an ``event_shape`` (the shape
of one draw); ``sample(sample_shape)`` has shape ``sample_shape + batch_shape + event_shape`` and ``log_prob(value)``
reduces the event dims away. With ``validate_args`` (on by default, as in PyTorch) the parameters are checked against
``arg_constraints`` at construction and values against ``support`` in ``log_prob``/``cdf``/``icdf``: a ValueError
names the parameter and the constraint.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import creation, dtypes
from ..autodiff import no_grad
from ..tensor import Tensor
from ..tensor_broadcast import broadcast_shapes, broadcast_tensors
from ..type_info import finfo
from . import constraints

lazy_property = functools.cached_property
"""A parameter computed on first use and cached (Bernoulli's ``logits`` from ``probs``); validation skips one not yet
computed."""

Size = tuple[int, ...]


def _size(shape: Any) -> Size:
    if isinstance(shape, int):
        return (shape,)
    return tuple(int(s) for s in shape)


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """The arguments as tensors of one broadcast shape: numbers take the dtype and backend of the first tensor among
    them (the default float dtype when there is none)."""
    like = next((v for v in values if isinstance(v, Tensor)), None)
    for v in values:
        if not isinstance(v, (Tensor, int, float, np.integer, np.floating)):
            raise ValueError("Input arguments must all be instances of numbers or minitensor Tensors")
    if like is None:
        dtype = dtypes.get_default_dtype()
        tensors = [creation.tensor(float(v), dtype=dtype) for v in values]
    else:
        dtype = like.dtype if like.dtype.kind == "f" else dtypes.get_default_dtype()
        tensors = [v if isinstance(v, Tensor) else creation.tensor(float(v), dtype=dtype, backend=like.backend)
                   for v in values]
    return tuple(broadcast_tensors(*tensors))


def full_like(t: Tensor, value: float, shape: Sequence[int] | None = None) -> Tensor:
    """A tensor of ``value`` with ``t``'s dtype and backend (and shape unless given)."""
    return creation.full(tuple(t.shape if shape is None else shape), value, dtype=t.dtype, backend=t.backend)


def softplus(x: Tensor) -> Tensor:
    """log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)), without overflow; max(x, 0) is written (x + |x|) / 2 so that
    the gradient at x = 0 is sigmoid(0) = 1/2 (relu's and abs's there are 0)."""
    return 0.5 * (x + x.abs()) + (-x.abs()).exp().log1p()


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities clamped into [eps, 1 - eps] of their dtype."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits of probabilities: log-odds for ``is_binary``, else the log-probabilities."""
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities of logits: the sigmoid for ``is_binary``, else the softmax over the last dim."""
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """``value`` summed over its ``dim`` rightmost dims."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[: value.dim() - dim]) + (-1,)).sum(-1)


def xlogy(x: Tensor, y: Tensor) -> Tensor:
    """x * log(y), 0 where x == 0."""
    return x.xlogy(y)


HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


class Distribution:
    """The base of every distribution: shapes, validation, ``sample`` from ``rsample`` and the defaults."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True  # PyTorch's default (under __debug__)

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions made without ``validate_args``."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args(): value must be True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape: Sequence[int] = (), event_shape: Sequence[int] = (),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = _size(batch_shape)
        self._event_shape = _size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = {{}}` "
                              "or initialize the distribution with `validate_args=False` to turn off validation.",
                              stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue
                value = getattr(self, param)
                if not bool(constraint.check(value).all().item()):
                    raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                                     f"of distribution {self!r} to satisfy the constraint {constraint!r}, but found "
                                     f"invalid values:\n{value}")

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Distribution:
        """This distribution with its parameters broadcast to ``batch_shape`` (no data copied)."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        raise NotImplementedError

    @property
    def support(self) -> Any:
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """A draw of shape ``sample_shape + batch_shape + event_shape``, outside the graph."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """A reparameterised draw: differentiable in the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        return self.sample((n,))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        """exp(entropy)."""
        return self.entropy().exp()

    def _extended_shape(self, sample_shape: Sequence[int] = ()) -> Size:
        return _size(sample_shape) + self._batch_shape + self._event_shape

    def _validate_sample(self, value: Any) -> None:
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape = tuple(value.shape)
        start = len(shape) - len(self._event_shape)
        if shape[start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {shape} vs {self._event_shape}.")
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {shape} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please initialize "
                          "the distribution with `validate_args=False` to turn off validation.", stacklevel=2)
            return
        if not bool(support.check(value).all().item()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {shape}) to be within the "
                             f"support ({support!r}) of the distribution {self!r}, but found invalid values:\n{value}")

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        if _instance is None and type(self).__init__ != cls.__init__:  # type: ignore[misc]
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        parts = []
        for p in names:
            v = self.__dict__[p]
            shown = v.item() if v.dim() == 0 else v if v.numel() == 1 else tuple(v.shape)
            parts.append(f"{p}: {shown}")
        return f"{self.__class__.__name__}({', '.join(parts)})"


def expand_params(self: Distribution, cls: type, batch_shape: Sequence[int], names: Sequence[str],
                  _instance: Any = None) -> Any:
    """The body of most ``expand`` methods: a new ``cls`` whose parameters ``names`` are broadcast to
    ``batch_shape``, without validation."""
    new = self._get_checked_instance(cls, _instance)
    shape = _size(batch_shape)
    for name in names:
        if name in self.__dict__:
            value = self.__dict__[name]
            extra = tuple(value.shape[len(self.batch_shape):])
            new.__dict__[name] = value.expand(*(shape + extra))
    Distribution.__init__(new, shape, self.event_shape, validate_args=False)
    new._validate_args = self._validate_args
    return new


__all__ = ["Distribution", "broadcast_all", "probs_to_logits", "logits_to_probs", "clamp_probs", "lazy_property",
           "broadcast_shapes"]
