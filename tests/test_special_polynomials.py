"""mt.special's orthogonal polynomials (Chebyshev T U V W and their shifted forms, Hermite H and He, Laguerre L,
Legendre P) against torch on grids of x and n that reach every special case (n < 0, fractional, nan, inf and huge
n, x at +-1, 0, inf, the trigonometric forms), float32, Python-number operands and dtype promotion, broadcasting,
transposed inputs, every backend, and torch's lack of derivatives; and against scipy's eval_* (the mathematics)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import scipy.special as sp
import torch
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor.errors import NoDerivativeError

INF, NAN = math.inf, math.nan
NAMES = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
         "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
         "legendre_polynomial_p"]
XS = [-3.0, -1.5, -1.0, -0.999, -0.7, -0.3, 0.0, 1e-17, 0.2, 0.5, 0.8, 0.9999999, 1.0, 1.0001, 1.7, INF, -INF]
NS = [-3.0, -0.5, 0.0, 0.7, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 13.0, 25.0, 60.0, 130.0, 600.0, NAN,
      INF, -INF, 1e19]


def both(name: str, x: np.ndarray, n: np.ndarray, dtype: Any = torch.float64) -> tuple[np.ndarray, np.ndarray]:
    ours = getattr(mt.special, name)(mt.tensor(x, dtype=getattr(mt, str(dtype)[6:])), mt.tensor(n, dtype=mt.float64))
    theirs = getattr(torch.special, name)(torch.tensor(x, dtype=dtype), torch.tensor(n, dtype=torch.float64))
    return ours.numpy(), theirs.numpy()


def assert_matches(got: np.ndarray, want: np.ndarray, rtol: float, what: str) -> None:
    """nan where torch has nan, the same infinities and signed zeros, the rest to rtol"""
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=what)
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf], err_msg=what)
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=1e-15, err_msg=what)


@pytest.mark.parametrize("name", NAMES)
def test_grid_matches_torch(name: str) -> None:
    """Every special case and the recurrence, float64: PyTorch's values (the recurrences' rounding differs from
    torch's fused multiply-adds by a few ulps per step)."""
    x, n = np.meshgrid(np.array(XS), np.array(NS))
    got, want = both(name, x, n)
    assert_matches(got, want, rtol=1e-11, what=name)


@pytest.mark.parametrize("name", NAMES)
def test_float32_matches_torch(name: str) -> None:
    """float32 x (n float64: the result is float64 then) and float32 throughout, as torch computes in it."""
    x, n = np.meshgrid(np.array([-1.2, -1.0, -0.6, 0.0, 0.3, 0.5, 0.9, 1.0, 2.5]), np.arange(-1.0, 31.0, 3.0))
    got = getattr(mt.special, name)(mt.tensor(x, dtype=mt.float32), mt.tensor(n, dtype=mt.float32))
    want = getattr(torch.special, name)(torch.tensor(x, dtype=torch.float32), torch.tensor(n, dtype=torch.float32))
    assert got.dtype == mt.float32
    assert_matches(got.numpy(), want.numpy(), rtol=2e-4, what=name)


SCIPY = {
    "chebyshev_polynomial_t": sp.eval_chebyt, "chebyshev_polynomial_u": sp.eval_chebyu,
    "shifted_chebyshev_polynomial_t": sp.eval_sh_chebyt, "shifted_chebyshev_polynomial_u": sp.eval_sh_chebyu,
    "hermite_polynomial_h": sp.eval_hermite, "hermite_polynomial_he": sp.eval_hermitenorm,
    "laguerre_polynomial_l": sp.eval_laguerre, "legendre_polynomial_p": sp.eval_legendre,
    "chebyshev_polynomial_v": lambda n, x: sp.eval_jacobi(n, -0.5, 0.5, x) / sp.eval_jacobi(n, -0.5, 0.5, 1.0),
    "chebyshev_polynomial_w": lambda n, x: (2 * n + 1) * sp.eval_jacobi(n, 0.5, -0.5, x) / sp.eval_jacobi(n, 0.5, -0.5, 1.0),
}


@pytest.mark.parametrize("name", sorted(SCIPY))
def test_values_against_scipy(name: str) -> None:
    """The mathematics: scipy's eval_* (V and W through Jacobi polynomials, normalized at x = 1)."""
    x, n = np.meshgrid(np.linspace(-0.95, 0.95, 13) if "shifted" not in name else np.linspace(0.02, 0.98, 13),
                       np.arange(0, 24))
    if name in ("hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l"):
        x = x * 4.0 + 4.0 if name == "laguerre_polynomial_l" else x * 3.0
    got = getattr(mt.special, name)(mt.tensor(x), mt.tensor(n)).numpy()
    want = SCIPY[name](n, x)
    scale = np.abs(want) + (1.0 if "hermite" not in name else np.abs(want).max(axis=1, keepdims=True) * 1e-3)
    assert (np.abs(got - want) <= 1e-11 * scale).all(), f"{name}: {np.abs(got - want).max()}"


@pytest.mark.parametrize("name", NAMES)
def test_python_numbers_and_promotion(name: str) -> None:
    fn, theirs = getattr(mt.special, name), getattr(torch.special, name)
    cases: list[tuple[Any, Any, Any, Any]] = [
        (mt.tensor([0.25, 2.0], dtype=mt.float32), 3, torch.tensor([0.25, 2.0], dtype=torch.float32), 3),
        (mt.tensor([2, 3]), 3, torch.tensor([2, 3]), 3),
        (0.5, mt.tensor([3, 4]), 0.5, torch.tensor([3, 4])),
        (0.5, mt.tensor([3.0, 4.9]), 0.5, torch.tensor([3.0, 4.9])),
        (mt.tensor([0.5], dtype=mt.float32), mt.tensor([3.0], dtype=mt.float64), torch.tensor([0.5]),
         torch.tensor([3.0], dtype=torch.float64)),
        (mt.tensor([0.5]), 2.7, torch.tensor([0.5]), 2.7),
        (mt.tensor([True, False]), 2, torch.tensor([True, False]), 2),
        (mt.tensor([0.3]), mt.tensor([True]), torch.tensor([0.3]), torch.tensor([True])),
    ]
    for x, n, tx, tn in cases:
        got, want = fn(x, n), theirs(tx, tn)
        assert str(got.dtype) == str(want.dtype)[6:], (x, n)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    with pytest.raises(TypeError):
        fn(0.5, 3)
    assert fn(x=mt.tensor([0.5]), n=2).shape == (1,)  # torch names the arguments x and n


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", NAMES)
def test_broadcast_transposed_empty(backend: str, name: str) -> None:
    fn, theirs = getattr(mt.special, name), getattr(torch.special, name)
    x = np.array([[-0.9, 0.1, 0.6], [1.0, 0.0, 1.3]])
    n = np.array([[0.0], [2.0], [5.0], [9.0]])[:, :, None]  # (4, 1, 1) with (3, 2): (4, 3, 2)
    got = fn(mt.tensor(x, backend=backend).t(), mt.tensor(n, backend=backend))
    want = theirs(torch.from_numpy(x).t(), torch.from_numpy(n))
    assert got.shape == tuple(want.shape) == (4, 3, 2)
    assert_matches(got.numpy(), want.numpy(), rtol=1e-12, what=name)
    assert fn(mt.zeros(0, 2, backend=backend), 3).shape == (0, 2)
    assert fn(mt.zeros(2, backend=backend), mt.zeros(0, 1, backend=backend)).shape == (0, 2)


def test_hermite_degree_limit() -> None:
    """torch gives nan above degree 512 (float64) and 128 (float32), whatever x (even where p_n would be 0)."""
    for name in ("hermite_polynomial_h", "hermite_polynomial_he"):
        for dtype, limit in ((mt.float64, 512), (mt.float32, 128)):
            x = np.array([0.0, 0.1, -2.0, 0.0, 0.1])
            n = np.array([limit, limit, limit, limit + 1, limit + 1], dtype=np.float64)
            got = getattr(mt.special, name)(mt.tensor(x, dtype=dtype), mt.tensor(n, dtype=dtype)).numpy()
            want = getattr(torch.special, name)(torch.tensor(x, dtype=getattr(torch, str(dtype))),
                                                torch.tensor(n, dtype=getattr(torch, str(dtype)))).numpy()
            assert np.isnan(got[3:]).all()
            assert_matches(got, want, rtol=1e-6, what=f"{name} {dtype}")


def test_large_degree_overflow_stops_early() -> None:
    """|x| > 1 overflows within a few hundred steps: inf - inf gives nan, as torch's loop (which stops there); a huge
    n with |x| < 1 takes the trigonometric form."""
    got = mt.special.chebyshev_polynomial_t(mt.tensor([2.0, 0.5, -3.0]), mt.tensor([1e8, 1e12, 3000.0])).numpy()
    want = torch.special.chebyshev_polynomial_t(torch.tensor([2.0, 0.5, -3.0]), torch.tensor([1e8, 1e12, 3000.0]))
    assert_matches(got, want.numpy(), rtol=1e-6, what="T")


@pytest.mark.parametrize("backend", BACKENDS)
def test_backends_agree(backend: str) -> None:
    """Every backend gives the simple backend's values."""
    x = np.array([-1.0, -0.4, 0.0, 0.6, 1.0, 1.5])
    n = np.array([-1.0, 0.0, 1.0, 4.0, 9.0, 12.0])
    if backend == "cuda":  # a few values, one function of each kind (the simulator is slow)
        x, n = x[1::2], n[1::2]
    names = NAMES[::3] if backend == "cuda" else NAMES
    for name in names:
        got = getattr(mt.special, name)(mt.tensor(x, backend=backend), mt.tensor(n, backend=backend)).numpy()
        want = getattr(mt.special, name)(mt.tensor(x, backend="simple"), mt.tensor(n, backend="simple")).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-14, err_msg=f"{name} on {backend}")


@pytest.mark.parametrize("name", NAMES)
def test_no_derivative_as_torch(name: str) -> None:
    x = mt.tensor([0.5, 0.2], requires_grad=True)
    n = mt.tensor([2.0, 3.0], requires_grad=True)
    for args in ((x, 3), (0.3, n)):
        y = getattr(mt.special, name)(*args)
        with pytest.raises(NoDerivativeError, match=name):
            y.sum().backward()
    assert not getattr(mt.special, name)(x.detach(), 3).requires_grad
