"""gcd, lcm, frexp, i0 and torch.special's i0e/i1/i1e, mvlgamma (multigammaln), unique_consecutive, histogram,
histogramdd, unravel_index, empty_strided and index_reduce against torch: values, dtypes, shapes and gradients, with
broadcasting, zero-size dims, 0-d and non-contiguous tensors, int32/int64/float32/float64 and nan/inf edges; and
their errors. The bulk runs on the CPU backends; one small case per function runs on every backend (cuda under
Numba's simulator)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from conftest import BACKENDS, CPU_BACKENDS
from torch_oracle import case, check, index, run

import minitensor as mt
from minitensor import DTypeError, IndexOutOfRangeError, ShapeError

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta:UserWarning"),
]

nan, inf = math.nan, math.inf
RNG = np.random.default_rng(11)
I64_MIN = np.iinfo(np.int64).min
F32, F64 = np.float32, np.float64


def ints(L: Any, like: Any, values: Any, dtype: str = "int64") -> Any:
    """An integer tensor of ``values`` for library L, on ``like``'s backend."""
    array = np.array(values, np.int64)
    if L is torch:
        return torch.tensor(array, dtype=getattr(torch, dtype))
    return mt.tensor(array, backend=like.backend.name, dtype=getattr(mt, dtype))


# --- gcd, lcm ---

G_A = np.array([[12, -12, 0, 7, 0, -9, 2**30], [35, 4, -6, 1, 18, 27, -(2**20)]], np.int64)
G_B = np.array([18, 18, 0, -3, -5, 6, 3**15], np.int64)  # lcm fits int64: the simple backend's Python ints never wrap

GCD = [
    case(lambda L, a, b: (L.gcd(a, b), L.lcm(a, b), a.gcd(b), a.lcm(b)), G_A, G_B),
    case(lambda L, a, b: (L.gcd(a.int(), b.int()), L.lcm(a.int(), b.int())), G_A % 1000, G_B % 997),  # int32
    case(lambda L, a, b: (L.gcd(a.int(), b), L.lcm(b, a.int())), G_A % 1000, G_B),  # int32 with int64: int64
    case(lambda L, a, b: (L.gcd(a.t(), b[:2].reshape(1, 2)), L.lcm(a.t(), b[1:3].reshape(1, 2))), G_A, G_B),  # strided
    case(lambda L, a, b: (L.gcd(a.reshape(2, 7, 1), b), L.lcm(a[0], b.reshape(7, 1))), G_A, G_B),  # broadcast
    case(lambda L, a, b: (L.gcd(a, b), L.lcm(a, b)), np.zeros((0, 3), np.int64), np.array([4, 6, 0], np.int64)),
    case(lambda L, a, b: (L.gcd(a, b), L.lcm(a, b), L.gcd(a, b.int())), np.array(-24, np.int64), G_B),  # 0-d
    case(lambda L, a, b: L.gcd(a, b), np.array([I64_MIN, I64_MIN, 2**62], np.int64), np.array([0, I64_MIN, -(2**61)], np.int64)),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_gcd_lcm(backend: str) -> None:
    run(backend, GCD)


def test_gcd_lcm_wrap_and_inplace() -> None:
    """int64 lcm wraps on overflow as torch's (fast: the simple backend's Python ints refuse to wrap); gcd_/lcm_
    write into self's dtype."""
    a, b = mt.tensor([2**40, 6], backend="fast"), mt.tensor([3**25, 4], backend="fast")
    want = torch.lcm(torch.tensor([2**40, 6]), torch.tensor([3**25, 4]))
    assert mt.lcm(a, b).tolist() == want.tolist()
    x = mt.tensor([12, 9], dtype=mt.int32)
    assert x.gcd_(mt.tensor([18, 6])) is x and x.tolist() == [6, 3] and x.dtype == mt.int32
    assert x.lcm_(mt.tensor([4, 4])).tolist() == [12, 12]


def test_gcd_lcm_errors() -> None:
    i, f = mt.tensor([4, 6]), mt.tensor([4.0, 6.0])
    with pytest.raises(DTypeError, match=r"gcd\(\) needs integer tensors, got float32 \(2,\) and int64 \(2,\)"):
        mt.gcd(f, i)
    with pytest.raises(DTypeError, match="lcm"):
        i.lcm(mt.tensor([True, False]))
    with pytest.raises(TypeError, match="argument 'other' .* must be Tensor, not int"):
        mt.gcd(i, 6)
    with pytest.raises(TypeError, match="must be Tensor"):
        mt.lcm([4], i)
    with pytest.raises(ShapeError):
        mt.gcd(i, mt.tensor([1, 2, 3]))


# --- frexp ---

EDGES32 = np.array([0.0, -0.0, 1.0, -3.0, 0.5, 1e-45, -1e-40, np.finfo(F32).tiny, np.finfo(F32).max, 7.25e-3, inf,
                    -inf, nan], F32)
EDGES64 = np.array([0.0, -0.0, 5e-324, -1e-310, 2.2250738585072014e-308, 1.5e308, -np.finfo(F64).max, 3.0, -0.1,
                    inf, -inf, nan], F64)


def _frexp(L: Any, x: Any) -> Any:
    m, e = L.frexp(x)
    return m, e, x.frexp().mantissa, x.frexp().exponent


FREXP = [
    case(_frexp, EDGES32, grad=False),
    case(_frexp, EDGES64, grad=False),
    case(lambda L, x: L.frexp(x * 3.0), RNG.normal(size=(3, 1, 4)).astype(F32) * 100),  # gradient: d / 2**exponent
    case(lambda L, x: L.frexp(x.t()), RNG.normal(size=(4, 3)) * 1e-3),
    case(lambda L, x: L.frexp(x), np.zeros((2, 0), F32)),
    case(lambda L, x: L.frexp(x), np.array(-6.5, F64)),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_frexp(backend: str) -> None:
    run(backend, FREXP)
    got = mt.frexp(mt.tensor(EDGES64, backend=backend)).mantissa.to_numpy()
    np.testing.assert_array_equal(np.signbit(got), np.signbit(torch.frexp(torch.tensor(EDGES64)).mantissa.numpy()))


def test_frexp_result_and_errors() -> None:
    out = mt.frexp(mt.tensor([8.0]))
    assert type(out).__name__ == "Frexp" and out._fields == ("mantissa", "exponent")
    assert out.exponent.dtype == mt.int32 and out.mantissa.tolist() == [0.5] and out.exponent.tolist() == [4]
    with pytest.raises(DTypeError, match=r"frexp\(\) only supports floating-point dtypes, got int64"):
        mt.frexp(mt.tensor([1, 2]))
    with pytest.raises(DTypeError):
        mt.tensor([True]).frexp()


# --- modified Bessel functions ---

BESSEL_X64 = np.concatenate([np.linspace(-40, 40, 161), np.geomspace(1e-8, 700, 40), [0.0, -0.0, 19.999, 20.0, 709.0,
                                                                                       710.0, -712.0, 1e10, inf, -inf,
                                                                                       nan]])
BESSEL_X32 = np.concatenate([np.linspace(-30, 30, 61), [0.0, -0.0, 1e-20, 88.0, -88.5, 89.0, 1e30, inf, -inf, nan]]).astype(F32)


def _all_bessel(L: Any, x: Any) -> Any:
    return L.i0(x), x.i0(), L.special.i0(x), L.special.i0e(x), L.special.i1(x), L.special.i1e(x)


BESSEL = [
    case(_all_bessel, BESSEL_X64, grad=False, rtol=1e-14, atol=0),
    case(_all_bessel, BESSEL_X32, grad=False, rtol=2e-6, atol=0),
    case(_all_bessel, RNG.normal(size=(2, 5)) * 6, rtol=1e-12, atol=1e-14),  # gradients
    case(_all_bessel, np.array([0.0, -0.0, 1e-17, -1e-20, 3e-8], F64), rtol=1e-12),  # i1, i1e: 0.5 for |x| <= eps
    case(_all_bessel, RNG.normal(size=(3, 4)).astype(F32) * 4, rtol=2e-6, atol=1e-6),
    case(lambda L, x: (L.i0(x.t()), L.special.i1e(x.t())), RNG.normal(size=(3, 2)) * 3, rtol=1e-12),
    case(lambda L, x: (L.i0(x), L.special.i1(x), L.special.i0e(x.int())), np.array([[1, -2, 0, 30]], np.int64), rtol=1e-6),
    case(lambda L, x: (L.i0(x), L.special.i1e(x)), np.zeros((0, 2), F32)),
    case(lambda L, x: (L.i0(x), L.special.i1(x)), np.array(2.5, F32), rtol=2e-6),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_bessel(backend: str) -> None:
    run(backend, BESSEL)


def test_bessel_against_numpy_and_signs() -> None:
    x = np.concatenate([np.linspace(-30, 30, 121), [700.0, 1e-300]])
    np.testing.assert_allclose(mt.i0(mt.tensor(x)).numpy(), np.i0(x), rtol=1e-14)
    t = torch.tensor([-0.0, 0.0, -1e-30, 1e-30])
    for ours, theirs in ((mt.special.i1, torch.special.i1), (mt.special.i1e, torch.special.i1e)):
        got = ours(mt.tensor(t.numpy())).numpy()
        np.testing.assert_array_equal(np.signbit(got), np.signbit(theirs(t).numpy()))
    assert mt.special.i1e(mt.tensor([-inf, inf])).tolist() == [-0.0, 0.0] and mt.special.i1e(mt.tensor(-inf)).numpy() < 1
    assert np.signbit(mt.special.i1e(mt.tensor([-inf])).numpy()).tolist() == [True]


def test_bessel_second_derivatives() -> None:
    x = np.array([-3.0, -0.5, 0.0, 0.7, 4.0])
    for ours, theirs in ((mt.i0, torch.i0), (mt.special.i0e, torch.special.i0e), (mt.special.i1, torch.special.i1),
                         (mt.special.i1e, torch.special.i1e)):
        a, t = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        (g,) = mt.autograd.grad(ours(a).sum(), a, create_graph=True)
        (gt,) = torch.autograd.grad(theirs(t).sum(), t, create_graph=True)
        (h,) = mt.autograd.grad(g.sum(), a)
        (ht,) = torch.autograd.grad(gt.sum(), t)
        np.testing.assert_allclose(h.numpy(), ht.numpy(), rtol=1e-12, atol=1e-12)


def test_i0_inplace() -> None:
    x = mt.tensor([0.0, 1.0])
    assert x.i0_() is x
    np.testing.assert_allclose(x.numpy(), [1.0, 1.2660658], rtol=1e-6)
    with pytest.raises(DTypeError):
        mt.tensor([1, 2]).i0_()  # a float result does not fit an int64 tensor, as torch


# --- mvlgamma ---

MV = [
    case(lambda L, x: (L.mvlgamma(x, 1), L.mvlgamma(x + 1, 2), x.mvlgamma(3) if L is mt else L.mvlgamma(x, 3),
                       L.special.multigammaln(x + 2, 5)), RNG.uniform(1.01, 9.0, size=(2, 3)), rtol=1e-12),
    case(lambda L, x: (L.mvlgamma(x, 2), L.mvlgamma(x.t(), 1)), RNG.uniform(0.6, 4.0, size=(3, 2)).astype(F32)),
    case(lambda L, x: L.mvlgamma(x, 2), np.array([1.0, nan, inf], F64)),
    case(lambda L, x: L.mvlgamma(x, 3), np.zeros((0, 2), F32)),
    case(lambda L, x: L.mvlgamma(x, 2), np.array(3.5, F32)),
    case(lambda L, x: L.mvlgamma(x, 2), np.array([1, 2, 7], np.int64)),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_mvlgamma(backend: str) -> None:
    run(backend, MV)


def test_mvlgamma_errors_and_inplace() -> None:
    x = mt.tensor([1.0, 0.5])
    with pytest.raises(ValueError, match=r"all elements must be greater than \(p-1\)/2 = 0.5 for p = 2; the smallest is 0.5"):
        mt.mvlgamma(x, 2)
    with pytest.raises(ValueError, match="p has to be greater than or equal to 1, got 0"):
        mt.mvlgamma(x, 0)
    with pytest.raises(TypeError, match="must be int"):
        mt.mvlgamma(x, 1.5)
    with pytest.raises(DTypeError, match="boolean"):
        mt.mvlgamma(mt.tensor([True]), 1)
    y = mt.tensor([2.0, 3.0])
    assert y.mvlgamma_(2) is y
    np.testing.assert_allclose(y.numpy(), torch.mvlgamma(torch.tensor([2.0, 3.0]), 2).numpy(), rtol=1e-6)


# --- unique_consecutive ---


def _uc(L: Any, x: Any, dim: Any = None) -> Any:
    return (L.unique_consecutive(x, dim=dim), L.unique_consecutive(x, return_inverse=True, dim=dim),
            x.unique_consecutive(return_counts=True, dim=dim),
            L.unique_consecutive(x, return_inverse=True, return_counts=True, dim=dim))


RUNS = np.array([[1, 1, 2], [2, 2, 3], [2, 2, 3], [1, 1, 2]], np.int64)
UNIQUE = [
    case(_uc, RUNS, grad=False),
    case(lambda L, x: _uc(L, x, 0), RUNS, grad=False),
    case(lambda L, x: _uc(L, x.t(), 1), RUNS, grad=False),
    case(lambda L, x: _uc(L, x.int(), -1), RUNS, grad=False),
    case(_uc, np.array([nan, nan, 1.0, 1.0, -0.0, 0.0, inf], F32), grad=False),
    case(lambda L, x: _uc(L, x, 0), np.array([[1.0, nan], [1.0, nan], [2.0, 3.0], [2.0, 3.0]], F64), grad=False),
    case(_uc, np.array([True, True, False, True]), grad=False),
    case(_uc, np.array(5, np.int64), grad=False),
    case(_uc, np.zeros((2, 0), F32), grad=False),
    case(lambda L, x: _uc(L, x, 1), np.zeros((2, 0), F32), grad=False),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_unique_consecutive(backend: str) -> None:
    run(backend, UNIQUE)


def test_unique_consecutive_errors() -> None:
    with pytest.raises(ShapeError, match="0-sized dimensions"):
        mt.unique_consecutive(mt.zeros(2, 0), dim=0)
    with pytest.raises(IndexOutOfRangeError):
        mt.unique_consecutive(mt.tensor([[1, 2]]), dim=2)


# --- histogram, histogramdd ---

DATA = np.array([1.0, 2.0, 1.0, 4.0, 2.5, 7.0, -3.0, 0.0, 2.0], F32)
HIST = [
    case(lambda L, x: (L.histogram(x, 3), x.histogram(4), L.histogram(x, 1)), DATA),
    case(lambda L, x: (L.histogram(x, 4, range=(0.0, 4.0)), L.histogram(x, 2, range=(2.0, 2.0))), DATA),  # on edges
    case(lambda L, x, w: (L.histogram(x, 5, weight=w), L.histogram(x, 3, weight=w, density=True),
                          L.histogram(x, 6, density=True)), DATA, RNG.uniform(0, 2, 9).astype(F32)),
    case(lambda L, x, e: (L.histogram(x, e), L.histogram(x, e, weight=x, density=True)), DATA,
         np.array([-1.0, 1.0, 2.0, 6.0], F32)),
    case(lambda L, x: L.histogram(x.t(), 7), RNG.normal(size=(5, 8))),  # float64, 2-D, strided
    case(lambda L, x: (L.histogram(x, 20), L.histogram(x, 20, range=(-1.0, 1.0))), RNG.normal(size=1000).astype(F32)),
    case(lambda L, x: (L.histogram(x, 3), L.histogram(x, 2, density=True)), np.zeros(0, F32)),
    case(lambda L, x: L.histogram(x, 3), np.array([2.0, 2.0], F64)),
    case(lambda L, x: L.histogram(x, 3, range=(0.0, 3.0)), np.array([nan, 1.0, inf, -inf, 3.0], F32)),
]
HISTDD = [
    case(lambda L, x, w: (L.histogramdd(x, bins=[3, 2], weight=w), L.histogramdd(x, bins=2, range=[0.0, 1.0, 0.0, 2.0],
                                                                                 density=True)),
         np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.5, 0.5]], F32), np.array([1.0, 2, 4, 8, 16], F32)),
    case(lambda L, x, e: L.histogramdd(x, bins=[e, e[1:]]), RNG.normal(size=(2, 10, 2)), np.array([-2.0, 0.0, 0.5, 3.0])),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_histogram(backend: str) -> None:
    run(backend, [(fn, arrays, {**options, "grad": False}) for fn, arrays, options in HIST + HISTDD])


def test_histogram_result_and_errors() -> None:
    out = mt.histogram(mt.tensor([1.0, 2.0]), 2)
    assert type(out).__name__ == "Histogram" and out._fields == ("hist", "bin_edges") and not out.hist.requires_grad
    assert mt.histogramdd(mt.ones(3, 2), 2).bin_edges[1].shape == (3,)
    x = mt.tensor([1.0, 2.0, 4.0])
    with pytest.raises(ValueError, match=r"bins must be > 0, but got 0 for dimension 0"):
        mt.histogram(x, 0)
    with pytest.raises(ValueError, match=r"range \[1.0, inf\] is not finite"):
        mt.histogram(mt.tensor([1.0, inf]), 2)
    with pytest.raises(ValueError, match="is not finite"):
        mt.histogram(mt.tensor([1.0, nan]), 2)
    with pytest.raises(ValueError, match="min should not exceed max, but got min 3.0 max 0.0"):
        mt.histogram(x, 3, range=(3.0, 0.0))
    with pytest.raises(DTypeError, match=r"input must be a float tensor \(float32 or float64\), got int64"):
        mt.histogram(mt.tensor([1, 2]), 2)
    with pytest.raises(DTypeError, match="same dtype"):
        mt.histogram(x, 2, weight=mt.tensor([1.0, 2.0, 3.0], dtype=mt.float64))
    with pytest.raises(ShapeError, match="weight"):
        mt.histogram(x, 2, weight=mt.tensor([1.0, 2.0]))
    with pytest.raises(DTypeError, match="bins tensors should have the same dtype"):
        mt.histogram(x, mt.tensor([0.0, 1.0], dtype=mt.float64))
    with pytest.raises(ShapeError, match="bins tensor should have one dimension"):
        mt.histogram(x, mt.tensor([[0.0, 1.0]]))
    with pytest.raises(ValueError, match="bins must be > 0"):
        mt.histogram(x, mt.tensor([1.0]))
    with pytest.raises(TypeError, match="range cannot be given"):
        mt.histogram(x, mt.tensor([0.0, 1.0]), range=(0.0, 1.0))
    with pytest.raises(ShapeError, match="at least 2 dimensions"):
        mt.histogramdd(x, 2)
    with pytest.raises(ValueError, match="range should have 4 elements, but got 2"):
        mt.histogramdd(mt.ones(3, 2), [2, 2], range=[0.0, 1.0])


# --- unravel_index ---

UNRAVEL = [
    case(lambda L, i: (L.unravel_index(i, (2, 3)), L.unravel_index(i, [6]), L.unravel_index(i, 6)),
         np.array([4, 1, -1, 0, 5, -6], np.int64)),
    case(lambda L, i: L.unravel_index(i.int(), (3, 1, 4, 2)), RNG.integers(-24, 24, size=(2, 5))),
    case(lambda L, i: L.unravel_index(i.t(), (7, 9)), RNG.integers(0, 63, size=(3, 4))),
    case(lambda L, i: L.unravel_index(i, (2, 0)), np.zeros(0, np.int64)),
    case(lambda L, i: L.unravel_index(i, (5, 3)), np.array(14, np.int64)),
    case(lambda L, i: L.unravel_index(i, ()), np.array([0], np.int64)),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_unravel_index(backend: str) -> None:
    run(backend, UNRAVEL)


def test_unravel_index_errors() -> None:
    i = mt.tensor([6])
    with pytest.raises(IndexOutOfRangeError, match=r"range over \[6, 6\], out of range \[-6, 5\] for shape \(2, 3\)"):
        mt.unravel_index(i, (2, 3))
    with pytest.raises(IndexOutOfRangeError):
        mt.unravel_index(mt.tensor([-7]), (2, 3))
    with pytest.raises(IndexOutOfRangeError):
        mt.unravel_index(mt.tensor([0]), (2, 0))
    with pytest.raises(DTypeError, match="integer tensor, but got float32"):
        mt.unravel_index(mt.tensor([1.0]), (2, 3))
    with pytest.raises(DTypeError, match="bool"):
        mt.unravel_index(mt.tensor([True]), (2,))
    with pytest.raises(ValueError, match=r"cannot have negative values, but got \(-1, 2\)"):
        mt.unravel_index(i, (-1, 2))
    with pytest.raises(TypeError, match="must be Tensor"):
        mt.unravel_index(5, (2, 3))


# --- empty_strided ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_empty_strided(backend: str) -> None:
    for size, stride in (((2, 3), (1, 2)), ((2, 3), (4, 1)), ((2, 2), (0, 0)), ((2, 0), (5, 2)), ((), ()), ((4,), (3,))):
        t = torch.empty_strided(size, stride)
        x = mt.empty_strided(size, stride, backend=backend)
        assert x.stride() == t.stride() == stride and x.shape == tuple(t.shape) and x.dtype == mt.float32
        assert all(x.stride(d) == t.stride(d) for d in range(-len(size), len(size)))
        x.fill_(2.5)
        assert (x.numpy() == 2.5).all() and x.is_contiguous() == t.is_contiguous()
    x = mt.empty_strided((2, 3), (1, 2), dtype=mt.int32, backend=backend)
    x.copy_(mt.tensor([[1, 2, 3], [4, 5, 6]], dtype=mt.int32, backend=backend))
    assert x.tolist() == [[1, 2, 3], [4, 5, 6]] and x.dtype == mt.int32 and x.stride() == (1, 2)
    assert x.t().contiguous().view(-1).tolist() == [1, 4, 2, 5, 3, 6]  # column-major storage, as asked
    g = mt.empty_strided([3], [2], dtype=mt.float64, requires_grad=True, backend=backend)
    assert g.requires_grad and g.dtype == mt.float64 and g.device == backend


def test_empty_strided_errors() -> None:
    with pytest.raises(ShapeError, match=r"dimensionality of sizes \(2\) must match dimensionality of strides \(1\)"):
        mt.empty_strided((2, 3), (1,))
    with pytest.raises(ShapeError, match="negative strides"):
        mt.empty_strided((2, 3), (-1, 2))
    with pytest.raises(ShapeError):
        mt.empty_strided((-2, 3), (1, 2))


# --- index_reduce ---

SELF = RNG.normal(size=(4, 3)).round(1) + 0.05  # never equal to a source value: see test_index_reduce_tie_with_self
SRC = RNG.normal(size=(5, 3)).round(1)
SRC[1, 0] = 0.0  # a zero in a product
SRC[3, 1] = SRC[0, 1]  # a tie for amax/amin
IDX = [1, 3, 1, 0, 1]


def _ir(reduce: str, include_self: bool) -> Any:
    def fn(L: Any, x: Any, s: Any) -> Any:
        return (L.index_reduce(x, 0, index(L, x, IDX), s, reduce, include_self=include_self),
                x.index_reduce(1, index(L, x, [2, 2, 0]), s[:4], reduce, include_self=include_self))
    return fn


INDEX_REDUCE = [case(_ir(r, inc), SELF, SRC) for r in ("prod", "mean", "amax", "amin") for inc in (True, False)] + [
    case(lambda L, x, s: L.index_reduce(x.t(), -1, index(L, x, IDX).int(), s.t(), "amax"), SELF, SRC),  # strided
    case(lambda L, x, s: L.index_reduce(x, 0, index(L, x, IDX), s, "mean"), SELF.astype(F32), SRC.astype(F32)),
    case(lambda L, x, s: (L.index_reduce(x, 0, index(L, x, [2, 2, 0]), s, "mean"),
                          L.index_reduce(x.int(), 0, index(L, x, [2, 2, 0]), s.int(), "mean", include_self=False),
                          L.index_reduce(x, 1, index(L, x, [1]), s[:, :1], "prod")),
         np.array([[3, -7], [5, 2], [4, 4]], np.int64), np.array([[-2, 3], [-5, 6], [9, 9]], np.int64)),
    case(lambda L, x, s: (L.index_reduce(x, 0, index(L, x, [0, 0]), s, "amax"), L.index_reduce(x, 0, index(L, x, [0, 0]), s,
                                                                                                "amin")),
         np.array([[3.0, 1.0], [2.0, 2.0]]), np.array([[3.0, 0.5], [3.0, 1.0]])),  # ties with self: shared evenly
    case(lambda L, x, s: L.index_reduce(x, 0, index(L, x, []), s, "prod"), SELF, np.zeros((0, 3))),
    case(lambda L, x, s: L.index_reduce(x, 0, index(L, x, [0]), s, "amin", include_self=False), np.array(2.0),
         np.array(-3.0)),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_index_reduce(backend: str) -> None:
    run(backend, INDEX_REDUCE)


def test_index_reduce_tie_with_self() -> None:
    """include_self=False with a source equal to self's excluded value: the source gets the whole gradient (as
    scatter_reduce's); torch counts self in the tie, then drops its share, so its source gets half."""
    x = mt.tensor([[2.0, 1.0]], requires_grad=True)
    s = mt.tensor([[2.0, 0.0]], requires_grad=True)
    x.index_reduce(0, mt.tensor([0]), s, "amax", include_self=False).sum().backward()
    assert x.grad is not None and s.grad is not None
    assert s.grad.tolist() == [[1.0, 1.0]] and x.grad.tolist() == [[0.0, 0.0]]
    t = torch.tensor([[2.0, 0.0]], requires_grad=True)
    torch.tensor([[2.0, 1.0]]).index_reduce(0, torch.tensor([0]), t, "amax", include_self=False).sum().backward()
    assert t.grad is not None and t.grad.tolist() == [[0.5, 1.0]]


def test_index_reduce_inplace_and_errors() -> None:
    x, i, s = mt.tensor([[1.0, 2.0], [3.0, 4.0]]), mt.tensor([0, 0]), mt.tensor([[2.0, 3.0], [5.0, 5.0]])
    assert x.index_reduce_(0, i, s, "amax") is x and x.tolist() == [[5.0, 5.0], [3.0, 4.0]]
    with pytest.raises(ValueError, match="Expected reduce to be one of prod, mean, amax or amin but got 'sum'"):
        x.index_reduce(0, i, s, "sum")
    with pytest.raises(DTypeError, match=r"self \(float32\) and source \(int64\) must have the same dtype"):
        x.index_reduce(0, i, mt.tensor([[2, 3], [5, 5]]), "prod")
    with pytest.raises(DTypeError, match="index must be an int64 or int32 tensor"):
        x.index_reduce(0, mt.tensor([0.0, 0.0]), s, "prod")
    with pytest.raises(ShapeError, match="index is supposed to be a vector"):
        x.index_reduce(0, mt.tensor([[0, 1]]), s, "prod")
    with pytest.raises(ShapeError, match="must have the shape of self"):
        x.index_reduce(1, mt.tensor([1, 0, 1]), s, "prod")
    with pytest.raises(IndexOutOfRangeError):
        x.index_reduce(0, mt.tensor([0, 2]), s, "prod")
    with pytest.raises(IndexOutOfRangeError):
        x.index_reduce(1, mt.tensor([-1, 0]), s, "prod")
    with pytest.raises(DTypeError):
        mt.tensor([True, False]).index_reduce(0, mt.tensor([0]), mt.tensor([True]), "amax")


# --- the API ---


def test_api() -> None:
    for name in ("gcd", "gcd_", "lcm", "lcm_", "frexp", "i0", "i0_", "mvlgamma", "mvlgamma_", "histogram",
                 "unique_consecutive", "index_reduce", "index_reduce_", "stride"):
        assert hasattr(mt.Tensor, name) and hasattr(torch.Tensor, name), name
    for name in ("gcd", "lcm", "frexp", "i0", "mvlgamma", "histogram", "histogramdd", "unique_consecutive",
                 "unravel_index", "empty_strided", "index_reduce"):
        assert callable(getattr(mt, name)) and callable(getattr(torch, name)), name
    for name in ("i0", "i0e", "i1", "i1e", "multigammaln"):
        assert callable(getattr(mt.special, name)) and callable(getattr(torch.special, name)), name
    with pytest.raises(TypeError, match=r"i0\(\): argument 'input' \(position 1\) must be Tensor, not list"):
        mt.i0([1.0])


# --- every backend, cuda included: one small case of each ---

EVERY_BACKEND = [
    case(lambda L, a, b: (L.gcd(a, b), L.lcm(a, b)), G_A[:, :4].copy(), G_B[:4].copy()),
    case(lambda L, x: (L.frexp(x), L.i0(x), L.special.i0e(x), L.special.i1(x), L.special.i1e(x), L.mvlgamma(x.abs() + 1, 2)),
         np.array([[0.5, -3.0], [25.0, 1e-40]], F32), rtol=2e-6),
    case(lambda L, x: (L.unique_consecutive(x, return_counts=True), L.histogram(x, 3), L.histogramdd(x.reshape(3, 1), [2]),
                       L.unravel_index(index(L, x, [5, -1]), (2, 3))),
         np.array([1.0, 1.0, 2.0], F32), grad=False),
    case(lambda L, x, s: L.index_reduce(x, 0, index(L, x, [1, 1, 0]), s, "amax"), np.array([1.0, 1.0, 2.0], F32),
         np.array([0.5, 3.0, -1.0], F32)),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_backend(backend: str) -> None:
    for fn, arrays, options in EVERY_BACKEND:
        check(backend, fn, *arrays, **options)
    assert mt.empty_strided((2, 2), (1, 2), backend=backend).stride() == (1, 2)
