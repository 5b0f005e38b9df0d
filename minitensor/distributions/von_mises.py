"""VonMises (``torch.distributions.von_mises``): the circular normal, density exp(k cos(x - loc)) / (2 pi I0(k)) for
concentration k. Its normalizer uses the exponentially scaled Bessel functions (log I0(k) = log i0e(k) + k), exact to
rounding where PyTorch uses a polynomial approximation (good to ~1e-7 relative). Draws come from NumPy's von Mises
sampler on minitensor's shared generator, in [-pi, pi); there is no ``rsample``, as in PyTorch."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import creation, special
from ..random_state import rng_for
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, broadcast_all, expand_params

LOG_2PI = math.log(2 * math.pi)


def log_i0(k: Tensor) -> Tensor:
    """log I0(k) for k >= 0."""
    return special.i0e(k).log() + k  # type: ignore[no-any-return]


class VonMises(Distribution):
    """The von Mises distribution on the circle with mean direction ``loc`` and ``concentration``."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> VonMises:
        return expand_params(self, VonMises, batch_shape, ("loc", "concentration"), _instance)  # type: ignore[no-any-return]

    def log_prob(self, value: Tensor) -> Tensor:
        """k cos(x - loc) - log(2 pi) - log I0(k)."""
        if self._validate_args:
            self._validate_sample(value)
        k = self.concentration
        return k * (value - self.loc).cos() - LOG_2PI - log_i0(k)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """Draws wrapped into [-pi, pi), outside the graph."""
        shape = self._extended_shape(sample_shape)
        loc = np.broadcast_to(self.loc.detach().to_numpy().astype(np.float64), shape)
        kappa = np.broadcast_to(self.concentration.detach().to_numpy().astype(np.float64), shape)
        draws = np.mod(rng_for(None).vonmises(loc, kappa) + np.pi, 2 * np.pi) - np.pi
        return creation.tensor(draws, dtype=self.loc.dtype, backend=self.loc.backend)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        """The circular variance 1 - I1(k) / I0(k)."""
        k = self.concentration
        return 1 - special.i1e(k) / special.i0e(k)  # type: ignore[no-any-return]


__all__ = ["VonMises"]
