"""ExponentialFamily: the base of the distributions whose density is p(x) = exp(<t(x), theta> - F(theta) + k(x))
(``torch.distributions.exp_family``).

A family gives its natural parameters theta (``_natural_params``), its log normalizer F (``_log_normalizer``) and the
mean of its carrier measure E k(X) (``_mean_carrier_measure``); since grad F(theta) = E t(X), the entropy is
H = F(theta) - <theta, grad F(theta)> - E k(X), and KL between two members of one family is the Bregman divergence
of F (``kl_extra``). As in PyTorch, both differentiate F at a detached copy of theta: their values are exact, and
they carry no gradient to the parameters theta came from (the families override ``entropy`` with closed forms that
do).
"""

from __future__ import annotations

from typing import Any

from .. import autograd
from ..autodiff import enable_grad
from ..tensor import Tensor
from .distribution import Distribution


def log_normalizer_and_gradients(family: Any, params: tuple[Tensor, ...]) -> tuple[Tensor, list[Tensor], tuple[Any, ...]]:
    """(F(theta), theta as detached leaves, grad F(theta)) for ``family``'s log normalizer at ``params``."""
    leaves = [p.detach().requires_grad_() for p in params]
    with enable_grad():
        value = family._log_normalizer(*leaves)
        gradients = autograd.grad(value.sum(), leaves, retain_graph=True)  # value stays differentiable
    return value, leaves, gradients


class ExponentialFamily(Distribution):
    """A distribution of an exponential family; ``entropy`` from the log normalizer (see the module)."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        """theta, as a tuple of tensors."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        """F(theta) = log of the integral of exp(<t(x), theta> + k(x))."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        """E k(X) (a number or a tensor)."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """F(theta) - <theta, grad F(theta)> - E k(X), each inner product summed over a parameter's non-batch dims."""
        carrier = self._mean_carrier_measure
        value, leaves, gradients = log_normalizer_and_gradients(self, self._natural_params)
        result = value - carrier
        for theta, g in zip(leaves, gradients):
            result = result - (theta * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result


__all__ = ["ExponentialFamily"]
