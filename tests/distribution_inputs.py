"""Shared helpers of the distribution tests: random parameters and values drawn from one seeded NumPy stream per test
module (``Inputs(seed)``, so that each module's draws do not depend on which other modules ran first), library-neutral
builders of matrix parameters, the ``Spec`` of a distribution's values to compare with torch (through
tests/torch_oracle.py's check), and a check of sample moments."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

import minitensor as mt


class Inputs:
    """float64 arrays from ``np.random.default_rng(seed)``: each method draws an array of the given shape."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def normal(self, *shape: int) -> np.ndarray:
        return self.rng.standard_normal(shape)

    def positive(self, *shape: int, low: float = 0.5, high: float = 2.5) -> np.ndarray:
        return self.rng.uniform(low, high, shape)

    def between(self, low: float, high: float, *shape: int) -> np.ndarray:
        return self.rng.uniform(low, high, shape)

    def unit(self, *shape: int) -> np.ndarray:
        """Probabilities away from 0 and 1."""
        return self.rng.uniform(0.05, 0.95, shape)

    def simplex(self, *shape: int) -> np.ndarray:
        """Points of the simplex over the last dim, every entry at least ~0.1 / K."""
        w = self.rng.uniform(0.1, 1.0, shape)
        return w / w.sum(-1, keepdims=True)

    def integers(self, low: int, high: int, *shape: int) -> np.ndarray:
        """Counts in [low, high) as floats."""
        return self.rng.integers(low, high, shape).astype(float)

    def cholesky_factor(self, *shape: int) -> np.ndarray:
        """Lower-triangular matrices with a positive diagonal."""
        raw = self.normal(*shape)
        return np.tril(raw, -1) + np.exp(np.diagonal(raw, axis1=-2, axis2=-1))[..., None] * np.eye(shape[-1])

    def spd(self, *shape: int) -> np.ndarray:
        """Symmetric positive-definite matrices, well conditioned: A A^T + n I."""
        raw = self.normal(*shape)
        return raw @ np.swapaxes(raw, -1, -2) + shape[-1] * np.eye(shape[-1])


TOL = {"rtol": 1e-10, "atol": 1e-10}
TRIGAMMA_TOL = {"rtol": 1e-8, "atol": 1e-8}
"""For gradients through digamma: torch's trigamma is off by up to ~1e-9 relative (minitensor's agrees with SciPy's to
1e-15), so those gradients agree to 1e-8 only."""


def lib(t: Any) -> Any:
    """The library of a tensor: torch or minitensor."""
    return torch if isinstance(t, torch.Tensor) else mt


def lower(L: Any, raw: Any) -> Any:
    """A lower Cholesky factor from a raw square matrix, in either library (``L`` is torch or mt)."""
    return L.tril(raw, -1) + L.diag_embed(raw.diagonal(dim1=-2, dim2=-1).exp())


def spd_of(like: Any, raw: Any) -> Any:
    """A symmetric positive-definite matrix from a raw one in either library: raw raw^T + diag(2)."""
    return raw @ raw.mT + (lib(like).ones_like(raw.diagonal(dim1=-2, dim2=-1)) + 1).diag_embed()


def within_sampling_error(values: np.ndarray, mean: np.ndarray, var: np.ndarray, extra_sigma: Any = 0.0) -> None:
    """Assert that the sample mean and variance over dim 0 of ``values`` match ``mean`` and ``var`` to within their
    sampling error (5 standard errors for the mean, 6 for the variance, from the sample's fourth moment), plus
    ``extra_sigma`` of the reference's own error."""
    n = values.shape[0]
    sigma = np.sqrt(var / n) + extra_sigma
    assert np.all(np.abs(values.mean(0) - mean) <= 5 * sigma + 1e-12), (values.mean(0), mean)
    fourth = np.mean((values - mean) ** 4, 0)
    spread = np.sqrt(np.maximum(fourth - var**2, 0) / n)
    assert np.all(np.abs(values.var(0) - var) <= 6 * spread + var / np.sqrt(n)), (values.var(0), var)


VALUE_METHODS = ("log_prob", "cdf", "log_cdf", "log_survival_function")


@dataclass
class Spec:
    """A distribution made by ``make(D, *params)`` from ``params``; ``value`` goes to the VALUE_METHODS, ``q`` to
    icdf; ``props`` and ``methods`` name what to compare; ``grad``: compare gradients too."""

    make: Any
    params: list[np.ndarray]
    value: np.ndarray | None = None
    q: np.ndarray | None = None
    props: tuple[str, ...] = ("mean", "variance", "stddev", "mode")
    methods: tuple[str, ...] = ("log_prob", "entropy")
    tol: dict[str, float] = field(default_factory=lambda: TOL)
    grad: bool = True


def outputs(spec: Spec) -> Any:
    """fn(L, *arrays(spec)) -> the compared values, for tests/torch_oracle.py's check."""
    n = len(spec.params)

    def fn(L: Any, *a: Any) -> tuple[Any, ...]:
        d = spec.make(L.distributions, *a[:n])
        out = [getattr(d, p) for p in spec.props]
        rest = list(a[n:])
        for m in spec.methods:
            if m in VALUE_METHODS:
                out.append(getattr(d, m)(rest[0]))
            elif m == "icdf":
                out.append(d.icdf(rest[-1]))
            elif m == "enumerate_support":
                out.append(d.enumerate_support())
                out.append(d.enumerate_support(expand=False))
            else:
                out.append(getattr(d, m)())
        return tuple(out)

    return fn


def arrays(spec: Spec) -> list[np.ndarray]:
    return spec.params + [a for a in (spec.value, spec.q) if a is not None]
