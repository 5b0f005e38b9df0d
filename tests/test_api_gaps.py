"""Tensor methods and torch.* functions PyTorch users reach for: cpu/cuda, unfold, H/mH/adjoint, multinomial, lu,
lu_solve, geqrf/orgqr/ormqr, hardshrink, prelu, igamma/igammac (mt.special.gammainc/gammaincc), gradient, asarray,
detach, binomial, vmap, conv3d, conv_transpose3d and fill, against torch (values, dtypes, shapes, gradients)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import BACKENDS, CPU_BACKENDS
from torch_oracle import check

import minitensor as mt
from minitensor import operators

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(55)


def _t(a: np.ndarray, backend: str = "simple", requires_grad: bool = False) -> mt.Tensor:
    return mt.tensor(a, backend=backend, requires_grad=requires_grad)


# --- cpu / cuda ---


def test_cpu_and_cuda_move_as_to() -> None:
    x = mt.tensor([1.0, 2.0], backend="simple", requires_grad=True)
    moved = x.cpu()
    assert moved.backend is x.to("cpu").backend and moved.tolist() == [1.0, 2.0]
    moved.sum().backward()
    assert x.grad is not None and x.grad.tolist() == [1.0, 1.0]
    on_cpu = mt.tensor([1.0], backend=mt.default_backend_name() if mt.default_backend_name() != "cuda" else "fast")
    assert on_cpu.to("cpu").cpu() is on_cpu.to("cpu")
    if "cuda" in BACKENDS:
        assert x.cuda().backend.name == "cuda" and x.cuda(0, non_blocking=True).tolist() == [1.0, 2.0]
    else:
        with pytest.raises(type(_error_of(lambda: x.to("cuda")))):
            x.cuda()
    with pytest.raises(mt.BackendError, match="invalid device"):
        x.cuda(3)


def _error_of(fn: object) -> BaseException:
    try:
        fn()  # type: ignore[operator]
    except BaseException as error:  # noqa: BLE001 - the error to compare with
        return error
    raise AssertionError("expected an error")


# --- unfold ---

UNFOLD = [((7,), 0, 3, 2), ((4, 3, 2), 0, 2, 3), ((5, 4), -2, 5, 1), ((6,), 0, 0, 1), ((4, 5), 1, 3, 1)]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("shape, dim, size, step", UNFOLD)
def test_unfold_matches_torch_with_gradients(backend: str, shape: tuple[int, ...], dim: int, size: int, step: int) -> None:
    x = RNG.standard_normal(shape)
    check(backend, lambda lib, a: a.unfold(dim, size, step), x)


def test_unfold_is_a_view_and_differentiates_twice() -> None:
    x = mt.tensor(np.arange(8.0), backend="simple")
    w = x.unfold(0, 3, 2)
    assert w._base is x and w.shape == (3, 3) and w.stride() == (2, 1)
    x[4] = 40.0  # a write through the base shows in both windows that hold it
    assert w[1, 2].item() == 40.0 and w[2, 0].item() == 40.0
    a = mt.tensor(RNG.standard_normal(5), dtype=mt.float64, requires_grad=True)
    b = torch.tensor(a.numpy(), requires_grad=True)
    (ga,) = mt.autograd.grad((a.unfold(0, 3, 1) ** 3).sum(), a, create_graph=True)
    (gb,) = torch.autograd.grad((b.unfold(0, 3, 1) ** 3).sum(), b, create_graph=True)
    np.testing.assert_allclose(ga.numpy(), gb.detach().numpy(), rtol=1e-12)
    ga.sum().backward()
    gb.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)
    assert mt.tensor(3.0).unfold(0, 1, 1).shape == (1,)


def test_unfold_errors() -> None:
    x = mt.arange(6.0)
    with pytest.raises(mt.ShapeError, match="maximum size for tensor at dimension 0 is 6 but size is 7"):
        x.unfold(0, 7, 1)
    with pytest.raises(ValueError, match="step is 0 but must be > 0"):
        x.unfold(0, 2, 0)
    with pytest.raises(IndexError):
        x.unfold(1, 2, 1)


def test_unfold_cuda_tiny() -> None:
    if "cuda" not in BACKENDS:
        pytest.skip("no cuda backend")
    check("cuda", lambda lib, a: a.unfold(0, 2, 1), np.array([1.0, 2.0, 3.0]))


# --- H, mH, adjoint ---


def test_conjugate_transposes() -> None:
    m = RNG.standard_normal((2, 3, 4))
    check("simple", lambda lib, a: (a.mH, a.adjoint(), lib.adjoint(a), a[0].H), m)
    x = mt.tensor(m)
    assert x.mH._base is x and mt.tensor(2.0).H.item() == 2.0
    with pytest.raises(mt.ShapeError, match="only supported on matrices"):
        _ = x.H
    with pytest.raises(mt.ShapeError, match="matrices or batches of matrices"):
        _ = mt.arange(3.0).mH
    with pytest.raises(mt.ShapeError):
        mt.adjoint(mt.arange(3.0))


# --- multinomial, binomial ---


def test_multinomial_method_matches_the_function() -> None:
    w = mt.tensor([[0.1, 0.0, 0.9], [0.5, 0.5, 0.0]])
    ours = w.multinomial(2, generator=mt.Generator().manual_seed(3))
    assert ours.tolist() == mt.multinomial(w, 2, generator=mt.Generator().manual_seed(3)).tolist()
    assert ours.dtype == mt.int64 and ours.shape == (2, 2)
    assert all(sorted(r) in ([0, 2], [0, 1]) for r in ours.tolist())
    with pytest.raises(ValueError, match="without replacement"):
        w.multinomial(4)


def test_binomial() -> None:
    count = mt.tensor([0.0, 5.0, 1000.0, 7.0])
    prob = mt.tensor([0.3, 1.0, 0.5, 0.0])
    out = mt.binomial(count, prob, generator=mt.Generator().manual_seed(1))
    values = out.tolist()
    assert out.dtype == mt.float32 and values[0] == 0 and values[1] == 5 and values[3] == 0 and 400 < values[2] < 600
    assert mt.binomial(mt.tensor([[4.0], [6.0]]), mt.tensor([0.5, 0.5])).shape == (2, 2)
    with pytest.raises(mt.DTypeError, match="floating-point dtypes for count"):
        mt.binomial(mt.tensor([5]), mt.tensor([0.5]))
    with pytest.raises(mt.DTypeError):
        mt.binomial(count, prob.double())
    with pytest.raises(ValueError, match="prob must be in"):
        mt.binomial(count, prob + 1.0)
    c = mt.tensor([3.0], requires_grad=True)
    with pytest.raises(mt.GradientError, match="binomial"):
        mt.binomial(c, mt.tensor([0.5])).sum().backward()


# --- lu, lu_solve, geqrf, orgqr, ormqr ---


@pytest.mark.filterwarnings("ignore:torch.lu")
def test_lu_methods_match_torch() -> None:
    a, b = RNG.standard_normal((2, 3, 3)), RNG.standard_normal((2, 3, 2))

    def fn(lib: object, x: object, y: object) -> object:
        lu, piv = x.lu()  # type: ignore[attr-defined]
        return lu, piv, y.lu_solve(lu, piv)  # type: ignore[attr-defined]

    check("simple", fn, a, b, grad=False)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5)])
def test_geqrf_matches_torch_and_householder_product(backend: str, shape: tuple[int, ...]) -> None:
    a = RNG.standard_normal(shape)
    check(backend, lambda lib, x: tuple(lib.geqrf(x)), a, grad=False, rtol=1e-10, atol=1e-12)
    x = mt.tensor(a, backend=backend)
    packed, tau = x.geqrf()
    if shape[-2] >= shape[-1]:
        q = mt.linalg.householder_product(packed, tau)
        np.testing.assert_allclose(q.numpy(), mt.linalg.qr(x).Q.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(packed.orgqr(tau).numpy(), q.numpy())


def test_geqrf_has_no_derivative() -> None:
    x = mt.tensor(RNG.standard_normal((3, 2)), requires_grad=True)
    a, tau = mt.geqrf(x)
    assert a.requires_grad and tau.requires_grad
    with pytest.raises(NotImplementedError, match="geqrf"):
        a.sum().backward()
    with pytest.raises(mt.ShapeError):
        mt.geqrf(mt.arange(3.0))


ORMQR = [((4, 3), (3,), (4, 2), True, False), ((4, 3), (3,), (4, 2), True, True), ((3, 4), (3,), (3, 2), True, False),
         ((4, 3), (3,), (2, 4), False, False), ((4, 3), (3,), (2, 4), False, True), ((2, 3, 3), (2, 3), (2, 3, 2), True, True)]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("sa, st, sc, left, transpose", ORMQR)
def test_ormqr_matches_torch_with_gradients(backend: str, sa: tuple, st: tuple, sc: tuple, left: bool,
                                            transpose: bool) -> None:
    a, tau, c = RNG.standard_normal(sa), RNG.uniform(0.5, 1.5, st), RNG.standard_normal(sc)
    check(backend, lambda lib, x, t, y: x.ormqr(t, y, left, transpose), a, tau, c, rtol=1e-10, atol=1e-12)
    check(backend, lambda lib, x, t, y: lib.ormqr(x, t, y, left=left, transpose=transpose), a, tau, c, grad=False,
          rtol=1e-10, atol=1e-12)


def test_ormqr_errors() -> None:
    a, c = mt.tensor(RNG.standard_normal((4, 3))), mt.tensor(RNG.standard_normal((4, 2)))
    with pytest.raises(mt.ShapeError, match=r"tau.shape\[-1\] must be equal to min"):
        mt.ormqr(a, mt.ones(2), c)
    with pytest.raises(mt.ShapeError, match=r"other.shape\[-1\] must be equal to input.shape\[-2\]"):
        mt.ormqr(a, mt.ones(3), c, left=False)
    with pytest.raises(mt.DTypeError):
        mt.ormqr(a, mt.ones(3, dtype=mt.float32), c)
    with pytest.raises(TypeError, match="must be Tensor"):
        mt.ormqr(a, [1.0], c)


# --- hardshrink, prelu ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_hardshrink_and_prelu_match_torch(backend: str) -> None:
    x = np.array([[-1.0, -0.5, 0.0, 0.2, 0.7], [0.5, -0.3, 2.0, -2.0, 0.6]])
    check(backend, lambda lib, a: (a.hardshrink(), a.hardshrink(0.6), lib.hardshrink(a, lambd=0.25)), x)
    check(backend, lambda lib, a, w: (a.prelu(w), lib.prelu(a, w)), x, np.array([0.25]))
    check(backend, lambda lib, a, w: a.unsqueeze(-1).prelu(w), x.T.copy(), np.array([0.1, -0.2]))


def test_prelu_errors() -> None:
    x = mt.ones(2, 3)
    with pytest.raises(mt.ShapeError, match="parameter numbers = 2 and channel size = 3"):
        x.prelu(mt.tensor([0.1, 0.2]))
    with pytest.raises(TypeError, match="'weight'"):
        x.prelu(0.1)
    with pytest.raises(mt.DTypeError, match="Type promoting"):
        x.prelu(mt.tensor([0.1], dtype=mt.float64))


# --- igamma, igammac ---


def test_igamma_scalar_accuracy_against_scipy() -> None:
    special = pytest.importorskip("scipy.special")
    a = 10.0 ** RNG.uniform(-6, 4, 400)
    x = a * 10.0 ** RNG.uniform(-2, 0.7, 400)
    lower = np.array([operators.igamma(u, v) for u, v in zip(a, x)])
    upper = np.array([operators.igammac(u, v) for u, v in zip(a, x)])
    for got, want in ((lower, special.gammainc(a, x)), (upper, special.gammaincc(a, x))):
        keep = want > 1e-30
        np.testing.assert_allclose(got[keep], want[keep], rtol=1e-12)
    for a_small in (1e-8, 1e-3, 0.3):  # Q small where 1 - P would cancel
        assert operators.igammac(a_small, 0.5) == pytest.approx(special.gammaincc(a_small, 0.5), rel=1e-13)



def _series_p(a: float, x: float) -> float:
    """P(a, x) from its series summed at 40 digits (mpmath): the reference where SciPy's asymptotics lose digits."""
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(40):
        a_, x_ = mpmath.mpf(a), mpmath.mpf(x)
        term = total = mpmath.mpf(1)
        n = 1
        while term >= total * mpmath.mpf(10) ** -35:
            term *= x_ / (a_ + n)
            total += term
            n += 1
        return float(mpmath.exp(a_ * mpmath.log(x_) - x_ - mpmath.loggamma(a_ + 1)) * total)


@pytest.mark.parametrize("a", [1e5, 1e6, 1e7])
def test_igamma_large_a_near_the_mean(a: float) -> None:
    """Temme's expansion from a = 1e5: x within 8 standard deviations of a, against the 40-digit series (the direct
    series and continued fraction were 1e-8 off at a = 1e6 and 24% at a = 1e8; SciPy is 0.5% off at a = 1e7)."""
    for k in (-8.0, -3.0, -0.01, 0.5, 2.0):
        x = a + k * math.sqrt(a)
        p = _series_p(a, x)
        assert operators.igamma(a, x) == pytest.approx(p, rel=2e-14)
        assert operators.igammac(a, x) == pytest.approx(1.0 - p, rel=2e-14)


def test_igamma_extreme_arguments_give_numbers_not_errors() -> None:
    """Python's math raises where compiled code gives inf or nan, so the simple backend and the CUDA simulator once
    failed on these (log of an underflowed x / a; a division by zero at a = x = 2**53)."""
    assert operators.igamma(10.0, 5e-324) == 0.0 and operators.igammac(10.0, 5e-324) == 1.0
    assert operators.igamma(2.0**53, 2.0**53) == pytest.approx(0.5, abs=1e-8)
    assert operators.igamma(1e300, 1e300) == 0.5 and operators.igammac(1e300, 1e300) == 0.5
    assert operators.igamma(1e6, 1e300) == 1.0 and operators.igammac(1e5, 5e-324) == 1.0

EDGES_A = [math.inf, 0.0, math.inf, 2.0, 0.0, 0.0, -1.0, 1.0, 1.0, math.inf, 1.0, math.nan, 2.0, 0.5, 30.0]
EDGES_X = [math.inf, math.inf, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, -1.0, 1.0, math.inf, 1.0, math.nan, 0.3, 25.0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_igamma_edges_every_backend(backend: str) -> None:
    n = len(EDGES_A) if backend != "cuda" else 4
    a, x = np.array(EDGES_A[-n:]), np.array(EDGES_X[-n:])
    check(backend, lambda lib, u, v: (lib.igamma(u, v), lib.igammac(u, v)), a, x, grad=False, rtol=1e-8, atol=0)  # torch: ~1e-9 at a = 30


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_igamma_values_dtypes_and_gradient(backend: str) -> None:
    a = RNG.uniform(0.1, 20.0, (3, 4))
    x = RNG.uniform(0.05, 25.0, (3, 4))
    check(backend, lambda lib, u, v: (lib.igamma(u, v.float()), u.igammac(v)), a, x, grad=False, rtol=1e-6,
          atol=1e-12)
    ours = mt.igamma(mt.tensor(a.astype(np.float32), backend=backend), mt.tensor(x, backend=backend))
    assert ours.dtype == mt.float64
    xs = mt.tensor(x, backend=backend, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    mt.special.gammaincc(mt.tensor(a, backend=backend), xs).sum().backward()
    torch.special.gammaincc(torch.tensor(a), xt).sum().backward()
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-10)
    y = mt.tensor(a, backend=backend)
    y.igamma_(mt.tensor(x, backend=backend))
    np.testing.assert_allclose(y.numpy(), torch.igamma(torch.tensor(a), torch.tensor(x)).numpy(), rtol=1e-12)


def test_igamma_errors() -> None:
    a = mt.tensor([2.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="igamma: input"):
        mt.igamma(a, mt.tensor([1.5])).sum().backward()
    with pytest.raises(mt.DTypeError):
        mt.igamma(mt.tensor([1, 2]), mt.tensor([1, 2]))
    assert mt.special.gammainc is mt.tensor_igamma.igamma


# --- gradient ---

GRADIENT = [
    ((5,), {"spacing": 2.0}), ((4, 5), {"spacing": [2.0, 0.5]}), ((4, 5), {"spacing": [3.0], "dim": [-1]}),
    ((3, 4), {"spacing": 0.5, "edge_order": 2}),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("shape, kwargs", GRADIENT)
def test_gradient_matches_torch(backend: str, shape: tuple[int, ...], kwargs: dict) -> None:
    check(backend, lambda lib, a: lib.gradient(a, **kwargs), RNG.standard_normal(shape), rtol=1e-10)


def test_gradient_coordinates_and_integers() -> None:
    f = np.array([1.0, 4.0, 9.0, 16.0, 25.0])
    coords = np.array([0.0, 1.0, 3.0, 4.0, 7.0])
    check("simple", lambda lib, a, c: lib.gradient(a, spacing=(c,)), f, coords, rtol=1e-12)
    (second,) = mt.gradient(mt.tensor(f, dtype=mt.float64), spacing=(mt.tensor(coords),), edge_order=2)
    np.testing.assert_allclose(second.numpy(), np.gradient(f, coords, edge_order=2), rtol=1e-12, atol=1e-12)
    check("simple", lambda lib, a: lib.gradient(a), np.array([1, 4, 9, 16, 25]), grad=False)
    with pytest.raises(mt.ShapeError, match="at least edge_order"):
        mt.gradient(mt.ones(2, 4), edge_order=2)
    with pytest.raises(ValueError, match="edge_order=1 and edge_order=2"):
        mt.gradient(mt.ones(3, 4), edge_order=3)
    with pytest.raises(mt.ShapeError, match="list of length"):
        mt.gradient(mt.ones(3, 4), spacing=[1.0, 2.0, 3.0])
    with pytest.raises(mt.ShapeError, match="multiple times"):
        mt.gradient(mt.ones(3, 4), dim=[0, 0])


# --- asarray, detach, fill, vmap, conv3d, conv_transpose3d ---


def test_asarray() -> None:
    t = mt.tensor([1.0, 2.0], requires_grad=True)
    assert mt.asarray(t) is t and mt.asarray(t).requires_grad
    wider = mt.asarray(t, dtype=mt.float64)
    assert wider.dtype == mt.float64 and wider.requires_grad and wider.history is not None
    copied = mt.asarray(t, copy=True)
    assert copied is not t and copied.requires_grad and copied.history is not None
    assert not mt.asarray(t, requires_grad=False).requires_grad
    leaf = mt.asarray(t.detach(), requires_grad=True)
    assert leaf.requires_grad and leaf.history is None
    with pytest.raises(ValueError, match="alias"):
        mt.asarray([1, 2], copy=False)
    with pytest.raises(ValueError, match="alias"):
        mt.asarray(t, dtype=mt.float64, copy=False)
    assert mt.asarray([1, 2]).dtype == mt.int64 and mt.asarray([1.5, 2]).dtype == mt.float32
    assert mt.asarray(np.float64(3)).dtype == mt.float64 and mt.asarray(np.array([1, 2], np.int32)).dtype == mt.int32
    assert mt.asarray(3, device="simple").backend.name == "simple"


def test_detach_fill_vmap() -> None:
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    d = mt.detach(x)
    assert not d.requires_grad and d.history is None and d.tolist() == [1.0, 2.0]
    check("simple", lambda lib, a, v: lib.fill(a, v), np.array([1.0, 2.0, 3.0]), np.array(2.5))
    check("simple", lambda lib, a: lib.fill(a, 7), np.array([1, 2]), grad=False)
    assert mt.vmap is mt.func.vmap
    out = mt.vmap(lambda row: row.sum())(mt.ones(3, 4))
    assert out.tolist() == [4.0, 4.0, 4.0]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_conv3d_forms(backend: str) -> None:
    x, w, b = RNG.standard_normal((1, 2, 3, 4, 3)), RNG.standard_normal((2, 2, 2, 2, 2)), RNG.standard_normal(2)
    check(backend, lambda lib, a, k, c: lib.conv3d(a, k, c, 1, 1), x, w, b, rtol=1e-9)
    check(backend, lambda lib, a, k: lib.conv_transpose3d(a, k, None, 2), x, w, rtol=1e-9)


def test_api_surface_of_this_brief() -> None:
    for name in ("cpu", "cuda", "unfold", "H", "mH", "adjoint", "multinomial", "lu", "lu_solve", "geqrf", "orgqr",
                 "ormqr", "hardshrink", "prelu", "igamma", "igammac", "igamma_", "igammac_"):
        assert hasattr(mt.Tensor, name), name
    for name in ("adjoint", "geqrf", "ormqr", "prelu", "igamma", "igammac", "gradient", "asarray", "detach", "binomial",
                 "vmap", "conv3d", "conv_transpose3d", "fill"):
        assert callable(getattr(mt, name)), name
    with pytest.raises(TypeError, match="must be Tensor"):
        mt.adjoint([[1.0]])
