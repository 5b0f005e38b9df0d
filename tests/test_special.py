"""Special functions (lgamma, digamma, polygamma, erfinv, erfc and ``mt.special``) on every backend against torch and
scipy.special: values over the awkward ranges (negative non-integers, poles, tails, inf, nan), gradients against
torch and central differences, dtypes, empty and transposed inputs."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.special as sp
import torch

import minitensor as mt
from minitensor import operators

INF, NAN = math.inf, math.nan
GAMMA_X = [-1e15 - 0.5, -170.5, -20.3, -2.5, -1.0000001, -0.999, -0.5, -1e-300, 1e-300, 1e-8, 0.3, 0.5, 1.0,
           1.4616321449683622, 2.0, 3.7, 9.99, 10.0, 41.1, 1e6, 1e17, 1e300, INF, -INF, NAN, 0.0, -0.0, -1.0, -7.0]
ERFINV_X = [-1.5, -1.0, -1 + 1e-16, -0.999999, -0.9, -0.5, -0.3, -1e-310, -0.0, 0.0, 1e-300, 1e-8, 0.1, 0.5,
            0.50001, 0.8, 0.999, 1 - 1e-12, 1 - 2**-53, 1.0, 1.0000001, INF, -INF, NAN]
ERFC_X = [-INF, -30.0, -5.0, -0.5, -1e-300, 0.0, 1e-8, 0.5, 3.0, 10.0, 26.5, 30.0, INF, NAN]
CASES: dict[str, tuple[Callable[[mt.Tensor], mt.Tensor], Callable[[torch.Tensor], torch.Tensor], list[float]]] = {
    "lgamma": (mt.lgamma, torch.lgamma, GAMMA_X),
    "digamma": (mt.digamma, torch.digamma, GAMMA_X),
    "erfinv": (mt.erfinv, torch.erfinv, ERFINV_X),
    "erfc": (mt.erfc, torch.erfc, ERFC_X),
}


def small(backend: str, values: list[float]) -> list[float]:
    """The cuda simulator is slow: a third of the values there."""
    return values[::3] + [INF, NAN] if backend == "cuda" else values


def check_close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float = 0.0, what: str = "") -> None:
    assert got.shape == want.shape
    assert (np.isnan(got) == np.isnan(want)).all(), f"{what}: nan at {got} vs {want}"
    inf = np.isinf(want)
    assert (got[inf] == want[inf]).all(), f"{what}: infinities {got} vs {want}"
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=atol, err_msg=what)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_torch(backend: str, name: str, dtype: str) -> None:
    ours, theirs, values = CASES[name]
    with np.errstate(over="ignore"):  # 1e300 and the like are inf in float32
        x = np.array(small(backend, values), dtype=dtype)
    got = ours(mt.tensor(x, backend=backend))
    assert got.dtype == getattr(mt, dtype)
    want = theirs(torch.from_numpy(x)).numpy()
    if dtype == "float32":  # torch computes float32 in float32; ours in float64 rounded once
        check_close(got.numpy(), want, rtol=5e-6, atol=1e-6, what=name)
    else:  # torch's lgamma/digamma lose relative accuracy near their roots; ours the same absolute way
        check_close(got.numpy(), want, rtol=1e-13, atol=1e-14, what=name)


SCIPY = {"lgamma": sp.gammaln, "digamma": sp.digamma, "erfinv": sp.erfinv, "erfc": sp.erfc}


@pytest.mark.parametrize("name", sorted(CASES))
def test_float64_accuracy_against_scipy(name: str) -> None:
    """The scalar ops over a dense grid (Python floats: the same code every backend compiles)."""
    if name == "erfinv":
        x = np.concatenate([np.linspace(-0.999999, 0.999999, 4001), 1 - np.geomspace(1e-16, 0.5, 200),
                            -np.geomspace(1e-300, 1e-3, 50)])
    elif name == "erfc":
        x = np.linspace(-6.0, 26.0, 2001)
    else:
        x = np.concatenate([np.linspace(-30.3, 40.0, 3001), np.geomspace(1e-300, 1e8, 300)])
        x = x[x != np.floor(x)]
    got = np.array([operators.UNARY_OPS[name](v) for v in x])
    want = SCIPY[name](x)
    if name in ("lgamma", "digamma"):  # relative accuracy away from the roots, absolute near them
        assert (np.abs(got - want) <= 1e-13 * np.abs(want) + 5e-15 * np.maximum(1.0, np.abs(x))).all()
    else:  # erfc: libm's and scipy's differ by up to 6e-14 far in the tail (1e-58)
        np.testing.assert_allclose(got, want, rtol=1e-14 if name == "erfinv" else 1e-13, atol=0)


def test_polygamma_against_scipy_and_torch() -> None:
    x = np.concatenate([np.linspace(-9.7, 25.0, 1001), np.geomspace(1e-5, 1e6, 200)])
    x = x[x != np.floor(x)]
    for n in (1, 2, 3, 4, 7, 12):
        got = np.array([operators.polygamma(float(n), v) for v in x])
        pos = x > 0
        np.testing.assert_allclose(got[pos], sp.polygamma(n, x[pos]), rtol=1e-13, err_msg=f"n={n}")
        # negative x: odd n + 1 sums terms of both signs (cancellation), scaled by the largest term's size
        scale = math.factorial(n) * np.abs(x[~pos] - np.round(x[~pos])) ** -(n + 1.0)
        np.testing.assert_allclose(got[~pos], sp.polygamma(n, x[~pos]), rtol=1e-13, atol=1e-13 * scale.max())
        ours = mt.polygamma(n, mt.tensor(x, dtype=mt.float64)).numpy()
        want = torch.polygamma(n, torch.from_numpy(x)).numpy()  # torch's trigamma has ~1e-9 error
        np.testing.assert_allclose(ours, want, rtol=1e-8 if n == 1 else 1e-11, atol=1e-300)
    assert operators.polygamma(0.0, 2.5) == operators.digamma(2.5)


def test_edges() -> None:
    """Poles and infinities, as torch (see the README for trigamma at negative integers)."""
    t = torch.tensor([0.0, -0.0, -1.0, -3.0, INF, -INF, NAN], dtype=torch.float64)
    x = mt.tensor(t.numpy())
    for ours, theirs in ((mt.lgamma, torch.lgamma), (mt.digamma, torch.digamma)):
        check_close(ours(x).numpy(), theirs(t).numpy(), rtol=0.0, what=str(ours))
    for n in (2, 3):  # at +inf torch gives nan, ours the limit 0
        want = torch.polygamma(n, t).numpy()
        want[4] = 0.0
        check_close(mt.polygamma(n, x).numpy(), want, rtol=0.0, what=f"n={n}")
    np.testing.assert_array_equal(mt.polygamma(1, x).numpy(), [INF, INF, INF, INF, 0.0, INF, NAN])
    assert math.isnan(operators.polygamma(-1.0, 2.0)) and math.isnan(operators.polygamma(1.5, 2.0))
    assert math.isnan(operators.polygamma(INF, 2.0)) and math.isnan(operators.polygamma(NAN, 2.0))
    assert math.isinf(operators.polygamma(400.0, 0.5))  # n! overflows float64, as torch
    assert math.copysign(1.0, mt.erfinv(mt.tensor([-0.0])).item()) == -1.0


@pytest.mark.parametrize("n", [1, 2])
def test_polygamma_every_backend(backend: str, n: int) -> None:
    x = np.array(small(backend, [-2.5, -0.3, 1e-3, 0.7, 3.0, 50.0, -1.0, 0.0, INF, NAN]))
    for dtype in ("float64", "float32"):
        v = x.astype(dtype)
        got = mt.polygamma(n, mt.tensor(v, backend=backend))
        assert got.dtype == getattr(mt, dtype)
        want = np.array([operators.polygamma(float(n), float(e)) for e in v]).astype(dtype)
        check_close(got.numpy(), want, rtol=1e-6 if dtype == "float32" else 1e-15, what=f"{backend} {dtype}")
    got_method = mt.tensor(x, backend=backend).polygamma(n).numpy()
    np.testing.assert_array_equal(got_method, mt.polygamma(n, mt.tensor(x, backend=backend)).numpy())


GRAD_X = {"lgamma": [-2.5, -0.4, 0.3, 1.7, 12.0], "digamma": [-2.5, -0.4, 0.3, 1.7, 12.0],
          "erfinv": [-0.95, -0.2, 0.0, 0.5, 0.99], "erfc": [-2.0, -0.1, 0.0, 0.7, 3.0]}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_torch(backend: str, name: str) -> None:
    ours, theirs, _ = CASES[name]
    values = np.array(GRAD_X[name])
    x = mt.tensor(values, backend=backend, requires_grad=True)
    t = torch.tensor(values, requires_grad=True)
    w = np.linspace(0.5, 1.5, values.size)
    (ours(x) * mt.tensor(w, backend=backend)).sum().backward()
    (theirs(t) * torch.from_numpy(w)).sum().backward()
    assert x.grad is not None and t.grad is not None
    # torch's trigamma (digamma's gradient) is good to ~1e-9
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-8 if name == "digamma" else 1e-12)
    scalar = np.vectorize(operators.UNARY_OPS[name])
    h = 1e-6
    numeric = w * (scalar(values + h) - scalar(values - h)) / (2 * h)
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_polygamma_gradient_and_second_order(n: int) -> None:
    values = np.array([-1.5, 0.4, 2.0, 7.5])
    x = mt.tensor(values, requires_grad=True)
    t = torch.tensor(values, requires_grad=True)
    (g,) = mt.autograd.grad(mt.polygamma(n, x).sum(), x, create_graph=True)
    (gt,) = torch.autograd.grad(torch.polygamma(n, t).sum(), t, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), gt.detach().numpy(), rtol=1e-8)
    g.sum().backward()
    gt.sum().backward()
    assert x.grad is not None and t.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-8)
    lg = mt.tensor(values, requires_grad=True)
    lg.lgamma().sum().backward()
    assert lg.grad is not None
    np.testing.assert_allclose(lg.grad.numpy(), mt.digamma(mt.tensor(values)).numpy())


@pytest.mark.parametrize("fn", [mt.lgamma, mt.digamma, mt.erfinv, mt.erfc, lambda x: mt.polygamma(1, x)])
def test_dtypes_empty_and_transposed(backend: str, fn: Callable[[mt.Tensor], mt.Tensor]) -> None:
    for dtype in (mt.int64, mt.int32, mt.bool):
        got = fn(mt.tensor([[0, 1], [1, 0]], dtype=dtype, backend=backend))
        assert got.dtype == mt.get_default_dtype()
    assert fn(mt.zeros(0, 3, backend=backend)).shape == (0, 3)
    values = np.array([[0.1, 0.7, -0.4], [2.5, -0.9, 0.35]])
    a = mt.tensor(values, backend=backend).t()
    np.testing.assert_allclose(fn(a).numpy(), fn(mt.tensor(values.T.copy(), backend=backend)).numpy(), rtol=0)


def test_polygamma_arguments() -> None:
    x = mt.tensor([1.0])
    with pytest.raises(ValueError, match="negative"):
        mt.polygamma(-1, x)
    with pytest.raises(TypeError):
        mt.polygamma(1.0, x)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        mt.polygamma(1, [1.0])  # type: ignore[arg-type]


def test_special_namespace() -> None:
    v = np.array([-40.0, -25.0, -20.0001, -19.999, -3.0, -0.5, 0.0, 0.5, 4.0, 9.0, INF, -INF, NAN])
    x, t = mt.tensor(v), torch.from_numpy(v)
    check_close(mt.special.ndtr(x).numpy(), sp.ndtr(v), rtol=1e-13, what="ndtr")
    check_close(mt.special.log_ndtr(x).numpy(), torch.special.log_ndtr(t).numpy(), rtol=1e-12, what="log_ndtr")
    u = np.array([0.1, 0.5, 0.9])
    pairs: list[tuple[Any, Any, np.ndarray]] = [
        (mt.special.gammaln, torch.special.gammaln, v), (mt.special.psi, torch.special.psi, v),
        (mt.special.digamma, torch.special.digamma, v), (mt.special.erf, torch.special.erf, v),
        (mt.special.erfc, torch.special.erfc, v), (mt.special.erfinv, torch.special.erfinv, u),
        (mt.special.expit, torch.special.expit, v), (mt.special.logit, torch.special.logit, u),
        (mt.special.log1p, torch.special.log1p, u), (mt.special.expm1, torch.special.expm1, u),
        (mt.special.exp2, torch.special.exp2, u),
    ]
    for ours, theirs, data in pairs:
        check_close(ours(mt.tensor(data)).numpy(), theirs(torch.from_numpy(data)).numpy(), rtol=1e-12, what=str(ours))
    check_close(mt.special.polygamma(2, mt.tensor(u)).numpy(), torch.special.polygamma(2, torch.from_numpy(u)).numpy(),
                rtol=1e-11)
    check_close(mt.special.xlogy(mt.tensor(u), mt.tensor(u)).numpy(), torch.special.xlogy(torch.from_numpy(u),
                torch.from_numpy(u)).numpy(), rtol=1e-12)
    x = mt.tensor([-30.0, -1.0, 2.0], dtype=mt.float64, requires_grad=True)
    mt.special.log_ndtr(x).sum().backward()
    tx = torch.tensor([-30.0, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    torch.special.log_ndtr(tx).sum().backward()
    assert x.grad is not None and tx.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5)


def test_backends_agree_with_simple_on_hard_values(backend: str) -> None:
    """Every backend's kernels against the simple reference on the same float64 values, bit-near."""
    values = np.array(small(backend, GAMMA_X + ERFINV_X))
    for name in CASES:
        got = CASES[name][0](mt.tensor(values, backend=backend)).numpy()
        want = CASES[name][0](mt.tensor(values, backend="simple")).numpy()
        check_close(got, want, rtol=4e-16, what=f"{name} on {backend}")

