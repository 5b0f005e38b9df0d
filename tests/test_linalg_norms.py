"""Norms, small products and the linalg extras (linalg_norms.py, linalg_extra.py): ``linalg.vector_norm matrix_norm
norm vecdot cross diagonal vander solve_triangular inv_ex solve_ex cholesky_ex lu_factor_ex tensorinv tensorsolve
matrix_exp`` against torch (values, dtypes, shapes and gradients; every ord, dims and keepdim, dtype=, batches and
broadcasting, transposed input, float32 and float64, zero-size dims, the ``info`` of singular and indefinite input),
the errors and their messages, and the deliberate differences from torch.

The CUDA simulator runs each thread in Python, so its cases are few and tiny: one per function."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from conftest import BACKENDS, CPU_BACKENDS
from torch_oracle import Case, case, run

import minitensor as mt
from minitensor import DTypeError, EmptyReductionError, LinAlgError, ShapeError

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),  # nan and inf on singular input
    pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning"),
]

RNG = np.random.default_rng(11)
X = RNG.normal(size=(2, 3, 4))
Z = np.array([[0.0, 3.0, -4.0], [0.0, 0.0, 0.0], [1.0, -2.0, 2.0]])  # zeros (gradient 0 there), a zero row, ties
A3 = RNG.normal(size=(2, 3, 3))
TRI = RNG.normal(size=(2, 3, 3)) + 4 * np.eye(3)  # well-conditioned triangles, whichever is read
B3 = RNG.normal(size=(2, 3, 2))
SINGULAR = np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [1.0, 1.0]]])
INDEFINITE = np.array([[[4.0, 2.0], [2.0, 1.0]], [[4.0, 1.0], [1.0, 2.0]], [[-1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, np.nan]]])
EXP = np.stack([0.1 * A3[0], 3.0 * A3[1], 40.0 * np.eye(3) - 20.0 * A3[0] / 7])  # no, one and several squarings
F32 = {"rtol": 1e-4, "atol": 1e-5}
INF = math.inf


def spd(L: Any, x: Any) -> Any:
    """x x^T + I: symmetric positive-definite, differentiable in x."""
    return x @ x.mT + L.eye(x.shape[-1], dtype=x.dtype, device=x.device)


def vector_norms(L: Any, x: Any) -> tuple[Any, ...]:
    v = L.linalg.vector_norm
    return (v(x), v(x, 1, -1), v(x, 0, (0, 2)), v(x, 3.5, 1, True), v(x, -1, 2), v(x, -0.5, (0, 1)), v(x, INF, None, True),
            v(x, -INF, (-1, 0)), v(x, 0.5, ()), v(x[0, 0, 1], 3), v(x[0, 0, 1], INF, 0, True), v(x, ord=2, dim=[2, 0]))


def matrix_norms(L: Any, a: Any) -> tuple[Any, ...]:
    m = L.linalg.matrix_norm
    return (m(a), m(a, 1), m(a, -1, keepdim=True), m(a, INF), m(a, -INF, (0, 2)), m(a, "fro", (2, 0), True), m(a, 1, (2, 0)),
            m(a, INF, (-1, 0), keepdim=True), m(a, ord=-1, dim=(1, 0)))


def norms(L: Any, a: Any) -> tuple[Any, ...]:
    n = L.linalg.norm
    return (n(a), n(a, dim=(0, 1)), n(a, None, 2, True), n(a[0], 1), n(a[0, 0], 1), n(a[0], "fro"), n(a, INF, (1, 2)),
            n(a[0], -INF), n(a, 0, 1), n(a, -1, (2, 0)), n(a[0, 0], INF), n(a, 3, dim=[1]))


def small_products(L: Any, x: Any, y: Any) -> tuple[Any, ...]:
    """vecdot, cross and diagonal with broadcasting and dims; x (2, 3, 3), y (3, 3)."""
    la = L.linalg
    return (la.vecdot(x, y), la.vecdot(x, y[:, :1], dim=-2), la.vecdot(x.mT, y, dim=0), la.vecdot(x[0, 0], y[1]),
            la.cross(x, y[None]), la.cross(x[:1], x[1:], dim=1), la.cross(x.mT, y[:1].expand(3, 3)[None], dim=-2),
            la.diagonal(x), la.diagonal(x, offset=1), la.diagonal(x, offset=-1, dim1=0, dim2=2), la.diagonal(x.mT, dim1=-1, dim2=0))


def vanders(L: Any, x: Any) -> tuple[Any, ...]:
    la = L.linalg
    return la.vander(x), la.vander(x, N=2), la.vander(x[0], N=5), la.vander(x[0, 0], N=3), la.vander(x.mT)


def triangular(L: Any, a: Any, b: Any) -> tuple[Any, ...]:
    """Every flag; broadcast A and B; right-hand sides; transposed operands."""
    st = L.linalg.solve_triangular
    return (st(a, b, upper=True), st(a, b, upper=False), st(a, b, upper=True, unitriangular=True), st(a[0], b, upper=False),
            st(a, b[0], upper=False, unitriangular=True), st(a, b.mT, upper=True, left=False),
            st(a.mT, b.mT, upper=False, left=False, unitriangular=True), st(a.mT, b, upper=True), st(a[:1], b[1:, :, :1], upper=True))


def exes(L: Any, a: Any, b: Any) -> tuple[Any, ...]:
    """The _ex variants on invertible and positive-definite input: the values and gradients of the non-_ex ones."""
    la = L.linalg
    return (*la.inv_ex(a), *la.solve_ex(a, b), *la.solve_ex(a, b[..., 0]), *la.solve_ex(a[0], b.mT, left=False),
            *la.solve_ex(a, b.mT, left=False), *la.solve_ex(a[:1], b[0, :, 1]), *la.cholesky_ex(spd(L, a)),
            *la.cholesky_ex(spd(L, a.mT), upper=True))


def infos(L: Any, a: Any) -> tuple[Any, ...]:
    """The info of singular input ((4, 2, 2): singular, invertible, zero, a zero first column), A's batch shape."""
    la = L.linalg
    return (la.inv_ex(a).info, la.inv_ex(a[0]).info, la.inv_ex(a.mT).info, la.solve_ex(a, a[:, 0]).info,
            la.solve_ex(a, a[None], left=False).info, la.solve_ex(a[3], a).info, *la.lu_factor_ex(a), *la.lu_factor_ex(a.mT),
            *la.lu_factor_ex(a[:, :1]), la.lu_factor_ex(a.mT[:, :, :1]).info, la.inv_ex(a[1:2]).inverse)


def tensor_inverses(L: Any, a: Any, b: Any) -> tuple[Any, ...]:
    """tensorinv with ind 1 and 2, tensorsolve with and without dims; a (2, 3, 6), b (2, 3)."""
    la = L.linalg
    return (la.tensorinv(a.reshape(6, 2, 3), 1), la.tensorinv(a.reshape(2, 3, 3, 2), ind=2), la.tensorinv(a[0, :2, :2], ind=1),
            la.tensorsolve(a, b), la.tensorsolve(a.reshape(3, 2, 6).permute(2, 0, 1), b.mT, dims=(0,)),
            la.tensorsolve(a.reshape(6, 2, 3), b.reshape(6)))


def exponentials(L: Any, a: Any) -> tuple[Any, ...]:
    return L.linalg.matrix_exp(a), L.matrix_exp(a[0].mT), a[1].matrix_exp(), L.linalg.matrix_exp(a[:, :1, :1])


CPU_CASES = [
    case(vector_norms, X),
    case(vector_norms, X.astype(np.float32), **F32),
    case(lambda L, x: vector_norms(L, x.mT), X),  # transposed
    case(lambda L, z: tuple(L.linalg.vector_norm(z, p, d) for p in (2, 1, 0.5, 3, -1, -2, 0, INF, -INF) for d in (None, 1)), Z),
    case(lambda L, x: (L.linalg.vector_norm(x, 2, dtype=L.float64), L.linalg.vector_norm(x, INF, 1, dtype=L.float64),
                       L.linalg.vector_norm(x, 0, 2, True, dtype=L.float32)), X.astype(np.float32), **F32),
    case(lambda L, x: tuple(L.linalg.vector_norm(x, p, 1) for p in (2, 1, 0, INF, -INF, -1)) + (L.linalg.vector_norm(x, 0),
                                                                                                 L.linalg.vector_norm(x, 2, 0)),
         np.zeros((0, 3))),
    case(matrix_norms, X),
    case(lambda L, x: (L.linalg.matrix_norm(x, "nuc"), L.linalg.matrix_norm(x, 2, (0, 2), keepdim=True),
                       L.linalg.matrix_norm(x, -2, (2, 1)), L.linalg.norm(x[0], "nuc"), L.linalg.norm(x, 2, (0, 1), True),
                       L.linalg.matrix_norm(x, 2.0, dtype=L.float64)), X),
    case(matrix_norms, X.astype(np.float32), **F32),
    case(lambda L, x: matrix_norms(L, x.permute(1, 2, 0)), X),
    case(lambda L, z: tuple(L.linalg.matrix_norm(z, p) for p in ("fro", 1, -1, INF, -INF)), Z),
    case(lambda L, x: (L.linalg.matrix_norm(x, 1, dtype=L.float64), L.linalg.matrix_norm(x, dtype=L.float64, keepdim=True)),
         X.astype(np.float32), **F32),
    case(lambda L, x: (L.linalg.matrix_norm(x, 1), L.linalg.matrix_norm(x, INF), L.linalg.matrix_norm(x, "fro"),
                       L.linalg.matrix_norm(x.mT, 1, keepdim=True), L.linalg.matrix_norm(x, -INF)), np.zeros((2, 3, 0))),
    case(norms, X),
    case(norms, X.astype(np.float32), **F32),
    case(small_products, A3, A3[0]),
    case(small_products, A3.astype(np.float32), A3[0].astype(np.float32), **F32),
    case(lambda L, x, y: (L.linalg.vecdot(x, y), L.linalg.cross(x, y), L.linalg.diagonal(x)), np.zeros((0, 3)), np.ones((1, 3))),
    case(lambda L, x, y: (L.linalg.cross(x, y), L.linalg.diagonal(x)), np.arange(6).reshape(2, 3), np.arange(3).reshape(1, 3)),
    case(vanders, X[0]),
    case(vanders, X[0].astype(np.float32), **F32),
    case(lambda L, x: (L.linalg.vander(x), L.linalg.vander(x[None], N=4)), np.array([0.0, 2.0, -1.5, 0.0])),  # zeros
    case(lambda L, x: (L.linalg.vander(x), L.linalg.vander(x.int(), N=3)), np.arange(-2, 2, dtype=np.int64)),
    case(lambda L, x: (L.linalg.vander(x, N=3), L.linalg.vander(x.reshape(2, 0, 2), N=2)), np.zeros((0,))),
    case(triangular, TRI, B3),
    case(triangular, TRI.astype(np.float32), B3.astype(np.float32), **F32),
    case(lambda L, a, b: (L.linalg.solve_triangular(a, b, upper=True), L.linalg.solve_triangular(a.float(), b, upper=False)),
         TRI, B3.astype(np.float32), **F32),  # B is cast to A's dtype
    case(lambda L, a, b: (L.linalg.solve_triangular(a, b[..., :0], upper=True), L.linalg.solve_triangular(a[:0], b[:0], upper=False),
                          L.linalg.solve_triangular(a[:, :0, :0], b[:, :0], upper=True, left=True)), TRI, B3),
    case(exes, A3, B3),
    case(exes, A3.astype(np.float32), B3.astype(np.float32), **F32),
    case(infos, SINGULAR, grad=False),
    case(lambda L, a: (L.linalg.cholesky_ex(a).info, L.linalg.cholesky_ex(a, upper=True).info, L.linalg.cholesky_ex(a[1:2])),
         INDEFINITE, grad=False),
    case(lambda L, a: (*L.linalg.inv_ex(a), *L.linalg.cholesky_ex(a), *L.linalg.lu_factor_ex(a.detach())), np.zeros((0, 2, 2))),
    case(lambda L, a: (*L.linalg.inv_ex(a), *L.linalg.solve_ex(a, a), *L.linalg.lu_factor_ex(a.detach())), np.zeros((2, 0, 0))),
    case(tensor_inverses, RNG.normal(size=(2, 3, 6)), RNG.normal(size=(2, 3))),
    case(tensor_inverses, RNG.normal(size=(2, 3, 6)).astype(np.float32), RNG.normal(size=(2, 3)).astype(np.float32), **F32),
    case(exponentials, EXP, rtol=1e-9, atol=1e-9),
    case(exponentials, EXP[:2].astype(np.float32), **F32),
    case(lambda L, a: (L.linalg.matrix_exp(a.mT), L.linalg.matrix_exp(a[:, :0, :0]), L.linalg.matrix_exp(a[:0])), EXP[:2]),
    case(lambda L, a: L.linalg.matrix_exp(a), np.array([[0.0, 1.0], [-1.0, 0.0]]) * 9.0, rtol=1e-9, atol=1e-9),  # a rotation
]

CUDA_CASES = [
    case(lambda L, x: (L.linalg.vector_norm(x, 3, 1), L.linalg.matrix_norm(x, 1), L.linalg.norm(x, INF)), X[0, :2, :2]),
    case(lambda L, x: (L.linalg.vecdot(x, x[:1]), L.linalg.cross(x, x[:1].flip(1)), L.linalg.diagonal(x, offset=1),
                       L.linalg.vander(x[0], N=3)), A3[0, :2].astype(np.float32), **F32),
    case(lambda L, a, b: (L.linalg.solve_triangular(a, b, upper=True), *L.linalg.solve_ex(a, b, left=False)), TRI[0, :2, :2],
         B3[0, :2]),
    case(lambda L, a: (*L.linalg.inv_ex(a), *L.linalg.cholesky_ex(spd(L, a)), L.linalg.tensorinv(a, 1),
                       L.linalg.tensorsolve(a, a[0])), A3[0, :2, :2]),
    case(lambda L, a: (L.linalg.lu_factor_ex(a).info, L.linalg.matrix_exp(a.detach() * 3)), SINGULAR[2:], grad=False),
]


@pytest.mark.parametrize("backend, index", [(b, i) for b in CPU_BACKENDS for i in range(len(CPU_CASES))] +
                         [("cuda", i) for i in range(len(CUDA_CASES)) if "cuda" in BACKENDS], ids=str)
def test_against_torch(backend: str, index: int) -> None:
    cases: list[Case] = CUDA_CASES if backend == "cuda" else CPU_CASES
    run(backend, cases[index : index + 1])


# --- errors ---


def raises(error: type[BaseException], match: str, fn: Any, *args: Any, **kwargs: Any) -> None:
    with pytest.raises(error, match=match):
        fn(*args, **kwargs)


def test_norm_errors() -> None:
    la: Any = mt.linalg
    x, ints = mt.tensor(X), mt.tensor(np.arange(6).reshape(2, 3))
    raises(DTypeError, "^linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long", la.vector_norm, ints)
    raises(DTypeError, "linalg.vector_norm: .* Got Bool", la.vector_norm, ints > 2, dtype=mt.float32)
    raises(DTypeError, "^linalg.vector_norm: dtype should be floating point or complex, but got Long$", la.vector_norm, x,
           dtype=mt.int64)
    raises(DTypeError, "the dtype of the input \\(Double\\) should be convertible without narrowing to the specified dtype "
                       "\\(Float\\)", la.vector_norm, x, dtype=mt.float32)
    raises(TypeError, "argument 'ord' must be Number, not str", la.vector_norm, x, "fro")
    raises(ValueError, "Expected a non-complex scalar as the order of norm", la.vector_norm, x, 2j)
    empty = mt.zeros(0, 3)
    raises(EmptyReductionError, "^linalg.vector_norm cannot compute the inf norm on an empty tensor because the operation does "
                                "not have an identity", la.vector_norm, empty, INF)
    raises(IndexError, "cannot compute the -1.0 norm on the dimension 0 because this dimension is empty", la.vector_norm, empty,
           -1.0, (1, 0))
    raises(EmptyReductionError, "-inf norm on the dimension 0", la.vector_norm, empty, -INF, 0)
    raises(ShapeError, "names a dim more than once", la.vector_norm, x, 2, (0, 0))
    raises(IndexError, "dim 3 is out of range", la.vector_norm, x, 2, 3)
    raises(TypeError, "^linalg.vector_norm\\(\\): argument 'x' \\(position 1\\) must be Tensor, not NoneType$", la.vector_norm, None)

    raises(DTypeError, "^linalg.matrix_norm: Expected a floating point or complex tensor as input. Got Long", la.matrix_norm, ints)
    raises(DTypeError, "^linalg.matrix_norm: dtype should be floating point or complex, but got Int$", la.matrix_norm, x,
           dtype=mt.int32)
    raises(ShapeError, "^linalg.matrix_norm: The input tensor A must have at least 2 dimensions", la.matrix_norm, x[0, 0])
    raises(ShapeError, "^linalg.matrix_norm: dims must be different. Got \\(0, 0\\)", la.matrix_norm, x, dim=(0, -3))
    raises(ShapeError, "^linalg.matrix_norm: dim must be a 2-tuple. Got 0", la.matrix_norm, x, dim=(0,))
    raises(TypeError, "argument 'dim' must be tuple of ints, not int", la.matrix_norm, x, dim=0)
    raises(IndexError, "dim 3 is out of range", la.matrix_norm, x, dim=(0, 3))
    for order in (3, 2.5, 0, "abc", "inf"):
        raises(ValueError, f"^linalg.matrix_norm: Order {order} not supported.$", la.matrix_norm, x, order)
    raises(IndexError, "amin\\(\\): cannot reduce dim 1 of size 0", la.matrix_norm, mt.zeros(2, 0, 3), -INF)

    raises(ShapeError, "^linalg.norm: If dim is specified, it must be of length 1 or 2. Got \\[0, 1, 2\\]", la.norm, x, dim=(0, 1, 2))
    raises(ShapeError, "length 1 or 2. Got \\[\\]", la.norm, x, 1, ())
    raises(ShapeError, "^linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D.", la.norm, x, 2)
    raises(ShapeError, "Got 0D", la.norm, x[0, 0, 0], 1)
    raises(ShapeError, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions", la.norm, x[0, 0], "fro")
    raises(ShapeError, "linalg.matrix_norm: dim must be a 2-tuple. Got 1", la.norm, x, "fro", 1)
    raises(DTypeError, "linalg.vector_norm: .* Got Long", la.norm, ints)


def test_product_errors() -> None:
    la: Any = mt.linalg
    x, ints = mt.tensor(A3), mt.tensor(np.arange(6).reshape(2, 3))
    raises(DTypeError, "^linalg.vecdot: Expected a floating point or complex tensor as input. Got Long", la.vecdot, ints, ints)
    raises(DTypeError, "linalg.vecdot: .* Got Int", la.vecdot, x[0], ints.int())
    raises(ShapeError, "shapes \\(2, 3, 3\\) and \\(2,\\) cannot be broadcast", la.vecdot, x, mt.ones(2))
    raises(TypeError, "^linalg.vecdot\\(\\): argument 'y' \\(position 2\\) must be Tensor, not list", la.vecdot, x, [1.0])
    raises(ShapeError, "^linalg.cross: inputs must have the same number of dimensions.", la.cross, x, x[0, 0])
    raises(ShapeError, "^linalg.cross: inputs dimension -1 must have length 3. Got 3 and 1", la.cross, x, x[..., :1])
    raises(ShapeError, "^linalg.cross: inputs dimension 0 must have length 3. Got 2 and 2", la.cross, x, x, dim=0)
    raises(ShapeError, "cannot be broadcast", la.cross, x, mt.ones(4, 3, 3, dtype=mt.float64))
    raises(DTypeError, "\"cross\" not implemented for 'Bool'", la.cross, ints > 1, ints > 1)
    raises(IndexError, "out of range", la.diagonal, x[0, 0])
    raises(DTypeError, "^linalg.vander supports floating point, complex, and integer tensors, but got Bool", la.vander, ints > 1)
    raises(ValueError, "N must be greater than 1, got N=1", la.vander, x[0, 0], N=1)
    raises(ValueError, "N must be greater than 1, got N=1", la.vander, x[0, 0, 0])
    raises(ValueError, "N must be greater than 1, got N=0", la.vander, mt.zeros(0))
    raises(TypeError, "argument 'x' \\(position 1\\) must be Tensor, not list", la.vander, [1.0, 2.0])


def test_solver_errors() -> None:
    la: Any = mt.linalg
    a, ints = mt.tensor(TRI), mt.tensor(np.arange(4).reshape(2, 2))
    raises(TypeError, "upper", la.solve_triangular, a, a)
    raises(ShapeError, "^linalg.solve_triangular: The input tensor B must have at least 2 dimensions", la.solve_triangular, a,
           a[0, 0], upper=True)
    raises(ShapeError, "^linalg.solve_triangular: The input tensor A must have at least 2 dimensions", la.solve_triangular,
           a[0, 0], a, upper=True)
    raises(ShapeError, "^linalg.solve_triangular: A must be batches of square matrices, but they are 2 by 3 matrices",
           la.solve_triangular, a[:, :2], a, upper=True)
    raises(ShapeError, "Incompatible shapes of A and B for the equation AX = B \\(3x3 and 2x3\\)", la.solve_triangular, a,
           a[:, :2], upper=True)
    raises(ShapeError, "Incompatible shapes of A and B for the equation XA = B \\(3x3 and 3x2\\)", la.solve_triangular, a,
           a[:, :, :2], upper=True, left=False)
    raises(ShapeError, "batch dims of A \\(2, 3, 3\\) and B \\(3, 3, 3\\) do not broadcast", la.solve_triangular, a,
           mt.ones(3, 3, 3, dtype=mt.float64), upper=True)
    raises(DTypeError, "^linalg.solve_triangular: Expected a floating point or complex tensor as input. Got Long",
           la.solve_triangular, ints, ints, upper=False)
    raises(TypeError, "argument 'B' \\(position 2\\) must be Tensor, not NoneType", la.solve_triangular, a, None, upper=True)

    singular = mt.tensor(SINGULAR)
    raises(LinAlgError, "^linalg.inv_ex: \\(Batch element 0\\): The diagonal element 2 is zero, the inversion could not be "
                        "completed because the input matrix is singular.$", la.inv_ex, singular, check_errors=True)
    raises(LinAlgError, "^linalg.inv_ex: The diagonal element 1 is zero", la.inv_ex, singular[2], check_errors=True)
    raises(LinAlgError, "^torch.linalg.solve_ex: \\(Batch element 1\\): The solver failed because the input matrix is singular.$",
           la.solve_ex, singular[1:], singular[0], check_errors=True)
    raises(LinAlgError, "^linalg.cholesky_ex: \\(Batch element 0\\): The factorization could not be completed because the "
                        "input is not positive-definite \\(the leading minor of order 2 is not positive-definite\\).$",
           la.cholesky_ex, mt.tensor(INDEFINITE), check_errors=True)
    raises(LinAlgError, "^torch.linalg.lu_factor_ex: \\(Batch element 1\\): U\\[1,1\\] is zero and using it on lu_solve would "
                        "result in a division by zero.", la.lu_factor_ex, singular[1:], check_errors=True)
    raises(LinAlgError, "^torch.linalg.lu_factor_ex: U\\[2,2\\] is zero", la.lu_factor_ex, singular[0], check_errors=True)
    for fn in (la.inv_ex, la.cholesky_ex, la.lu_factor_ex):
        assert fn(mt.zeros(2, 0, 0), check_errors=True).info.tolist() == [0, 0]
        raises(DTypeError, "Expected a floating point or complex tensor as input. Got Long", fn, ints)
        assert fn(singular[1], check_errors=True).info.item() == 0  # no error on good input
    raises(DTypeError, "^linalg.solve: Expected a floating point or complex tensor as input. Got Long", la.solve_ex, ints, ints)
    raises(ShapeError, "^linalg.solve: Incompatible shapes of A and B for the equation AX = B \\(2x2 and 3x1\\)", la.solve_ex,
           singular, mt.ones(3))
    raises(ShapeError, "^linalg.solve: Incompatible shapes of A and B for the equation XA = B \\(2x2 and 2x1\\)", la.solve_ex,
           singular, mt.ones(2), left=False)
    raises(ShapeError, "Vector broadcasting of the left hand side is not supported for left=False", la.solve_ex, singular[:1, :1, 0],
           mt.ones(1), left=False)
    raises(ShapeError, "the batch dims of A \\(4, 2, 2\\) and B \\(3, 2, 1\\) do not broadcast", la.solve_ex, singular,
           mt.ones(3, 2, 1))
    raises(ShapeError, "^linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices", la.inv_ex, mt.ones(2, 3))

    t = mt.tensor(RNG.normal(size=(4, 6, 8, 3)))
    raises(ValueError, "Expected a strictly positive integer for 'ind', but got 0", la.tensorinv, t, ind=0)
    raises(ShapeError, "ind=5 is more than the number of dims", la.tensorinv, t, ind=5)
    raises(ShapeError, "prod\\(self.shape\\[ind:\\]\\) == prod\\(self.shape\\[:ind\\]\\), but got 144 != 4", la.tensorinv, t, 1)
    raises(LinAlgError, "linalg.inv: The diagonal element 1 is zero", la.tensorinv, mt.zeros(2, 2, 4), ind=2)
    raises(DTypeError, "linalg.inv: .* Got Long", la.tensorinv, ints, ind=1)
    raises(ShapeError, "prod\\(self.shape\\[other.ndim:\\]\\) == prod\\(self.shape\\[:other.ndim\\]\\), but got 6 != 24",
           la.tensorsolve, t[:, :, :2].reshape(6, 4, 2, 3), mt.ones(6, 4, dtype=mt.float64))
    raises(ShapeError, "but got 18 != 6", la.tensorsolve, mt.ones(2, 3, 6), mt.ones(6))
    raises(ShapeError, "but got 6 != 4", la.tensorsolve, mt.ones(4, 6), mt.ones(4))
    raises(ShapeError, "A of shape \\(4, 6\\) has 24 elements, so it is not a 6 x 6 matrix", la.tensorsolve, mt.ones(4, 6),
           mt.ones(6))
    raises(TypeError, "argument 'dims' must be tuple of ints, not int", la.tensorsolve, mt.ones(2, 3, 6), mt.ones(2, 3), dims=0)
    raises(LinAlgError, "^torch.linalg.solve: The solver failed", la.tensorsolve, mt.zeros(2, 3, 6), mt.ones(2, 3))

    for fn in (la.matrix_exp, mt.matrix_exp):
        raises(DTypeError, "^linalg.matrix_exp: Expected a floating point or complex tensor as input. Got Long", fn, ints)
        raises(ShapeError, "^linalg.matrix_exp: The input tensor A must have at least 2 dimensions", fn, mt.ones(2))
        raises(ShapeError, "^linalg.matrix_exp: A must be batches of square matrices, but they are 2 by 3 matrices", fn, mt.ones(2, 3))
    raises(TypeError, "^matrix_exp\\(\\): argument 'A' \\(position 1\\) must be Tensor, not NoneType", mt.matrix_exp, None)


# --- deliberate differences and autograd details ---


def test_differences_and_autograd() -> None:
    """Mixed float dtypes are promoted (torch rejects them in vecdot, cross and solve_ex); ord=0 norms are connected
    to the input with a zero gradient (as torch's); matrix_exp's nan and inf propagate; solve_ex factors A once."""
    la: Any = mt.linalg
    x32, x64 = mt.tensor(A3, dtype=mt.float32), mt.tensor(A3)
    assert la.vecdot(x32, x64).dtype == mt.float64 and la.cross(x32, x64).dtype == mt.float64
    result = la.solve_ex(x32, x64)
    assert result.result.dtype == mt.float64 and result.info.dtype == mt.int32
    np.testing.assert_allclose(result.result.to_numpy(), np.linalg.solve(A3.astype(np.float32), A3), rtol=1e-5, atol=1e-6)
    assert la.solve_triangular(x32, x64, upper=True).dtype == mt.float32  # torch's rule: B is cast to A's dtype

    leaf = mt.tensor(Z, requires_grad=True)
    count = la.vector_norm(leaf, 0)
    assert count.item() == 5 and count.requires_grad
    count.backward()
    assert leaf.grad is not None and not leaf.grad.to_numpy().any()
    with mt.no_grad():
        assert not la.vector_norm(leaf, 0).requires_grad

    bad = mt.tensor([[[math.nan, 0.0], [0.0, 1.0]], [[math.inf, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]])
    out = la.matrix_exp(bad).to_numpy()
    assert np.isnan(out[0]).all() and not np.isfinite(out[1]).all()
    np.testing.assert_allclose(out[2], np.diag([math.e, math.e]), rtol=1e-6)

    names = ["vector_norm", "matrix_norm", "norm", "vecdot", "cross", "diagonal", "vander", "solve_triangular", "inv_ex",
             "solve_ex", "cholesky_ex", "lu_factor_ex", "tensorinv", "tensorsolve", "matrix_exp", "multi_dot"]
    assert all(callable(getattr(la, name)) for name in names)
    assert type(la.inv_ex(x64)).__name__ == "InvExResult" and la.lu_factor_ex(x64)._fields == ("LU", "pivots", "info")
    assert la.cholesky_ex(x64)._fields == ("L", "info") and la.solve_ex(x64, x64)._fields == ("result", "info")
