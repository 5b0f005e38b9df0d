"""mt.special's erfcx, ndtri, entr, xlog1py and zeta (values against mpmath/scipy and torch, edges, float32, Python
numbers and broadcasting, gradients and second derivatives against torch, torch's missing derivative of zeta in x)
and torch.special's aliases of top-level functions (sinc, round, logsumexp, softmax, log_softmax)."""

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


def check(got: np.ndarray, want: np.ndarray, rtol: float, what: str = "") -> None:
    """nan where want is nan, equal infinities and zeros' signs, the rest to rtol"""
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=what)
    exact = np.isinf(want) | (want == 0)
    np.testing.assert_array_equal(got[exact], want[exact], err_msg=what)
    np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]), err_msg=what)
    rest = np.isfinite(want) & (want != 0)
    np.testing.assert_allclose(got[rest], want[rest], rtol=rtol, atol=0, err_msg=what)


def ndtri_reference(p: float, start: float) -> float:
    """Phi^-1(p) by Newton's method in 40 digits from ``start`` (mpmath's ncdf keeps its relative accuracy in the
    tails; its erfinv would need hundreds of digits there)"""
    with mpmath.workdps(40):
        x, target = mpmath.mpf(start), mpmath.mpf(p)
        for _ in range(3):
            x -= (mpmath.ncdf(x) - target) / mpmath.npdf(x) if p < 0.5 else (mpmath.ncdf(-x) - (1 - target)) / -mpmath.npdf(x)
        return float(x)


def test_erfcx_float64() -> None:
    x = np.concatenate([np.linspace(-26.0, 30.0, 1121), np.geomspace(1e-300, 1e300, 121), -np.geomspace(1e-8, 26.0, 61),
                        [9.999999, 10.0, 10.000001]])
    got = mt.special.erfcx(mt.tensor(x)).numpy()
    # scipy's (Faddeeva's) is ~1e-16 for x >= 0; for x < 0 its exp(x*x) has x*x's rounding (up to 7e-14)
    check(got[x >= 0], sp.erfcx(x[x >= 0]), rtol=2e-15, what="scipy")
    negative = x[x < 0][::7]
    with mpmath.workdps(40):
        exact = np.array([float(mpmath.exp(mpmath.mpf(v) ** 2) * mpmath.erfc(v)) for v in negative])
    check(mt.special.erfcx(mt.tensor(negative)).numpy(), exact, rtol=2e-15, what="mpmath")
    check(got, torch.special.erfcx(torch.from_numpy(x)).numpy(), rtol=1e-13, what="torch")  # torch: ~6e-14
    edges = np.array([0.0, -0.0, INF, -INF, NAN, -26.6, -26.7, 1e308, 5e-324])
    check(mt.special.erfcx(mt.tensor(edges)).numpy(), torch.special.erfcx(torch.from_numpy(edges)).numpy(), 1e-13)


def test_ndtri_float64() -> None:
    p = np.concatenate([np.linspace(0.0, 1.0, 401)[1:-1], np.geomspace(5e-324, 0.3, 160), 1 - np.geomspace(1e-16, 0.5, 40)])
    got = mt.special.ndtri(mt.tensor(p)).numpy()
    want = np.array([ndtri_reference(v, x) for v, x in zip(p, got)])
    np.testing.assert_allclose(got, want, rtol=2e-15, atol=1e-300)
    check(got, torch.special.ndtri(torch.from_numpy(p)).numpy(), rtol=5e-15)
    edges = np.array([0.0, -0.0, 1.0, -0.1, 1.1, NAN, INF, -INF, 0.25, 0.5, 1e-320])
    check(mt.special.ndtri(mt.tensor(edges)).numpy(), torch.special.ndtri(torch.from_numpy(edges)).numpy(), 1e-15)


def test_entr_values() -> None:
    x = np.array([0.0, -0.0, -1.0, 1.0, INF, -INF, NAN, 1e-300, 0.3, 3.0, 1e300, 5e-324])
    check(mt.special.entr(mt.tensor(x)).numpy(), torch.special.entr(torch.from_numpy(x)).numpy(), 1e-15)
    check(mt.special.entr(mt.tensor(x)).numpy(), sp.entr(x), 1e-15)


XLOG_X = [0.0, -0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 2.0, NAN, -1.0, 0.5, 3.0, INF, 0.0]
XLOG_Y = [-1.0, -2.0, INF, NAN, -INF, 1.0, -1.0, -2.0, INF, 1.0, -0.5, 1e-20, 7.0, 0.0, -0.5]


def test_xlog1py_values_and_gradients() -> None:
    """PyTorch's zeros (0 * log1p(-1) = 0, not at nan) and its derivatives at every such point."""
    x = mt.tensor(XLOG_X, dtype=mt.float64, requires_grad=True)
    y = mt.tensor(XLOG_Y, dtype=mt.float64, requires_grad=True)
    tx = torch.tensor(XLOG_X, dtype=torch.float64, requires_grad=True)
    ty = torch.tensor(XLOG_Y, dtype=torch.float64, requires_grad=True)
    out, tout = mt.special.xlog1py(x, y), torch.special.xlog1py(tx, ty)
    check(out.detach().numpy(), tout.detach().numpy(), 1e-15)
    check(out.detach().numpy(), sp.xlog1py(np.array(XLOG_X), np.array(XLOG_Y)), 1e-15)
    w = np.linspace(0.5, 2.0, len(XLOG_X))
    (out * mt.tensor(w)).sum().backward()
    (tout * torch.from_numpy(w)).sum().backward()
    assert x.grad is not None and y.grad is not None and tx.grad is not None and ty.grad is not None
    check(x.grad.numpy(), tx.grad.numpy(), 1e-15, "d/dx")
    check(y.grad.numpy(), ty.grad.numpy(), 1e-15, "d/dy")


def test_xlog1py_numbers_broadcasting_dtypes() -> None:
    a, b = np.array([[0.0], [1.5], [2.0]]), np.array([-0.5, 0.0, 3.0, -1.0])
    got = mt.special.xlog1py(mt.tensor(a), mt.tensor(b).t())
    check(got.numpy(), torch.special.xlog1py(torch.from_numpy(a), torch.from_numpy(b)).numpy(), 1e-15)
    assert got.shape == (3, 4)
    cases: list[tuple[Any, Any, Any, Any]] = [
        (2.0, mt.tensor([1.0, 0.5]), 2.0, torch.tensor([1.0, 0.5])),
        (mt.tensor([1, 2]), mt.tensor([1, 2]), torch.tensor([1, 2]), torch.tensor([1, 2])),
        (mt.tensor([1.0, 0.0], dtype=mt.float64), 3, torch.tensor([1.0, 0.0], dtype=torch.float64), 3),
        (mt.tensor([True, False]), 0.5, torch.tensor([True, False]), 0.5),
    ]
    for x, y, tx, ty in cases:
        got, want = mt.special.xlog1py(x, y), torch.special.xlog1py(tx, ty)
        assert str(got.dtype) == str(want.dtype)[6:]
        check(got.numpy(), want.numpy(), 1e-6)
    with pytest.raises(TypeError):
        mt.special.xlog1py(1.0, 2.0)


def test_zeta_values() -> None:
    rng = np.random.default_rng(0)
    s = np.concatenate([rng.uniform(1.01, 30.0, 150), rng.integers(2, 12, 60).astype(float), [1.0001, 60.0, 250.0]])
    q = np.concatenate([rng.uniform(0.001, 50.0, 150), rng.uniform(-20.0, -0.01, 60), [0.3, 1.5, 7.0]])
    got = mt.special.zeta(mt.tensor(s), mt.tensor(q)).numpy()
    theirs = torch.special.zeta(torch.from_numpy(s), torch.from_numpy(q)).numpy()
    with mpmath.workdps(60):  # mpmath's Hurwitz zeta needs the digits for large s and q
        want = np.array([float(mpmath.fsum((mpmath.mpf(b) + k) ** -mpmath.mpf(a) for k in range(math.ceil(-b)))
                               + mpmath.zeta(a, b + max(0, math.ceil(-b)))) for a, b in zip(s, q)])
    positive = q > 0
    np.testing.assert_allclose(got[positive], want[positive], rtol=5e-15)
    # negative q: the sum's terms of both signs cancel; accurate to the size of its largest term
    with np.errstate(divide="ignore"):
        scale = np.where(positive, np.abs(want), np.abs(q - np.round(q)) ** -s)
    assert (np.abs(got - want) <= 2e-15 * scale).all()
    assert (np.abs(got - theirs) <= 1e-13 * scale).all()


def test_zeta_edges() -> None:
    """PyTorch's: inf at x = 1 and at q = 0, -1, ..., -inf; nan for x < 1 and (q < 0, x not an integer). Where its
    series gives nan but the limit is 0 (q = inf, x = inf with q > 1, x ~ 1e300) this gives the limit."""
    s = [1.0, 1.0, 0.5, -INF, 2.0, 2.0, 2.0, 3.0, 1.5, NAN, NAN, 2.0, INF, INF, 1e300, 4.0, 2.0, 400.0]
    q = [2.0, -1.0, 2.0, 1.0, 0.0, -0.0, -INF, -3.0, -0.5, -1.0, 2.0, NAN, 0.5, 1.0, 1.0, 1e-300, -1e-17, 10.0]
    got = mt.special.zeta(mt.tensor(s, dtype=mt.float64), mt.tensor(q, dtype=mt.float64)).numpy()
    want = torch.special.zeta(torch.tensor(s, dtype=torch.float64), torch.tensor(q, dtype=torch.float64)).numpy()
    check(got, want, 1e-15)
    limits = mt.special.zeta(mt.tensor([2.0, INF, 1e300], dtype=mt.float64), mt.tensor([INF, 2.0, 2.0])).numpy()
    np.testing.assert_array_equal(limits, [0.0, 0.0, 0.0])


def test_zeta_gradient_and_numbers() -> None:
    s, q = np.array([2.0, 3.5, 5.0, 2.0]), np.array([0.5, 2.0, 7.0, -2.5])
    qq = mt.tensor(q, dtype=mt.float64, requires_grad=True)
    tq = torch.tensor(q, requires_grad=True)
    (g,) = mt.autograd.grad(mt.special.zeta(mt.tensor(s), qq).sum(), qq, create_graph=True)
    (tg,) = torch.autograd.grad(torch.special.zeta(torch.from_numpy(s), tq).sum(), tq, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-13)
    g.sum().backward()
    tg.sum().backward()
    assert qq.grad is not None and tq.grad is not None
    np.testing.assert_allclose(qq.grad.numpy(), tq.grad.numpy(), rtol=1e-13)
    ss = mt.tensor(s, requires_grad=True)
    with pytest.raises(NoDerivativeError, match="zeta"):
        mt.special.zeta(ss, 2.0).sum().backward()
    for x, y, tx, ty in [(2, mt.tensor([1.0, 2.0]), 2, torch.tensor([1.0, 2.0])),
                         (mt.tensor([2.0, 3.0]), 1.0, torch.tensor([2.0, 3.0]), 1.0),
                         (mt.tensor([2, 3]), mt.tensor([1, 2]), torch.tensor([2, 3]), torch.tensor([1, 2]))]:
        got, want = mt.special.zeta(x, y), torch.special.zeta(tx, ty)
        assert str(got.dtype) == str(want.dtype)[6:]
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    with pytest.raises(TypeError):
        mt.special.zeta(2.0, 1.0)


GRADIENT_CASES: dict[str, tuple[Callable[..., Any], Callable[..., Any], list[float]]] = {
    "erfcx": (mt.special.erfcx, torch.special.erfcx, [-3.0, -0.4, 0.0, 0.7, 5.0, 12.0, 40.0]),
    "ndtri": (mt.special.ndtri, torch.special.ndtri, [1e-30, 0.01, 0.2, 0.5, 0.77, 0.999]),
    "entr": (mt.special.entr, torch.special.entr, [1e-5, 0.2, 1.0, 2.5, 30.0]),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_and_second_derivatives(name: str) -> None:
    ours, theirs, values = GRADIENT_CASES[name]
    x = mt.tensor(values, dtype=mt.float64, requires_grad=True)
    t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    (g,) = mt.autograd.grad(ours(x).sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad(theirs(t).sum(), t, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-13)
    (g * g).sum().backward()
    (tg * tg).sum().backward()
    assert x.grad is not None and t.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    h = 1e-6 * np.where(np.array(values) == 0, 1.0, np.abs(values))
    numeric = (ours(mt.tensor(np.array(values) + h)).numpy() - ours(mt.tensor(np.array(values) - h)).numpy()) / (2 * h)
    np.testing.assert_allclose(g.detach().numpy(), numeric, rtol=1e-6)


def test_gradient_edges_match_torch() -> None:
    for ours, theirs, values in [(mt.special.entr, torch.special.entr, [0.0, -0.0, -1.0, INF, NAN]),
                                 (mt.special.erfcx, torch.special.erfcx, [-30.0, INF, -INF, NAN]),
                                 (mt.special.ndtri, torch.special.ndtri, [0.0, 1.0, -0.1, NAN])]:
        x = mt.tensor(values, dtype=mt.float64, requires_grad=True)
        t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
        ours(x).sum().backward()
        theirs(t).sum().backward()
        assert x.grad is not None and t.grad is not None
        check(x.grad.numpy(), t.grad.numpy(), 1e-15, str(ours))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_float32_dtypes_empty_transposed(backend: str) -> None:
    values = np.array([[0.05, 0.7, 0.35], [0.5, 0.93, 0.002]], dtype=np.float32)
    for name in ("erfcx", "ndtri", "entr"):
        fn, theirs = getattr(mt.special, name), getattr(torch.special, name)
        got = fn(mt.tensor(values, backend=backend))
        assert got.dtype == mt.float32
        np.testing.assert_allclose(got.numpy(), theirs(torch.from_numpy(values)).numpy(), rtol=2e-6)
        np.testing.assert_array_equal(fn(mt.tensor(values, backend=backend).t()).numpy(), got.numpy().T)
        assert fn(mt.tensor([0, 1], backend=backend)).dtype == mt.get_default_dtype()
        assert fn(mt.zeros(0, 2, backend=backend)).shape == (0, 2)
    zeta = mt.special.zeta(mt.tensor(values + 1.5, backend=backend), mt.tensor(values, backend=backend).t().t())
    np.testing.assert_allclose(zeta.numpy(), torch.special.zeta(torch.from_numpy(values + 1.5),
                                                                torch.from_numpy(values)).numpy(), rtol=2e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_backends_agree(backend: str) -> None:
    x = np.array([-2.0, 0.1, 0.5, 0.9, 15.0])
    fns: list[Callable[[mt.Tensor], mt.Tensor]] = [mt.special.erfcx, mt.special.ndtri, mt.special.entr,
                                                   lambda t: mt.special.zeta(t.abs() + 1.5, t),
                                                   lambda t: mt.special.xlog1py(t, t)]
    for fn in fns:
        got = fn(mt.tensor(x, backend=backend)).numpy()
        want = fn(mt.tensor(x, backend="simple")).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-14)


def test_aliases_have_torch_special_signatures() -> None:
    v = np.array([[0.3, -1.2, 2.0], [4.5, 0.0, -0.7]])
    x, t = mt.tensor(v), torch.from_numpy(v)
    np.testing.assert_allclose(mt.special.sinc(x).numpy(), torch.special.sinc(t).numpy(), rtol=1e-15)
    np.testing.assert_allclose(mt.special.round(x, decimals=1).numpy(), torch.special.round(t, decimals=1).numpy())
    np.testing.assert_allclose(mt.special.logsumexp(x, 1).numpy(), torch.special.logsumexp(t, 1).numpy(), rtol=1e-15)
    np.testing.assert_allclose(mt.special.logsumexp(x, (0, 1), keepdim=True).numpy(),
                               torch.special.logsumexp(t, (0, 1), keepdim=True).numpy(), rtol=1e-15)
    for name in ("softmax", "log_softmax"):
        got = getattr(mt.special, name)(mt.tensor(v, dtype=mt.float32), 0, dtype=mt.float64)
        want = getattr(torch.special, name)(torch.from_numpy(v).float(), 0, dtype=torch.float64)
        assert got.dtype == mt.float64
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
        with pytest.raises(TypeError):
            getattr(mt.special, name)(x)  # dim is required, as torch.special's
        with pytest.raises(TypeError):
            getattr(mt.special, name)(x, 0, mt.float64)  # dtype is keyword-only
    assert mt.special.sinc(input=x).shape == (2, 3) and mt.special.round(input=x).shape == (2, 3)
