"""Reducing scatters and embedding copies (scatter_reduce and scatter_reduce_, slice_scatter, select_scatter,
diagonal_scatter, narrow_copy), counting (mode, histc) and chained products and combinations (chain_matmul,
linalg.multi_dot, combinations) against torch, on every backend: values, dtypes, shapes and gradients, with ties,
integer dtypes, a zero-size dim and transposed input; and their errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from torch_oracle import case, index, run

import minitensor as mt
from minitensor import DTypeError, EmptyReductionError, IndexOutOfRangeError, ShapeError

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),  # the CUDA simulator's NumPy scalars
    pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated:UserWarning"),
]

nan = math.nan
REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
X = np.array([[1.0, 5.0, 2.0], [3.0, 3.0, 0.5]], np.float32)
S = np.array([[5.0, 1.0, 5.0, 2.0], [3.0, 4.0, 3.0, 3.0]], np.float32)  # ties among src and with X
SLOTS = [[1, 0, 1, 0], [0, 1, 0, 0]]
A = np.arange(12, dtype=np.float32).reshape(3, 4) - 4.5
RNG = np.random.default_rng(11)
DATA = RNG.normal(size=64).astype(np.float32)


def reduced(L: Any, x: Any, dim: int, rows: Any, s: Any, include_self: bool = True) -> tuple[Any, ...]:
    """x.scatter_reduce with every reduction."""
    return tuple(L.scatter_reduce(x, dim, index(L, x, rows), s, r, include_self=include_self) for r in REDUCTIONS)


# --- scatter_reduce ---

SCATTER_REDUCE = [
    case(lambda L, x, s: reduced(L, x, 1, SLOTS, s), X, S),
    case(lambda L, x, s: reduced(L, x, 1, SLOTS, s, False)[:3], X, S),
    # amax/amin without self: input never ties the result here (see test_scatter_reduce_ties_without_self)
    case(lambda L, x, s: (x.scatter_reduce(1, index(L, x, SLOTS), s, "amax", include_self=False),
                          (x + 20).scatter_reduce(1, index(L, x, SLOTS), -s, "amin", include_self=False)), X - 10, S),
    # transposed; index smaller than src and input (torch's backward fails when src is larger than index: values only,
    # then gradients with src cut to index's shape)
    case(lambda L, x, s: reduced(L, x.t(), 0, [[2, 0], [2, 2]], s.t()), X, S, grad=False),
    case(lambda L, x, s: reduced(L, x.t(), 0, [[2, 0], [2, 2]], s.t()[:2]), X, S),
    case(lambda L, x, s: reduced(L, x, -1, [[0, 0, 1, 1, 0]] * 2, s), np.array([[0.0, 2.0], [3.0, 0.0]], np.float32),
         np.array([[0.0, 4.0, 0.0, 5.0, 2.0], [1.5, 0.0, 2.0, 0.0, 0.0]], np.float32)),  # zeros: exact prod gradients
    case(lambda L, x, s: reduced(L, x, 0, np.zeros((0, 3)), s) + reduced(L, x, 1, np.zeros((2, 0)), s), X, S[:, :3].copy(),
         grad=False),
    case(lambda L, x, s: reduced(L, x, 1, np.zeros((2, 0)), s), X, np.zeros((2, 0), np.float32)),
    case(lambda L, x, s: tuple(L.scatter_reduce(x, 1, index(L, x, [[2, 0, 2, 1]]).expand(2, 4), s[:1].expand(2, 4), r)
                               for r in REDUCTIONS), X, S),  # broadcast (stride-0) index and src
    case(lambda L, x, s: reduced(L, x, 0, 0, s, False), np.array(2.5, np.float32), np.array(-1.5, np.float32)),
    case(lambda L, x, s: reduced(L, x, 1, SLOTS, s) + reduced(L, x, 1, SLOTS, s, False), X.astype(np.int64) - 2, S.astype(np.int64) * -3),
    case(lambda L, x, s: reduced(L, x, 0, [[0, 1], [1, 1], [0, 1]], s), X.T.astype(np.int32), S[:, :3].T.astype(np.int32)),
    case(lambda L, x, s: tuple(L.scatter_reduce(x, 0, index(L, x, [1, 1, 0]), s, r) for r in ("sum", "prod", "amax", "amin")),
         np.array([True, False]), np.array([True, False, False])),
    case(lambda L, x, s: (L.scatter_reduce(x, 0, index(L, x, [0, 2, 2]), s, "amax"), x.scatter_reduce(0, index(L, x, [0, 2, 2]),
                          s, "amin", include_self=False)), np.array([1.0, nan, 2.0], np.float32), np.array([nan, 3.0, 0.5], np.float32),
         grad=False),
    case(lambda L, x, s: ((x * 1).scatter_reduce_(1, index(L, x, SLOTS), s, "amax"), x.clone().scatter_reduce_(1, index(L, x, SLOTS), s,
                          "mean", include_self=False)), X, S),
    case(lambda L, x, s: L.scatter_reduce(x, 2, index(L, x, [[[0, 0], [1, 0]]] * 2), s, "prod"),
         RNG.normal(size=(2, 2, 3)), RNG.normal(size=(2, 2, 2))),
]


def test_scatter_reduce(backend: str) -> None:
    run(backend, SCATTER_REDUCE)


def test_scatter_reduce_ties_without_self(backend: str) -> None:
    """amax/amin with include_self=False split the gradient among the tied src entries only: an input value equal to
    the result is not sent any (PyTorch counts it in the split anyway and then drops its share)."""
    x = mt.tensor([[1.0, 5.0, 2.0]], backend=backend, requires_grad=True)
    s = mt.tensor([[5.0, 1.0, 5.0, 2.0]], backend=backend, requires_grad=True)
    out = x.scatter_reduce(1, mt.tensor([[1, 0, 1, 0]], backend=backend), s, "amax", include_self=False)
    assert out.tolist() == [[2.0, 5.0, 2.0]]
    (out * mt.tensor([[1.0, 2.0, 3.0]], backend=backend)).sum().backward()
    assert x.grad is not None and s.grad is not None
    assert x.grad.tolist() == [[0.0, 0.0, 3.0]] and s.grad.tolist() == [[1.0, 0.0, 1.0, 1.0]]


def test_scatter_reduce_errors(backend: str) -> None:
    x, s = mt.tensor(X, backend=backend), mt.tensor(S, backend=backend)
    i = mt.tensor(SLOTS, backend=backend)
    with pytest.raises(ValueError, match="reduce argument must be either sum, prod, mean, amax or amin, got 'max'"):
        x.scatter_reduce(1, i, s, "max")
    with pytest.raises(DTypeError, match="scatter_reduce: index must be an int64 or int32 tensor, got a float32 tensor"):
        x.scatter_reduce(1, i.float(), s, "sum")
    with pytest.raises(DTypeError, match="src dtype float64 differs from input dtype float32"):
        x.scatter_reduce(1, i, s.double(), "sum")
    with pytest.raises(IndexOutOfRangeError, match="index values range over \\[5, 6\\], out of range \\[0, 3\\)"):
        mt.scatter_reduce(x, 1, i + 5, s, "amax")
    with pytest.raises(ShapeError, match="index \\(2, 2\\) is larger than src \\(2, 1\\)"):
        x.scatter_reduce(1, i[:, :2], s[:, :1], "prod")
    with pytest.raises(ShapeError, match="need the same number of dims"):
        x.scatter_reduce(1, i[0], s, "mean")
    with pytest.raises(DTypeError, match="reduce='mean' is not supported for bool"):
        mt.tensor([True], backend=backend).scatter_reduce(0, mt.tensor([0], backend=backend), mt.tensor([True], backend=backend), "mean")
    with pytest.raises(TypeError, match="argument 'src' must be Tensor, not float"):
        x.scatter_reduce(1, i, 1.0, "sum")  # type: ignore[arg-type]


# --- embedding copies ---

EMBED = [
    case(lambda L, a, s: (L.slice_scatter(a, s, 1, 1, None, 2), a.slice_scatter(a[1:] * 2, 0, -2), L.slice_scatter(a, s[:, :0], 1, 7, 9),
                          L.slice_scatter(a.t(), s.t().contiguous(), 0, None, 3, 2)), A, A[:, :2] * 3),
    case(lambda L, a, s: (L.slice_scatter(a, s), L.slice_scatter(a, s[:1], end=1)), A, A[::-1].copy()),
    case(lambda L, a, s: (L.select_scatter(a, s[0], 0, -1), a.t().select_scatter(s[1, :3], 0, 2), L.select_scatter(a, s[:, 1], 1, 0)),
         A, A * 2),
    case(lambda L, a, s: (L.diagonal_scatter(a, s[:3]), a.diagonal_scatter(s[:2], -1), L.diagonal_scatter(a, s[:2], 1, 1, 0),
                          L.diagonal_scatter(a, s[:0], 4), a.t().diagonal_scatter(s[:3], 0, -1, -2)), A, A[1] * -1),
    case(lambda L, a, s: (L.slice_scatter(a, s.expand(2, 4), 0, 1), L.select_scatter(a, s[0, :1].expand(3), 1, 2),
                          L.diagonal_scatter(a, s[0, :1].expand(3), 1)), A, A[:1] + 10),  # broadcast (stride-0) src
    case(lambda L, a, s: L.diagonal_scatter(a, s, 0, 0, 2), RNG.normal(size=(2, 3, 2)), RNG.normal(size=(3, 2))),
    case(lambda L, a, s: (L.slice_scatter(a, s[:, 1:3], 1, 1, 3), L.select_scatter(a, s[1], 0, 1)),
         A.astype(np.int64), A.astype(np.int64) * 7),
    case(lambda L, a, s: L.slice_scatter(a, s, 1, 1, 3), A, A[:, :2].astype(np.float64)),  # src cast to input's dtype
    case(lambda L, a: (L.narrow_copy(a, 1, 1, 2), a.t().narrow_copy(0, 2, 2), L.narrow_copy(a, 0, 3, 0)), A),
    case(lambda L, a: a.t().narrow_copy(0, -2, 2), A, grad=False),  # torch's backward fails for a negative start
    case(lambda L, a: L.narrow_copy(a, 0, 0, 2), np.zeros((3, 0), np.float32)),
]


def test_embedding_copies(backend: str) -> None:
    run(backend, EMBED)


def test_narrow_copy_is_a_copy(backend: str) -> None:
    a = mt.tensor(A, backend=backend)
    b = a.narrow_copy(1, 0, 2)
    b.add_(100)
    assert a.tolist() == A.tolist() and b.is_contiguous()


def test_embedding_copy_errors(backend: str) -> None:
    a = mt.tensor(A, backend=backend)
    with pytest.raises(ShapeError, match="slice_scatter\\(\\): expected src to have a size equal to the slice of input \\(3, 4\\): "
                                         "src \\(3, 3\\), slice \\(3, 2\\)"):
        mt.slice_scatter(a, a[:, :3], 1, 0, 2)
    with pytest.raises(ValueError, match="slice step must be positive, got 0"):
        a.slice_scatter(a, step=0)
    with pytest.raises(IndexOutOfRangeError, match="select_scatter\\(\\): index 3 out of range for dim 0 of size 3"):
        a.select_scatter(a[0], 0, 3)
    with pytest.raises(ShapeError, match="diagonal_scatter\\(\\): expected src .* src \\(2,\\), diagonal \\(3,\\)"):
        a.diagonal_scatter(a[0, :2])
    with pytest.raises(ShapeError, match="diagonal dims cannot be identical"):
        mt.diagonal_scatter(a, a[0], 0, 1, -1)
    with pytest.raises(TypeError, match="argument 'src' must be Tensor, not list"):
        a.select_scatter([1.0, 2.0], 1, 0)  # type: ignore[arg-type]
    with pytest.raises(IndexOutOfRangeError, match="start 1 \\+ length 4 exceeds the size 4"):
        a.narrow_copy(1, 1, 4)


# --- counting values, chained products, combinations ---

COUNTING = [
    case(lambda L, a: (L.mode(a), L.mode(a, 0), a.t().mode(0, keepdim=True), L.mode(a[0, 0]), L.mode(a, -1, True)),
         np.array([[3.0, 1.0, 3.0, 1.0, 2.0], [5.0, 5.0, 4.0, 4.0, 4.0], [2.0, 7.0, 7.0, 2.0, 0.0]], np.float32)),
    case(lambda L, a: (L.mode(a), a.mode(0)), np.array([1, 2, 2, 1, 3, 1, 2])),
    case(lambda L, a: (L.mode(a, 1), L.mode(a, 0, keepdim=True)), RNG.integers(0, 3, (4, 6)).astype(np.int32)),
    case(lambda L, a: L.mode(a, 1), np.zeros((0, 3), np.float32)),
    case(lambda L, a: (L.histc(a), a.histc(7, -1, 1.5), L.histc(a, 5, 0.25, 0.25), L.histc(a[:0], 4), L.histc(a.reshape(8, 8).t(), 9)),
         DATA, grad=False),
    case(lambda L, a: (L.histc(a, 4, 0, 3), L.histc(a[:5], 3), L.histc(a[:5] * 0 + 2, 4)),
         np.array([1.0, 2.0, 1.0, 3.0, 0.0, nan], np.float64), grad=False),
    case(lambda L, a: L.histc(a, 10, 0, 1), np.linspace(0, 1, 11, dtype=np.float32), grad=False),  # every value on an edge
]

PRODUCTS = [
    case(lambda L, a, b, c: (L.chain_matmul(a, b, c), L.chain_matmul(a), L.chain_matmul(a.t(), a)), A, A.T.copy(), A[:, :2].copy()),
    case(lambda L, a, b, c: (L.linalg.multi_dot([a, b]), L.linalg.multi_dot([a[0], b, c]), L.linalg.multi_dot((a, b, c[:, 0])),
                             L.linalg.multi_dot([b[:, 0], b]), L.linalg.multi_dot([a[0], b, c, c.t(), a, b[:, 1]])),
         A, A.T.copy(), A[:, :2].copy()),
    case(lambda L, a, b: L.chain_matmul(a, b), A.astype(np.int64), A.T.astype(np.int64)),
    case(lambda L, a, b: L.linalg.multi_dot([a, b]), np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)),
    case(lambda L, a: (L.combinations(a), L.combinations(a, 3, True), L.combinations(a, 0), L.combinations(a, 5), L.combinations(a[:0]),
                       L.combinations(a[:3], with_replacement=True)), A[0]),
    case(lambda L, a: (L.combinations(a, 1), L.combinations(a, 2, True)), np.array([4, -1, 7])),
]


def test_counting(backend: str) -> None:
    run(backend, COUNTING)


def test_products_and_combinations(backend: str) -> None:
    run(backend, PRODUCTS)


def test_counting_and_product_errors(backend: str) -> None:
    a = mt.tensor(A, backend=backend)
    with pytest.raises(EmptyReductionError, match="mode\\(\\): cannot reduce dim 1 of size 0"):
        mt.mode(mt.zeros(2, 0, backend=backend))
    with pytest.raises(DTypeError, match="histc\\(\\): input must be a float tensor, got int64"):
        mt.histc(mt.tensor([1, 2], backend=backend))
    with pytest.raises(ValueError, match="bins must be a positive int, got 0"):
        a.histc(0)
    with pytest.raises(ValueError, match="max must be larger than min, got min=3.0, max=1.0"):
        a.histc(4, 3, 1)
    with pytest.raises(ValueError, match="range of \\[nan, nan\\] is not finite"):
        mt.histc(mt.tensor([1.0, nan], backend=backend))
    with pytest.raises(ValueError, match="expected one or more matrices"):
        mt.chain_matmul()
    with pytest.raises(ShapeError, match="chain_matmul\\(\\): matrix 0 has 1 dims \\(shape \\(4,\\)\\), expected 2"):
        mt.chain_matmul(a[0], a)
    with pytest.raises(ShapeError, match="multi_dot\\(\\): tensors 0 and 1 with shapes \\(3, 4\\) and \\(3, 4\\) cannot be multiplied"):
        mt.linalg.multi_dot([a, a])
    with pytest.raises(ValueError, match="expected at least 2 tensors but got 1"):
        mt.linalg.multi_dot([a])
    with pytest.raises(TypeError, match="expected Tensor as element 1 in argument 0, but got int"):
        mt.chain_matmul(a, 3)  # type: ignore[arg-type]
    with pytest.raises(ShapeError, match="combinations\\(\\): expected a 1-D tensor, got shape \\(3, 4\\)"):
        mt.combinations(a)
    with pytest.raises(ValueError, match="r must be non-negative, got -1"):
        mt.combinations(a[0], -1)
