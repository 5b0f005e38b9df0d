"""The random fills of tensor_fill_random.py (``exponential_ geometric_ log_normal_ cauchy_ random_``) against torch:
the same distributions (two-sample Kolmogorov-Smirnov tests, not the same values: the streams differ), PyTorch's
dtype-dependent ``random_`` ranges, writes through views, seeding, gradients and the errors for bad parameters.

The bulk runs on the CPU backends; one tiny case runs on every backend (cuda under Numba's simulator).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import CPU_BACKENDS
from scipy import stats

import minitensor as mt
from minitensor import DTypeError, GradientError
from minitensor.tensor_fill_random import RandomParameterError

torch = pytest.importorskip("torch")


# --- 4. random fills: distributions against torch's ---

N = 20000


def draws(backend: str, fill: Callable[[Any], Any], dtype: str = "float64", n: int = N) -> tuple[np.ndarray, np.ndarray]:
    """``fill`` on an (n,) tensor of ``dtype`` in minitensor (on ``backend``) and torch, from fixed seeds."""
    mt.manual_seed(11)
    torch.manual_seed(11)
    ours, theirs = mt.zeros(n, dtype=dtype, backend=backend), torch.zeros(n, dtype=getattr(torch, dtype))
    assert fill(ours) is ours
    fill(theirs)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    return ours.to_numpy(), theirs.numpy()


def same_distribution(a: np.ndarray, b: np.ndarray) -> None:
    """Two-sample Kolmogorov-Smirnov: the samples are not told apart at the 1e-4 level."""
    assert stats.ks_2samp(a, b).pvalue > 1e-4, (a[:5], b[:5])


CONTINUOUS: dict[str, Callable[[Any], Any]] = {
    "exponential_default": lambda x: x.exponential_(),
    "exponential_rate": lambda x: x.exponential_(lambd=3.5),
    "log_normal_default": lambda x: x.log_normal_(),
    "log_normal_args": lambda x: x.log_normal_(mean=-0.5, std=0.25),
    "cauchy_default": lambda x: x.cauchy_(),
    "cauchy_args": lambda x: x.cauchy_(median=2.0, sigma=0.5),
    "random_default": lambda x: x.random_(),
}


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", list(CONTINUOUS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_continuous_fills_follow_torchs_distributions(backend: str, name: str, dtype: str) -> None:
    ours, theirs = draws(backend, CONTINUOUS[name], dtype)
    same_distribution(ours.astype(np.float64), theirs.astype(np.float64))
    if name.startswith(("exponential", "log_normal")):
        assert ours.min() >= 0
    if name == "random_default":  # [0, 2**24] for float32, [0, 2**53] for float64, integers
        top = 2.0 ** (24 if dtype == "float32" else 53)
        assert ours.min() >= 0 and ours.max() <= top and np.all(ours == np.round(ours))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
@pytest.mark.parametrize("p", [0.2, 0.75])
def test_geometric_follows_torchs_distribution(backend: str, dtype: str, p: float) -> None:
    ours, theirs = draws(backend, lambda x: x.geometric_(p), dtype)
    ours, theirs = ours.astype(np.float64), theirs.astype(np.float64)
    assert ours.min() >= 1 and np.all(ours == np.round(ours))
    support = int(max(ours.max(), theirs.max())) + 1
    f, g = np.bincount(ours.astype(np.int64), minlength=support) / N, np.bincount(theirs.astype(np.int64), minlength=support) / N
    assert np.all(np.abs(f - g) <= 6 * np.sqrt(np.maximum(f, g) * 2 / N) + 1e-9), (f[:6], g[:6])


RANDOM_RANGES: list[tuple[str, tuple[Any, ...], dict[str, Any], int, int]] = [
    # dtype, random_'s positional and keyword arguments, the inclusive range torch documents
    ("int64", (), {}, 0, 2**63 - 1), ("int32", (), {}, 0, 2**31 - 1), ("bool", (), {}, 0, 1), ("float32", (), {}, 0, 2**24),
    ("int32", (7,), {}, 0, 6), ("float32", (-3, 4), {}, -3, 3), ("int64", (), {"to": 5}, 0, 4),
    ("int32", (-2**31, None), {}, -2**31, 2**31 - 1), ("int64", (2**63 - 4, None), {}, 2**63 - 4, 2**63 - 1),
    ("int64", (-2**63, None), {}, -2**63, 2**63 - 1), ("bool", (0, 2), {}, 0, 1), ("float64", (2**53 - 3, None), {}, 2**53 - 3, 2**53),
    ("int32", (-5,), {"to": -2}, -5, -3),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("case", range(len(RANDOM_RANGES)))
def test_random_ranges_follow_torch(backend: str, case: int) -> None:
    dtype, args, kwargs, low, high = RANDOM_RANGES[case]
    ours, theirs = draws(backend, lambda x: x.random_(*args, **kwargs), dtype, n=4000)
    values, torch_values = [int(v) for v in ours.tolist()], [int(v) for v in theirs.tolist()]
    assert low <= min(values) and max(values) <= high and low <= min(torch_values) and max(torch_values) <= high
    if high - low < 16:  # a small range: every value of it, in both
        assert set(values) == set(torch_values) == set(range(low, high + 1))
    else:
        same_distribution((ours.astype(np.float64) - low) / (high - low), (theirs.astype(np.float64) - low) / (high - low))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_random_fills_write_views_seed_and_gradients_like_torch(backend: str) -> None:
    x = mt.zeros(500, 3, backend=backend)
    col = x[:, 1]
    assert col.exponential_(2.0) is col
    assert x._version == 1 and x[:, 0].to_numpy().max() == 0 and col.to_numpy().min() > 0
    streams = [mt.zeros(6, backend=backend).cauchy_(generator=mt.Generator().manual_seed(3)) for _ in range(2)]
    np.testing.assert_array_equal(streams[0].to_numpy(), streams[1].to_numpy())
    mt.manual_seed(5)
    first = mt.zeros(4, backend=backend).log_normal_().to_numpy()
    mt.manual_seed(5)
    mt.zeros(4, backend=backend).random_(10, generator=mt.Generator())  # another generator leaves the shared one alone
    np.testing.assert_array_equal(mt.zeros(4, backend=backend).log_normal_().to_numpy(), first)
    for fill in (lambda h: h.exponential_(), lambda h: h.geometric_(0.4), lambda h: h.log_normal_(),
                 lambda h: h.cauchy_(), lambda h: h.random_(0, 9)):
        grads = []
        for lib in (mt, torch):
            kw = {"backend": backend} if lib is mt else {}
            a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True, **kw)
            h = a * 2.0
            fill(h)
            assert h.requires_grad and not h.is_leaf
            h.sum().backward()
            grads.append(a.grad.tolist())
            with pytest.raises(GradientError if lib is mt else RuntimeError, match="leaf"):
                fill(a)
        assert grads[0] == grads[1] == [0.0, 0.0, 0.0]


BAD_FILLS: list[tuple[str, Callable[[Any], Any], str]] = [
    ("float32", lambda x: x.exponential_(-1.0), "param"), ("float32", lambda x: x.exponential_(0), "param"),
    ("float32", lambda x: x.exponential_(float("nan")), "param"), ("float32", lambda x: x.geometric_(0), "param"),
    ("float32", lambda x: x.geometric_(1.0), "param"), ("float32", lambda x: x.geometric_(1.5), "param"),
    ("float32", lambda x: x.log_normal_(1, 0), "param"), ("float32", lambda x: x.cauchy_(0, -1), "param"),
    ("float32", lambda x: x.random_(5, 2), "param"), ("float32", lambda x: x.random_(0), "param"),
    ("float32", lambda x: x.random_(-3), "param"), ("bool", lambda x: x.random_(3), "param"),
    ("int32", lambda x: x.random_(0, 2**40), "param"), ("int32", lambda x: x.random_(-2**31 - 1, 5), "param"),
    ("bool", lambda x: x.random_(2, None), "param"), ("float32", lambda x: x.random_(2**25, None), "param"),
    ("float32", lambda x: x.random_(2.5), "type"), ("float32", lambda x: x.random_(1, 3.5), "type"),
    ("float32", lambda x: x.random_(True), "type"), ("float32", lambda x: x.random_(None), "type"),
    ("int64", lambda x: x.exponential_(), "dtype"), ("int64", lambda x: x.log_normal_(), "dtype"),
    ("int64", lambda x: x.cauchy_(), "dtype"), ("bool", lambda x: x.geometric_(0.5), "dtype"),
]


@pytest.mark.filterwarnings("ignore:.*out of bounds:UserWarning")  # torch and minitensor warn, then raise, for case 15
@pytest.mark.parametrize("case", range(len(BAD_FILLS)))
def test_bad_fill_parameters_raise_like_torch(case: int) -> None:
    dtype, fill, kind = BAD_FILLS[case]
    ours = {"param": (RandomParameterError, RuntimeError, ValueError), "type": (TypeError,), "dtype": (DTypeError,)}[kind]
    x = mt.zeros(3, dtype=dtype)
    for error in ours:
        with pytest.raises(error):
            fill(x)
    with pytest.raises(TypeError if kind == "type" else RuntimeError):
        fill(torch.zeros(3, dtype=getattr(torch, dtype)))
    assert not x.to_numpy().any() and x._version == 0


def test_random_fill_float_range_warns_like_torch() -> None:
    with pytest.warns(UserWarning, match="out of bounds"):
        mt.zeros(3).random_(0, 2**25)
    with pytest.warns(UserWarning, match="out of bounds"):
        torch.zeros(3).random_(0, 2**25)


def test_random_fills_on_every_backend(backend: str) -> None:
    mt.manual_seed(2)
    x = mt.zeros(2, 3, backend=backend)
    x[0].exponential_(4.0)
    x[1].random_(3, 6)
    values = x.to_numpy()
    assert values[0].min() > 0 and set(values[1].tolist()) <= {3.0, 4.0, 5.0}
