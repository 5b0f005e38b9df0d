"""Sampling from tensors of parameters (the ``RandomMethods`` mixin: ``bernoulli``, ``bernoulli_``, ``multinomial``)
and the matching ``mt.`` functions: bernoulli, poisson, binomial, randint_like and the tensor forms of normal
(``mt.normal`` itself, with its float/float form, and ``mt.multinomial`` are in creation.py).

Values are drawn on the host from a NumPy generator (the shared one, or ``generator=``; random_state.py) and placed on
the parameters' backend; bernoulli compares uniform draws with the probabilities there and normal scales standard
normal draws there, so both run under ``minitensor.compile`` (their validation reads are replayed, see capture.py).
poisson needs the rates on the host. Names, signatures, result dtypes, errors and gradients follow PyTorch: the
gradient of a sample with respect to its parameters is zero (bernoulli with a float ``p`` has none, as in PyTorch).
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context, is_grad_enabled
from .backends import get_backend
from .errors import DTypeError, GradientError, ShapeError
from .random_state import RandomStream, rng_for
from .tensor_data import shape_broadcast

if TYPE_CHECKING:
    from .tensor import Tensor

GeneratorLike = RandomStream | np.random.Generator | None
_INTEGER_RANGE = {dtypes.bool_: (0, 1), dtypes.int32: (-(1 << 31), (1 << 31) - 1), dtypes.int64: (-(1 << 63), (1 << 63) - 1)}


def _is_tensor(x: Any) -> bool:
    """Every Tensor is a RandomMethods (tensor.py imports this module, so Tensor itself is not importable here)."""
    return isinstance(x, RandomMethods)


class _Drawn(F.TensorFunction):
    """A sample recorded as drawn from its parameter tensors: their gradient is zero (PyTorch's normal, bernoulli,
    poisson)."""

    higher_order = True

    @staticmethod
    def forward(ctx: Context, sample: Tensor, *params: Tensor) -> Tensor:  # type: ignore[override]
        ctx.count = len(params)  # type: ignore[attr-defined]
        return sample._map("id")

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor | None, ...]:
        return (None, *[d._zeros(d.shape) for _ in range(ctx.count)])  # type: ignore[attr-defined]


class _NoDerivative(_Drawn):
    """A sample whose parameter has no derivative in PyTorch: backward raises (``bernoulli(input, p)``)."""

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor | None, ...]:
        raise GradientError("the derivative of bernoulli(input, p) with respect to input is not implemented "
                            "(as in PyTorch); draw from input.detach()")


def _attach(sample: Tensor, *params: Any, derivative: bool = True) -> Tensor:
    """``sample``, with a zero-gradient history to the tensors among ``params`` when one of them requires grad."""
    tensors = [p for p in params if _is_tensor(p)]
    if not (is_grad_enabled() and any(t.requires_grad for t in tensors)) or sample.dtype.kind != "f":
        return sample
    return (_Drawn if derivative else _NoDerivative).apply(sample, *tensors)


def _bad_entry(values: np.ndarray, ok: np.ndarray) -> str:
    """The first value where ``ok`` is False, and its index."""
    flat = int(np.flatnonzero(~ok.reshape(-1))[0])
    index = tuple(int(i) for i in np.unravel_index(flat, values.shape))
    return f"{values.reshape(-1)[flat]} at index {index}"


def _check_probabilities(p: Tensor, name: str) -> None:
    """DTypeError unless ``p`` is a float tensor, ValueError unless every value is in [0, 1] (NaN is not).
    A validation site of minitensor.compile: replays call it again on their inputs."""
    if p.dtype.kind != "f":
        raise DTypeError(f"{name}() needs floating point probabilities, got a tensor of dtype {p.dtype} (PyTorch: not implemented)")
    values = p.to_numpy()
    ok = (values >= 0) & (values <= 1)
    if not ok.all():
        raise ValueError(f"{name}() expects probabilities in [0, 1], got {_bad_entry(values, ok)}")


def _check_std(std: Tensor) -> None:
    """ValueError unless every standard deviation is >= 0 (NaN is not). A validation site of minitensor.compile."""
    values = std.to_numpy()
    ok = values >= 0
    if not ok.all():
        raise ValueError(f"normal expects all elements of std >= 0.0, got {_bad_entry(values, ok)}")


def _probability(p: Any, name: str) -> float:
    """A number ``p`` in [0, 1] as a float (TypeError for anything else, ValueError outside [0, 1] or NaN)."""
    if _is_tensor(p) or not isinstance(p, (int, float, np.integer, np.floating)):
        hint = " (use input.bernoulli_(p) for a tensor of probabilities)" if _is_tensor(p) else ""
        raise TypeError(f"{name}(): p must be a float, got {type(p).__name__}{hint}")
    if not 0 <= p <= 1:
        raise ValueError(f"{name}() expects p to be in [0, 1], but got p={p}")
    return float(p)


def bernoulli(input: Tensor, p: float | None = None, *, generator: GeneratorLike = None) -> Tensor:  # noqa: A002
    """0/1 samples of ``input``'s shape and dtype: 1 with probability ``input[i]`` (a float tensor of values in [0, 1]),
    or with probability ``p`` for every element when it is given (then ``input`` may have any dtype)."""
    rng = rng_for(generator)
    if p is None:
        _check_probabilities(input, "bernoulli")
        uniform = input._lift(rng.random(input.shape, dtype=input.dtype), input.dtype)
        return _attach((uniform < input.detach()).cast(input.dtype), input)
    prob = _probability(p, "bernoulli")
    uniform = input._lift(rng.random(input.shape), dtypes.float64)
    return _attach((uniform < prob).cast(input.dtype), input, derivative=False)


def poisson(input: Tensor, generator: GeneratorLike = None) -> Tensor:  # noqa: A002
    """Counts drawn from Poisson(``input[i]``), of ``input``'s shape and (float) dtype; rates must be >= 0."""
    if input.dtype.kind != "f":
        raise DTypeError(f"poisson() needs floating point rates, got a tensor of dtype {input.dtype} (PyTorch: not implemented)")
    rng = rng_for(generator)
    rates = input.to_numpy().astype(np.float64)
    ok = rates >= 0
    if not ok.all():
        raise ValueError(f"poisson(): invalid Poisson rate, expected rate to be non-negative, got {_bad_entry(rates, ok)}")
    try:
        counts = np.asarray(rng.poisson(rates))
    except ValueError as error:  # NumPy's counts are int64: rates near 2**63 and inf cannot be sampled
        raise ValueError(f"poisson(): rate {rates.max()} is too large to sample ({error})") from error
    return _attach(input._lift(counts.astype(input.dtype), input.dtype), input)


class _NoBinomialDerivative(_Drawn):
    """A binomial sample: PyTorch has no derivative with respect to its count or probability, so backward raises."""

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor | None, ...]:
        raise GradientError("the derivative for 'binomial' is not implemented (as in PyTorch); draw from detached "
                            "count and prob")


def binomial(count: Tensor, prob: Tensor, generator: GeneratorLike = None) -> Tensor:
    """Successes in floor(count[i]) trials of probability prob[i] (float tensors of one dtype, broadcast), as
    ``count``'s dtype; counts must be >= 0 and probabilities in [0, 1] (ValueError; torch leaves those undefined)."""
    for name, value in (("count", count), ("prob", prob)):
        if not _is_tensor(value):
            raise TypeError(f"binomial(): argument '{name}' must be Tensor, not {type(value).__name__}")
    if count.dtype.kind != "f":
        raise DTypeError(f"binomial only supports floating-point dtypes for count, got: {count.dtype} (shape {count.shape})")
    if prob.dtype != count.dtype:
        raise DTypeError(f"binomial(): Found dtype {prob.dtype} for prob but expected {count.dtype} (count's)")
    count._check_backend(prob)
    shape = shape_broadcast(count.shape, prob.shape)
    n, p = np.broadcast_to(count.to_numpy(), shape), np.broadcast_to(prob.to_numpy(), shape)
    for what, values, ok in (("count", n, n >= 0), ("prob", p, (p >= 0) & (p <= 1))):
        if not ok.all():
            raise ValueError(f"binomial(): {what} must be {'>= 0' if what == 'count' else 'in [0, 1]'}, got "
                             f"{_bad_entry(values, ok)}")
    n = np.floor(np.where(np.isinf(n), 0, n)).astype(np.int64)
    drawn = np.asarray(rng_for(generator).binomial(n, p)).astype(count.dtype)
    sample = count._lift(drawn, count.dtype)
    if not (is_grad_enabled() and (count.requires_grad or prob.requires_grad)):
        return sample
    return _NoBinomialDerivative.apply(sample, count, prob)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,  # noqa: A002
                generator: GeneratorLike = None) -> Tensor:
    """``Tensor.multinomial`` and ``mt.multinomial``: category indices (int64, (num_samples,) or (rows, num_samples)) drawn with probability
    proportional to the non-negative weights of 1-D or 2-D ``input``'s last dim, as ``mt.multinomial``."""
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)):
        raise TypeError(f"multinomial(): argument 'num_samples' must be int, not {type(num_samples).__name__}")
    if input.dims not in (1, 2):
        raise ShapeError(f"multinomial(): prob_dist must be 1 or 2 dim, got shape {input.shape}")
    if input.dtype.kind != "f":
        raise DTypeError(f"multinomial(): only floating point weights are supported, got {input.dtype}")
    categories = input.shape[-1]
    if num_samples <= 0:
        raise ValueError(f"multinomial(): cannot sample num_samples={num_samples} <= 0 samples")
    if not replacement and num_samples > categories:
        raise ValueError(f"multinomial(): cannot sample n_sample={num_samples} > prob_dist.size(-1)={categories} "
                         "samples without replacement")
    weights = np.atleast_2d(input.to_numpy().astype(np.float64))
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise ValueError("multinomial(): probability tensor contains either inf, nan or element < 0")
    rng = rng_for(generator)
    samples = np.empty((weights.shape[0], num_samples), dtype=np.int64)
    for row, w in enumerate(weights):
        total, nonzero = w.sum(), np.count_nonzero(w)
        if not total > 0:
            raise ValueError(f"multinomial(): invalid distribution in row {row} (sum of probabilities <= 0)")
        if not replacement and nonzero < num_samples:
            raise ValueError(f"multinomial(): row {row} has {nonzero} non-zero categories, fewer than "
                             f"num_samples={num_samples} drawn without replacement")
        samples[row] = rng.choice(categories, size=num_samples, replace=replacement, p=w / total)
    return input._lift(samples if input.dims == 2 else samples[0], dtypes.int64)


def normal_from(mean: Any, std: Any, generator: GeneratorLike = None) -> Tensor:
    """``mt.normal`` where ``mean`` and/or ``std`` is a float tensor: samples of N(mean, std**2) of the broadcast shape,
    in ``mean``'s dtype (else ``std``'s), on their backend."""
    for name, value in (("mean", mean), ("std", std)):
        if _is_tensor(value):
            if value.dtype.kind != "f":
                raise DTypeError(f"normal(): {name} must be a floating point tensor, got {value.dtype} (PyTorch: not implemented)")
        elif isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"normal(): {name} must be a Tensor or a float, got {type(value).__name__}")
    like = mean if _is_tensor(mean) else std
    if _is_tensor(std):
        _check_std(std)
    elif not std >= 0:
        raise ValueError(f"normal expects std >= 0.0, but found std {std}")
    shape = shape_broadcast(mean.shape if _is_tensor(mean) else (), std.shape if _is_tensor(std) else ())
    rng = rng_for(generator)
    z = like._lift(rng.standard_normal(shape, dtype=like.dtype), like.dtype)
    scale = std.detach().cast(like.dtype) if _is_tensor(std) else float(std)
    shift = mean.detach() if _is_tensor(mean) else float(mean)
    return _attach(z * scale + shift, mean, std)


def _bound(value: Any, name: str) -> int:
    if _is_tensor(value) and value.numel() == 1 and value.dtype.kind in "iu":
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"randint_like(): argument '{name}' must be int, not {type(value).__name__}")
    return operator.index(value)


def randint_like(input: Tensor, low: int = 0, high: int | None = None, *, generator: GeneratorLike = None,  # noqa: A002
                 dtype: Any = None, backend: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Integers drawn uniformly from [low, high) in a tensor of ``input``'s shape, and its dtype and backend unless
    given; ``randint_like(input, high)`` draws from [0, high)."""
    if high is None:
        low, high = 0, low
    lo, hi = _bound(low, "low"), _bound(high, "high")
    if lo >= hi:
        raise ValueError(f"randint_like() expects low < high, but got low={lo} >= high={hi}")
    resolved = input.dtype if dtype is None else dtypes.as_dtype(dtype)
    least, most = _INTEGER_RANGE.get(resolved, _INTEGER_RANGE[dtypes.int64])
    if lo < least or hi - 1 > most:
        raise ValueError(f"randint_like(): [{lo}, {hi}) does not fit {resolved} (values from {least} to {most})")
    values = rng_for(generator).integers(lo, hi, input.shape)
    out = input._lift(values.astype(resolved), resolved)
    if backend is not None or device is not None:
        out = out._to_backend(get_backend(backend if backend is not None else device))
    return out.requires_grad_(True) if requires_grad else out


class RandomMethods:
    """Bernoulli and multinomial samples from a tensor (methods of Tensor)."""

    def multinomial(self: Any, num_samples: int, replacement: bool = False, *, generator: GeneratorLike = None) -> Tensor:
        """Category indices drawn from the weights in this tensor's last dim (see :func:`multinomial`)."""
        return multinomial(self, num_samples, replacement, generator=generator)

    def bernoulli(self: Any, p: float | None = None, *, generator: GeneratorLike = None) -> Tensor:
        """0/1 samples with probability ``self[i]`` (or ``p``), of this tensor's shape and dtype."""
        return bernoulli(self, p, generator=generator)

    def bernoulli_(self: Any, p: Any = 0.5, *, generator: GeneratorLike = None) -> Tensor:
        """Fill this tensor (any dtype) with 0/1 samples: 1 with probability ``p``, a number or a float tensor of
        probabilities that broadcasts to this tensor's shape; returns this tensor."""
        rng = rng_for(generator)
        if _is_tensor(p):
            _check_probabilities(p, "bernoulli_")
            if shape_broadcast(p.shape, self.shape) != self.shape:
                raise ShapeError(f"bernoulli_(): p of shape {p.shape} does not broadcast to the tensor's shape {self.shape}")
            drawn = self._lift(rng.random(self.shape, dtype=p.dtype), p.dtype) < p.detach()
        else:
            drawn = self._lift(rng.random(self.shape), dtypes.float64) < _probability(p, "bernoulli_")
        return self.copy_(drawn)


__all__ = ["bernoulli", "poisson", "binomial", "randint_like"]
