"""mt.special's Bessel and Airy functions (bessel_j0/j1/y0/y1, spherical_bessel_j0, modified_bessel_i0/i1/k0/k1,
scaled_modified_bessel_k0/k1, airy_ai): values against scipy.special (Cephes, accurate to ~1e-16) over dense grids,
against torch where torch is accurate and at the edges (0, -0, +-inf, nan, negative, tiny, huge), float32, dtypes,
empty and transposed inputs, every backend, and torch's lack of derivatives (backward raises)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
import pytest
import scipy.special as sp
import torch
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor.errors import NoDerivativeError

INF, NAN = math.inf, math.nan
SCIPY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "bessel_j0": sp.j0, "bessel_j1": sp.j1, "bessel_y0": sp.y0, "bessel_y1": sp.y1,
    "spherical_bessel_j0": lambda x: sp.spherical_jn(0, x),
    "modified_bessel_i0": sp.i0, "modified_bessel_i1": sp.i1, "modified_bessel_k0": sp.k0, "modified_bessel_k1": sp.k1,
    "scaled_modified_bessel_k0": sp.k0e, "scaled_modified_bessel_k1": sp.k1e,
    "airy_ai": np.vectorize(lambda x: float(mpmath.airyai(x))),  # scipy's loses digits near x = 2 (1e-14)
}
NAMES = sorted(SCIPY)
OSCILLATING = {"bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "spherical_bessel_j0", "airy_ai"}
EDGES = [0.0, -0.0, INF, -INF, NAN, -1.0, -7.5, 1e-320, 1e-10, 0.5, 1.0, 2.0, 4.999, 5.0, 8.0, 8.000001, 30.0,
         103.8, 103.95, 700.0, 710.0]


def grid(name: str) -> np.ndarray:
    """Dense arguments over each function's interesting range (every branch and the joins between them)."""
    span = np.concatenate([np.linspace(-40.0, 40.0, 4001), np.geomspace(1e-8, 1e3, 400), [1.0, 2.0, 5.0, 8.0]])
    if name == "airy_ai":
        return np.concatenate([np.linspace(-60.0, 100.0, 401), -np.geomspace(1e-3, 1e3, 60), [-5.0, 2.0]])
    if name.startswith(("modified", "scaled")):
        return np.concatenate([np.linspace(-5.0, 60.0, 2001), np.geomspace(1e-300, 700.0, 400)])
    return span


def envelope_error(name: str, got: np.ndarray, want: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|got - want| relative to |want|, or for the oscillating functions to their envelope's size near a zero
    (where any method, PyTorch's too, is accurate only absolutely)."""
    scale = np.abs(want)
    if name in OSCILLATING:
        with np.errstate(divide="ignore"):
            size = np.minimum(1.0, np.abs(x) ** -0.25 if name == "airy_ai" else 1.0 / np.sqrt(np.abs(x) + 1e-300))
        scale = np.maximum(scale, np.where(x > 0, 0.0, size) if name == "airy_ai" else size)
    return np.abs(got - want) / np.where(scale > 0, scale, 1.0)


@pytest.mark.parametrize("name", NAMES)
def test_float64_against_scipy(name: str) -> None:
    x = grid(name)
    got = getattr(mt.special, name)(mt.tensor(x, backend="fast")).numpy()
    with np.errstate(all="ignore"):
        want = SCIPY[name](x)
    same = (np.isnan(got) == np.isnan(want)) & ((got == want) | np.isfinite(want) | np.isnan(want))
    assert same.all(), f"{name}: nan/inf at {x[~same][:5]}: {got[~same][:5]} vs {want[~same][:5]}"
    fin = np.isfinite(want) & (np.abs(want) > 1e-300)
    err = envelope_error(name, got[fin], want[fin], x[fin])
    # large arguments: the phase x (or (2/3) x^1.5) itself is only known to an ulp, so the value to ~ulp * x
    bound = 4e-15 * np.maximum(1.0, np.abs(x[fin]) ** (1.5 if name == "airy_ai" else 1.0))
    assert (err <= bound).all(), f"{name}: error {err.max():.3g} at x = {x[fin][np.argmax(err / bound)]}"


@pytest.mark.parametrize("name", NAMES)
def test_edges_match_torch(name: str) -> None:
    """0, -0, +-inf, nan, negative (nan for Y and K), tiny, the branch joins and overflow, as torch (exact specials,
    values to torch's own accuracy)."""
    x = np.array(EDGES)
    got = getattr(mt.special, name)(mt.tensor(x)).numpy()
    want = getattr(torch.special, name)(torch.from_numpy(x)).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
    np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)], err_msg=name)
    np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]), err_msg=name)
    fin = np.isfinite(want) & (want != 0)
    np.testing.assert_allclose(got[fin], want[fin], rtol=5e-6, atol=1e-300, err_msg=name)


@pytest.mark.parametrize("name", NAMES)
def test_matches_torch_where_torch_is_accurate(name: str) -> None:
    """torch's J, Y and Ai lose up to six digits on 2 < |x| < 20 (its Cephes port); elsewhere, and for I, K and the
    spherical j0 everywhere, the two agree to ~1e-14."""
    x = np.concatenate([np.linspace(-1.9, 1.9, 77), np.linspace(25.0, 60.0, 71), np.geomspace(1e-6, 1.5, 20)])
    if name.startswith(("modified", "scaled")) or name == "spherical_bessel_j0":
        x = np.concatenate([x, np.linspace(2.0, 25.0, 47)])
    if name == "airy_ai":
        x = x[x > -2.0]
    got = getattr(mt.special, name)(mt.tensor(x)).numpy()
    want = getattr(torch.special, name)(torch.from_numpy(x)).numpy()
    ok = np.isfinite(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    err = envelope_error(name, got[ok], want[ok], x[ok])
    assert err.max() < 1e-12, f"{name}: {err.max():.3g} at {x[ok][np.argmax(err)]}"


@pytest.mark.parametrize("name", NAMES)
def test_float32(name: str) -> None:
    """float32 in, float32 out, computed in float64 and rounded once: within a float32 ulp or two of scipy."""
    x = grid(name)[::7].astype(np.float32)
    x = x[np.abs(x) < (80.0 if name.startswith("modified") else 1e3)]  # past 88.7 exp overflows float32
    got = getattr(mt.special, name)(mt.tensor(x))
    assert got.dtype == mt.float32
    with np.errstate(all="ignore"):
        want = SCIPY[name](x.astype(np.float64))
    fin = np.isfinite(want) & (np.abs(want) > 1e-30) & (np.abs(want) < 3e38)  # float32's range
    err = envelope_error(name, got.numpy()[fin].astype(np.float64), want[fin], x[fin].astype(np.float64))
    assert err.max() < 3e-7, f"{name}: {err.max():.3g}"
    theirs = getattr(torch.special, name)(torch.from_numpy(x)).numpy()  # torch's float32 kernels: ~1e-5 here
    np.testing.assert_array_equal(np.isnan(got.numpy()), np.isnan(theirs))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", NAMES)
def test_dtypes_empty_transposed(backend: str, name: str) -> None:
    fn = getattr(mt.special, name)
    for dtype in (mt.int64, mt.int32, mt.bool):
        got = fn(mt.tensor([[0, 1], [1, 0]], dtype=dtype, backend=backend))
        assert got.dtype == mt.get_default_dtype() and got.shape == (2, 2)
    assert fn(mt.zeros(0, 3, backend=backend)).shape == (0, 3)
    values = np.array([[0.1, 7.0, -3.4], [25.0, 9.5, 0.35]])
    a = mt.tensor(values, backend=backend).t()
    np.testing.assert_array_equal(fn(a).numpy(), fn(mt.tensor(values.T.copy(), backend=backend)).numpy())
    ints = fn(mt.tensor([3, 12], backend=backend)).numpy()
    np.testing.assert_allclose(ints, getattr(torch.special, name)(torch.tensor([3, 12])).numpy(), rtol=1e-5)


CUDA_NAMES = ["bessel_j1", "bessel_y0", "modified_bessel_i0", "modified_bessel_k1", "scaled_modified_bessel_k0",
              "spherical_bessel_j0", "airy_ai"]  # every module's code paths (the simulator is slow)


@pytest.mark.parametrize("backend", BACKENDS)
def test_backends_agree(backend: str) -> None:
    """Every backend (cuda: a few values, one function of each kind) gives the simple backend's float64 values."""
    x = np.array([-9.0, -0.6, 0.0, 0.3, 1.7, 7.9, 8.1, 33.0, INF, NAN])
    if backend == "cuda":
        x = np.array([-9.0, 0.3, 8.1, 33.0])
    for name in CUDA_NAMES if backend == "cuda" else NAMES:
        got = getattr(mt.special, name)(mt.tensor(x, backend=backend)).numpy()
        want = getattr(mt.special, name)(mt.tensor(x, backend="simple")).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-300, err_msg=f"{name} on {backend}")


@pytest.mark.parametrize("name", NAMES)
def test_no_derivative_as_torch(name: str) -> None:
    """torch's outputs do not require grad (a backward through them fails); here the output records a node whose
    backward raises NoDerivativeError (a RuntimeError) instead of silently treating the function as constant."""
    x = mt.tensor([0.5, 2.0], requires_grad=True)
    y = getattr(mt.special, name)(x)
    assert y.requires_grad
    with pytest.raises(NoDerivativeError, match=name):
        (y * 2).sum().backward()
    with pytest.raises(RuntimeError):
        getattr(torch.special, name)(torch.tensor([0.5, 2.0], requires_grad=True)).sum().backward()
    plain = getattr(mt.special, name)(x.detach())
    assert not plain.requires_grad
    np.testing.assert_array_equal(plain.numpy(), y.detach().numpy())


def test_argument_names() -> None:
    """torch names the argument x for airy_ai, spherical_bessel_j0 and the scaled K, input for the others."""
    t = mt.tensor([1.0])
    keyword: dict[str, Any] = {"x": t}
    for name in ("airy_ai", "spherical_bessel_j0", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"):
        getattr(mt.special, name)(**keyword)
    for name in ("bessel_j0", "bessel_y1", "modified_bessel_i0", "modified_bessel_k1"):
        getattr(mt.special, name)(input=t)
