"""Searching and order statistics (searchsorted, bucketize, kthvalue, msort, nanmedian, quantile, nanquantile,
bincount, unique), covariance and building (cov, corrcoef, atleast_*d, dstack, column_stack, diag_embed, vander) and
index writes (index_fill, index_copy and their in-place forms) against torch, on every backend: values, dtypes,
shapes and gradients, with broadcasting, a zero-size dim and transposed input; and their errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from torch_oracle import case, index, run

import minitensor as mt
from minitensor import DTypeError, EmptyReductionError, IndexOutOfRangeError, ShapeError

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),  # the CUDA simulator's NumPy scalars
    pytest.mark.filterwarnings("ignore:.*input value tensor is non-contiguous"),  # torch's, for transposed values
    pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:cov\\(\\)|corrcoef\\(\\):UserWarning"),  # torch's, for correction >= observations
]

nan = math.nan
A = np.array([[0.5, -1.25, 2.0, 1.0], [3.0, 0.25, -0.75, 1.5]], np.float32)
SEQ = np.array([[-1.0, 0.0, 2.0, 2.0, 5.0], [0.5, 1.0, 1.5, 3.0, 4.0]], np.float32)
VALS = np.array([[2.0, -3.0, 5.0], [1.0, 9.0, 0.75]], np.float32)
INTS = np.array([3, 0, 2, 2, 7, 3])
NANS = np.array([[1.0, nan, 3.0, -2.0, 0.5], [nan, nan, nan, nan, nan], [4.0, 2.0, nan, 8.0, 6.0]], np.float32)
E = np.zeros((0, 3), np.float32)
RNG = np.random.default_rng(7)
TIES = np.sort(RNG.integers(0, 6, (3, 40)), -1).astype(np.float32)  # many equal entries
TIE_VALUES = RNG.integers(-1, 7, (3, 25)).astype(np.float32)


# --- searching and order statistics ---

SEARCH = [
    case(lambda L, s, v: (L.searchsorted(s, v), L.searchsorted(s, v, right=True), L.searchsorted(s[1], v.t())), TIES, TIE_VALUES),
    case(lambda L, s, v: (L.searchsorted(s, v), L.searchsorted(s, v, side="right")), TIES.astype(np.int64), TIE_VALUES * 0.75),
    case(lambda L, s, v: (L.searchsorted(s, v), L.searchsorted(s, v, right=True), L.searchsorted(s, v, side="right")), SEQ, VALS),
    case(lambda L, s, v: (L.searchsorted(s, v, out_int32=True), L.searchsorted(s[0], v.t())), SEQ, VALS),
    case(lambda L, s, v: L.searchsorted(s, v), SEQ[0], np.zeros((0, 2), np.float32)),
    case(lambda L, s, v: L.searchsorted(s, v), SEQ[:, :0].copy(), VALS),
    case(lambda L, s, v: (L.searchsorted(s, v), L.searchsorted(s, v, right=True)), np.array([1, 3, 3, 8]), np.array([[3, 0], [9, 4]])),
    case(lambda L, s, v: L.searchsorted(s, v), np.array([1.0, 2.0, nan], np.float32), np.array([nan, 2.0, 0.0], np.float32)),
    case(lambda L, s, v: L.searchsorted(s, v, sorter=L.argsort(s)), np.array([4.0, -1.0, 2.0, 0.5], np.float32), VALS),
    case(lambda L, s, v: (L.bucketize(v, s), L.bucketize(v.t(), s, right=True, out_int32=True)), SEQ[0], VALS),
    case(lambda L, s, v: L.bucketize(v, s), np.array([0, 2, 4]), INTS),
    case(lambda L, s: (L.searchsorted(s, 2.5), L.bucketize(2, s), L.searchsorted(s, 3, right=True)), np.array([1, 2, 3, 3])),
]

ORDER = [
    case(lambda L, a: (L.kthvalue(a, 2), a.kthvalue(1, 0, keepdim=True), a.t().kthvalue(4, 0)), A),
    case(lambda L, a: (L.kthvalue(a, 1), L.kthvalue(a, 1, 0)), np.array(2.5, np.float32)),
    case(lambda L, a: L.kthvalue(a, 3, 1), NANS[:1]),
    case(lambda L, a: (L.msort(a), a.t().msort()), A),
    case(lambda L, a: L.msort(a), INTS),
    case(lambda L, a: (L.nanmedian(a), a.nanmedian(1), L.nanmedian(a, 0, keepdim=True)), NANS[[0, 2]].copy()),
    case(lambda L, a: L.nanmedian(a, 1), NANS, grad=False),
    case(lambda L, a: (L.nanmedian(a), a.t().nanmedian(0)), A),
    case(lambda L, a: (L.nanmedian(a), L.nanmedian(a, 1)), INTS.reshape(2, 3)),
    case(lambda L, a: L.nanmedian(a), E, grad=False),
]

QUANTILE = [
    case(lambda L, a: tuple(L.quantile(a, 0.4, interpolation=m) for m in ("linear", "lower", "higher", "midpoint", "nearest")), A),
    case(lambda L, a, q: tuple(L.quantile(a, q, 1, interpolation=m) for m in ("linear", "lower", "higher", "midpoint", "nearest")),
         A, np.array([0.0, 0.25, 0.5, 1.0], np.float32)),
    case(lambda L, a, q: (a.t().quantile(q, 0, keepdim=True), L.quantile(a, q, keepdim=True), L.quantile(a, q[1], 0)),
         A, np.array([0.1, 0.9], np.float32)),
    case(lambda L, a: (L.quantile(a, 0.5, 1), L.nanquantile(a, 0.3, 1), a.nanquantile(0.5)), NANS, grad=False),
    case(lambda L, a: (L.nanquantile(a, 0.3, 1, interpolation="nearest"), L.nanquantile(a, 0.75, 0)), NANS[[0, 2]].copy()),
    case(lambda L, a: L.quantile(a, 0.7), np.array(1.5, np.float64)),
]


def test_search(backend: str) -> None:
    run(backend, SEARCH)


def test_order_statistics(backend: str) -> None:
    run(backend, ORDER)


def test_quantile(backend: str) -> None:
    run(backend, QUANTILE)


def test_counting(backend: str) -> None:
    for values, weights, minlength in ((INTS, None, 0), (INTS, None, 10), (np.zeros(0, np.int64), None, 2),
                                       (INTS, np.linspace(-1, 2, 6).astype(np.float32), 0), (INTS[:3], np.array([1, 2, 3]), 0)):
        got = mt.bincount(mt.tensor(values, backend=backend), None if weights is None else mt.tensor(weights, backend=backend),
                          minlength)
        want = torch.bincount(torch.tensor(values), None if weights is None else torch.tensor(weights), minlength)
        assert got.dtype.name == str(want.dtype).removeprefix("torch.") and got.tolist() == pytest.approx(want.tolist())
    for array in (np.array([[3, 1, 3], [0, 1, 7]]), np.array([2.5, -1.0, 2.5], np.float32), np.zeros((2, 0))):
        got, want = mt.tensor(array, backend=backend).unique(return_inverse=True, return_counts=True), torch.tensor(array).unique(
            return_inverse=True, return_counts=True)
        for g, w in zip(got, want):
            assert g.shape == tuple(w.shape) and g.dtype.name == str(w.dtype).removeprefix("torch.") and g.tolist() == w.tolist()
        assert mt.unique(mt.tensor(array, backend=backend)).tolist() == torch.unique(torch.tensor(array)).tolist()


def test_search_errors(backend: str) -> None:
    x = mt.tensor(A, backend=backend)
    with pytest.raises(ShapeError, match="sorted_sequence \\(2, 5\\) and values \\(3, 3\\) must have the same leading dims"):
        mt.searchsorted(mt.tensor(SEQ, backend=backend), mt.zeros(3, 3, backend=backend))
    with pytest.raises(ValueError, match="side and right can't be set to opposites"):
        mt.searchsorted(x, x, side="left", right=True)
    with pytest.raises(IndexOutOfRangeError, match="k=5 is out of range \\[1, 4\\]"):
        x.kthvalue(5)
    with pytest.raises(ValueError, match="q values must be in the range \\[0, 1\\], got \\[1.5\\]"):
        x.quantile(1.5)
    with pytest.raises(DTypeError, match="quantile\\(\\) input tensor must be either float or double dtype, got int64"):
        mt.quantile(mt.tensor(INTS, backend=backend), 0.5)
    with pytest.raises(EmptyReductionError, match="non-empty"):
        mt.quantile(mt.zeros(0, backend=backend), 0.5)
    with pytest.raises(ValueError, match="interpolation must be one of"):
        x.quantile(0.5, interpolation="cubic")
    with pytest.raises(IndexOutOfRangeError, match="bincount\\(\\) only supports non-negative inputs, got a value of -2"):
        mt.bincount(mt.tensor([1, -2], backend=backend))
    with pytest.raises(DTypeError, match="bincount"):
        mt.bincount(x[0])
    with pytest.raises(NotImplementedError, match="dim is not supported"):
        x.unique(dim=0)


# --- covariance and building ---

BUILD = [
    case(lambda L, a: (L.cov(a), a.t().cov(correction=0), L.corrcoef(a), a.t().corrcoef()), A),
    case(lambda L, a: (L.cov(a[0]), L.corrcoef(a[1])), A),
    case(lambda L, a: L.cov(a), np.array([[1, 4, 2], [0, 3, 3]])),
    case(lambda L, a, f, w: (L.cov(a, fweights=f), L.cov(a, aweights=w), L.cov(a, fweights=f, aweights=w, correction=2)),
         A, np.array([1, 3, 0, 2]), np.array([0.5, 1.0, 2.0, 0.25], np.float32)),
    case(lambda L, a: L.cov(a, correction=4), A, grad=False),
    case(lambda L, a: L.cov(a), E.T.copy()),
    case(lambda L, a, b, c: (L.atleast_1d(c), L.atleast_1d(a, b), L.atleast_2d(c, b, a), L.atleast_3d(c), L.atleast_3d([b, a]),
                             L.atleast_3d(a.t())), A, A[0], np.array(2.0, np.float32)),
    case(lambda L, a, b: (L.dstack([a, a * 2]), L.dstack((b, b)), L.column_stack([a.t(), b])), A, A[1]),
    case(lambda L, a, b: L.column_stack([a, b]), np.zeros((0, 2), np.float32), np.zeros(0, np.float32)),
    case(lambda L, a: (L.diag_embed(a), a.diag_embed(1), L.diag_embed(a, -2, 0, 2), L.diag_embed(a.t(), 0, -1, 0)), A),
    case(lambda L, a: (L.diag_embed(a), L.diag_embed(a, 1)), INTS[:3]),
    case(lambda L, a: L.diag_embed(a, -1), E),
    # torch.vander's own backward fails (an in-place cumprod), so only its values are compared
    case(lambda L, a: (L.vander(a), L.vander(a, 2), L.vander(a, N=4, increasing=True), L.vander(a, 0)), A[0], grad=False),
    case(lambda L, a: L.vander(a) if L is mt else torch.stack([a**3, a**2, a, torch.ones_like(a)], 1), A[0]),  # its gradient
    case(lambda L, a: (L.vander(a), L.vander(a > 1, 3)), INTS[:4]),
]

INDEX_WRITES = [
    case(lambda L, a: (L.index_fill(a, 1, index(L, a, [0, 3, 0]), -2.5), a.index_fill(0, index(L, a, [-1]), 7),
                       a.t().index_fill(0, index(L, a, []), 1.0)), A),
    case(lambda L, a, v: (L.index_fill(a, 1, index(L, a, [2]), v[0, 0]), a.index_fill(-1, index(L, a, [1, 0]), v.sum())),
         A, np.array([[1.5]], np.float32)),
    case(lambda L, a: L.index_fill(a, 0, index(L, a, [1]), 9), INTS.reshape(2, 3)),
    case(lambda L, a, s: (L.index_copy(a, 1, index(L, a, [3, 0]), s), a.t().index_copy(0, index(L, a, [1, 2]), s.t())), A, A[:, 1:3] * 3),
    case(lambda L, a, s: L.index_copy(a, 0, index(L, a, [1]), s), E.T.copy(), np.zeros((1, 0), np.float32)),
    case(lambda L, a, s: (a.clone().index_fill_(1, index(L, a, [1]), 0.5), (a * 1).index_copy_(0, index(L, a, [1, 0]), s)),
         A, A[::-1].copy()),
]


def test_build(backend: str) -> None:
    run(backend, BUILD)


def test_index_writes(backend: str) -> None:
    run(backend, INDEX_WRITES)


def test_build_and_index_write_errors(backend: str) -> None:
    x = mt.tensor(A, backend=backend)
    with pytest.raises(ShapeError, match="two or fewer dimensions"):
        mt.cov(mt.zeros(1, 2, 3, backend=backend))
    with pytest.raises(DTypeError, match="fweights to have integral dtype"):
        mt.cov(x, fweights=x[0])
    with pytest.raises(ShapeError, match="diagonal dimensions cannot be identical"):
        mt.diag_embed(x, 0, 1, -2)
    with pytest.raises(ShapeError, match="one-dimensional"):
        mt.vander(x)
    with pytest.raises(IndexOutOfRangeError, match="index_fill\\(\\): index 4 is out of range for dim 1 of size 4"):
        x.index_fill(1, mt.tensor([4], backend=backend), 0.0)
    with pytest.raises(IndexOutOfRangeError, match="index_copy\\(\\): index -1 is out of range"):
        x.index_copy(0, mt.tensor([-1], backend=backend), x[:1])
    with pytest.raises(ShapeError, match="index_copy\\(\\): source \\(2, 4\\) must be \\(1, 4\\)"):
        x.index_copy(0, mt.tensor([1], backend=backend), x)
    with pytest.raises(DTypeError, match="index must be an int64 or int32 tensor"):
        x.index_fill(0, mt.tensor([0.0], backend=backend), 1.0)
