"""The legacy solves of linalg_cholesky.py: ``cholesky_solve cholesky_inverse triangular_solve`` (functions and Tensor
methods) against torch on every backend: values, dtypes, shapes and gradients in every argument (the factor's unread
triangle included, whose gradient torch defines), upper/lower, transpose and unitriangular, broadcast batches,
transposed (non-contiguous) input, float32, empty matrices and batches, singular factors; the errors and their
messages.

The CUDA simulator runs each thread in Python, so its case is one and tiny (n = 2)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from conftest import BACKENDS, CPU_BACKENDS
from torch_oracle import Case, case, run

import minitensor as mt
from minitensor import DTypeError, LinAlgError, ShapeError

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),  # nan and inf on singular input
    pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:torch.triangular_solve is deprecated:UserWarning"),
]

RNG = np.random.default_rng(11)


def factor_array(shape: tuple[int, ...]) -> np.ndarray:
    """A well-conditioned triangular factor (*, n, n): lower triangle with a diagonal near 2, plus a nonzero upper
    triangle that the solves must not read (its gradient is still torch's)."""
    n = shape[-1]
    lower = np.tril(RNG.normal(size=shape), -1) * 0.5 + np.diag(RNG.uniform(1.5, 2.5, n))
    return lower + np.triu(RNG.normal(size=shape), 1) * 3.0


L3 = factor_array((2, 3, 3))
B3 = RNG.normal(size=(2, 3, 2))
B_WIDE = RNG.normal(size=(4, 1, 3, 2))  # batch dims (4, 1) broadcast against L3's (2,)
L2 = factor_array((2, 2))
F32 = {"rtol": 1e-4, "atol": 1e-5}


def cholesky_solves(L: Any, b: Any, f: Any) -> tuple[Any, ...]:
    return (L.cholesky_solve(b, f), L.cholesky_solve(b, f, upper=True), b.cholesky_solve(f, True),
            L.cholesky_solve(b, f.mT, True), L.cholesky_solve(input=b.mT.mT, input2=f, upper=False))


def triangular_solves(L: Any, b: Any, a: Any) -> tuple[Any, ...]:
    """Every (upper, transpose, unitriangular), each with its copy of A."""
    return tuple(L.triangular_solve(b, a, *flags) for flags in itertools.product((True, False), repeat=3))


def spd(L: Any, x: Any) -> Any:
    """x x^T + I: symmetric positive-definite, differentiable in x."""
    return x @ x.mT + L.eye(x.shape[-1], dtype=x.dtype, device=x.device)


CPU_CASES: list[Case] = [
    case(cholesky_solves, B3, L3),
    case(cholesky_solves, B_WIDE, L3),  # broadcast batches: the gradients sum back to each shape
    case(lambda L, b, f: (L.cholesky_solve(b, f), L.cholesky_solve(b[0], f, True)), B3.astype(np.float32),
         L3.astype(np.float32), **F32),
    case(lambda L, b, f: (L.cholesky_solve(b[..., :0], f), L.cholesky_solve(b[:0], f[:0]), L.cholesky_solve(b[:, :0], f[:, :0, :0])),
         B3, L3),  # no columns, an empty batch, 0 x 0 factors
    case(lambda L, f: (L.cholesky_inverse(f), L.cholesky_inverse(f, True), f.cholesky_inverse(), f.mT.cholesky_inverse(upper=True)),
         L3),
    case(lambda L, f: L.cholesky_inverse(f, upper=True), factor_array((2, 2, 3, 3)).astype(np.float32), **F32),
    case(lambda L, f: (L.cholesky_inverse(f[:0]), L.cholesky_inverse(f[:, :0, :0])), L3),
    case(triangular_solves, B3, L3),
    case(triangular_solves, B_WIDE, L3),
    case(lambda L, b, a: (b.triangular_solve(a), b.triangular_solve(A=a.mT, upper=False, transpose=True)), B3[0], L3[0]),
    case(lambda L, b, a: L.triangular_solve(b, a, False, True), B3.astype(np.float32), L3.astype(np.float32), **F32),
    case(lambda L, b, a: (L.triangular_solve(b[..., :0], a), L.triangular_solve(b[:0], a[:0]),
                          L.triangular_solve(b[:, :0], a[:, :0, :0])), B3, L3),
    # the intended use: a factor from linalg.cholesky, gradients through both to x and to b
    case(lambda L, x, b: (L.cholesky_solve(b, L.linalg.cholesky(spd(L, x))), L.cholesky_inverse(L.linalg.cholesky(spd(L, x))),
                          L.cholesky_solve(b, L.linalg.cholesky(spd(L, x), upper=True), True)),
         RNG.normal(size=(2, 3, 3)), B3),
    # singular factors: inf and nan where torch has them (b without zeros: see the README for 0 / 0)
    case(lambda L, b, a: (L.cholesky_solve(b, a), L.triangular_solve(b, a).solution, L.triangular_solve(b, a, False).solution),
         np.ones((3, 2)), np.zeros((3, 3)), grad=False),
]

CUDA_CASES: list[Case] = [
    case(lambda L, b, f: (L.cholesky_solve(b, f), L.cholesky_inverse(f, True), *L.triangular_solve(b, f, False, True)),
         B3[0, :2], L2),
]


@pytest.mark.parametrize("backend, index", [(b, i) for b in CPU_BACKENDS for i in range(len(CPU_CASES))] +
                         [("cuda", i) for i in range(len(CUDA_CASES)) if "cuda" in BACKENDS], ids=str)
def test_against_torch(backend: str, index: int) -> None:
    cases = CUDA_CASES if backend == "cuda" else CPU_CASES
    run(backend, cases[index : index + 1])


def test_solutions(backend: str) -> None:
    """The results solve their systems: A X = B for A = L L^T, A inv = I, and the triangular systems; the inputs
    are not changed and the copy of A is a new tensor."""
    f, b = (L2, B3[0, :2]) if backend == "cuda" else (L3, B3)
    a = np.tril(f) @ np.swapaxes(np.tril(f), -1, -2)
    factor, rhs = mt.tensor(f, backend=backend), mt.tensor(b, backend=backend)
    np.testing.assert_allclose(a @ mt.cholesky_solve(rhs, factor).to_numpy(), b, atol=1e-12)
    np.testing.assert_allclose(a @ mt.cholesky_inverse(factor).to_numpy(), np.broadcast_to(np.eye(f.shape[-1]), a.shape), atol=1e-12)
    inverse = mt.cholesky_inverse(factor).to_numpy()
    assert (inverse == np.swapaxes(inverse, -1, -2)).all()  # exactly symmetric, as LAPACK's potri
    solution, copy = mt.triangular_solve(rhs, factor, upper=False, transpose=True)
    np.testing.assert_allclose(np.swapaxes(np.tril(f), -1, -2) @ solution.to_numpy(), b, atol=1e-12)
    assert copy.tolist() == factor.tolist() and copy is not factor and factor.tolist() == f.tolist() and rhs.tolist() == b.tolist()
    assert type(mt.triangular_solve(rhs, factor)).__name__ == "TriangularSolveResult"


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_errors(backend: str) -> None:
    def t(x: Any, dtype: Any = mt.float64) -> mt.Tensor:
        return mt.tensor(np.asarray(x), dtype=dtype, backend=backend)

    eye, b = t(np.eye(2)), t(np.ones((2, 1)))
    with pytest.raises(ShapeError, match="^cholesky_solve: b should have at least 2 dimensions, but has 1 dimensions instead"):
        mt.cholesky_solve(t([1.0, 2.0]), eye)
    with pytest.raises(ShapeError, match="^cholesky_solve: u should have at least 2 dimensions, but has 1 dimensions instead"):
        b.cholesky_solve(t([1.0, 2.0]))
    with pytest.raises(ShapeError, match="^torch.triangular_solve: Expected A to have at least 2 dimensions, but it has 0"):
        mt.triangular_solve(b, t(1.0))
    with pytest.raises(ShapeError, match="^torch.triangular_solve: Expected b to have at least 2 dimensions, but it has 1"):
        mt.triangular_solve(t([1.0, 2.0]), eye)
    with pytest.raises(DTypeError, match="^cholesky_solve: Expected b and A to have the same dtype, but found b of type "
                                         "Float and A of type Double instead."):
        mt.cholesky_solve(t(np.ones((2, 1)), mt.float32), eye)
    with pytest.raises(DTypeError, match="^triangular_solve: Expected a floating point or complex tensor as input. Got Long"):
        mt.triangular_solve(t(np.ones((2, 1)), mt.int64), t(np.eye(2), mt.int64))
    with pytest.raises(DTypeError, match="^cholesky_inverse: Expected a floating point or complex tensor as input. Got Int"):
        t(np.eye(2), mt.int32).cholesky_inverse()
    with pytest.raises(ShapeError, match="^cholesky_solve: A must be batches of square matrices, but they are 2 by 3 matrices"):
        mt.cholesky_solve(b, t(np.ones((2, 3))))
    with pytest.raises(ShapeError, match="^Incompatible matrix sizes for triangular_solve: each A matrix is 2 by 2 but each "
                                         "b matrix is 3 by 1"):
        mt.triangular_solve(t(np.ones((3, 1))), eye)
    with pytest.raises(ShapeError, match="the batch dims of A \\(4, 2, 2\\) and B \\(3, 2, 1\\) do not broadcast"):
        mt.cholesky_solve(t(np.ones((3, 2, 1))), eye.expand(4, 2, 2))
    with pytest.raises(ShapeError, match="^cholesky_inverse: The input tensor A must have at least 2 dimensions"):
        mt.cholesky_inverse(t([1.0]))
    with pytest.raises(ShapeError, match="^cholesky_inverse: A must be batches of square matrices, but they are 3 by 2"):
        mt.cholesky_inverse(t(np.ones((3, 2))))
    with pytest.raises(TypeError, match="cholesky_solve\\(\\): argument 'input2' \\(position 2\\) must be Tensor, not int"):
        mt.cholesky_solve(b, 3)
    with pytest.raises(TypeError, match="triangular_solve\\(\\): argument 'A' \\(position 2\\) must be Tensor, not list"):
        b.triangular_solve([[1.0]])
    with pytest.raises(TypeError, match="cholesky_inverse\\(\\): argument 'input' \\(position 1\\) must be Tensor, not list"):
        mt.cholesky_inverse([[1.0]])
    singular = np.stack([np.eye(3), np.diag([2.0, 0.0, 0.0])])
    for f in (singular, singular[1]):  # torch's message, "(Batch element 1): " for a batch
        with pytest.raises(RuntimeError) as theirs:
            torch.cholesky_inverse(torch.tensor(f))
        with pytest.raises(LinAlgError) as ours:
            mt.cholesky_inverse(t(f))
        assert str(ours.value) == str(theirs.value)
