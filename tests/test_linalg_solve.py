"""Determinants, inverses, solves and factorizations (linalg_solve.py, linalg_cholesky.py): ``linalg.det slogdet inv
solve cholesky lu_factor``, ``det slogdet logdet inverse cholesky renorm``, against torch on every backend (values,
dtypes, shapes and gradients; batches, transposed input, float32 and float64, 0 x 0 matrices and empty batches,
singular and indefinite input), gradients of det and solve against central differences, the errors and their
messages, and hypothesis properties over well-conditioned matrices (A inv(A) = I, the solve residual).

The CUDA simulator runs each thread in Python, so its cases are few and tiny (n <= 3, batch <= 2)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import BACKENDS, CPU_BACKENDS
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import central_difference
from torch_oracle import Case, case, run

import minitensor as mt
from minitensor import DTypeError, HigherOrderGradError, LinAlgError, ShapeError

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),  # nan and inf on singular input
    pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated:UserWarning"),
]

RNG = np.random.default_rng(7)
A3 = RNG.normal(size=(2, 3, 3))  # a batch of two general 3 x 3 matrices
B3 = RNG.normal(size=(2, 3, 2))
A4 = RNG.normal(size=(4, 4))
SINGULAR = np.array([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 1.0], [1.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]])
SIGNS = np.array([[[0.0, 1.0], [1.0, 0.0]], [[2.0, 1.0], [1.0, 2.0]]])  # det -1 (logdet nan, gradient 0) and 3
TIES = np.array([[1.0, 2.0, 3.0], [-1.0, 5.0, 2.0], [1.0, 0.0, 4.0]])  # equal |values| in the pivot columns
X2 = RNG.normal(size=(2, 2, 2))
F32 = {"rtol": 1e-4, "atol": 1e-5}


def spd(L: Any, x: Any) -> Any:
    """x x^T + I: symmetric positive-definite, differentiable in x."""
    return x @ x.mT + L.eye(x.shape[-1], dtype=x.dtype, device=x.device)


def spd_array(shape: tuple[int, ...]) -> np.ndarray:
    """A symmetric positive-definite (*, n, n) array."""
    x = RNG.normal(size=shape)
    return x @ np.swapaxes(x, -1, -2) + np.eye(shape[-1])


def determinants(L: Any, a: Any) -> tuple[Any, ...]:
    return (L.linalg.det(a), L.det(a), a.det(), *L.linalg.slogdet(a), *a.slogdet(), L.logdet(a), a.logdet())


def solves(L: Any, a: Any, b: Any) -> tuple[Any, ...]:
    """Matrix, batched-vector and 1-D right-hand sides, broadcast A, left=False."""
    return (L.linalg.solve(a, b), L.linalg.solve(a, b[..., 0]), L.linalg.solve(a, b[0, :, 1]), L.linalg.solve(a[0], b),
            L.linalg.solve(a, b.mT, left=False))


CPU_CASES = [
    case(determinants, A3),
    case(determinants, A3.astype(np.float32), **F32),
    case(lambda L, a: (L.linalg.det(a.mT), L.linalg.slogdet(a.mT).logabsdet, L.linalg.inv(a.mT)), A3),  # transposed
    case(lambda L, a: (L.det(a), L.linalg.slogdet(a).logabsdet), A4.reshape(2, 2, 2, 2)),  # two batch dims
    case(lambda L, a: (L.linalg.det(a), L.linalg.slogdet(a), L.logdet(a)), SINGULAR, grad=False),  # det 0, -inf, nan
    case(lambda L, a: L.linalg.det(a), SINGULAR),  # the gradient at a singular matrix: zero, as torch's
    case(lambda L, a: (L.logdet(a), L.linalg.slogdet(a)), SIGNS),
    case(lambda L, a: (L.linalg.det(a), L.linalg.slogdet(a), L.linalg.inv(a), L.linalg.cholesky(a)), np.zeros((0, 0))),
    case(lambda L, a: (L.linalg.det(a), L.linalg.slogdet(a), L.linalg.inv(a), L.linalg.cholesky(a)), np.zeros((0, 3, 3))),
    case(lambda L, a: (L.linalg.det(a), L.linalg.inv(a)), np.zeros((2, 0, 0), np.float32)),
    case(lambda L, a: (L.linalg.inv(a), L.inverse(a), a.inverse(), L.linalg.inv(a[0] @ a[1])), A3),
    case(lambda L, a: L.linalg.inv(a), A4.astype(np.float32), **F32),
    case(solves, A3, B3),
    case(solves, A3.astype(np.float32), B3.astype(np.float32), **F32),
    case(lambda L, a, b: (L.linalg.solve(a.mT, b), L.linalg.solve(a, b.mT)), A3, RNG.normal(size=(2, 3, 3))),  # transposed
    case(lambda L, a, b: (L.linalg.solve(a, b), L.linalg.solve(a[:0], b[:0]), L.linalg.solve(a, b[..., :0])), A3, B3),
    case(lambda L, a, b: L.linalg.solve(a, b), np.zeros((0, 0)), np.zeros((0, 2))),
    case(lambda L, a: (L.linalg.cholesky(spd(L, a)), L.linalg.cholesky(spd(L, a), upper=True), L.cholesky(spd(L, a)),
                       spd(L, a).cholesky(True)), A3),
    case(lambda L, a: (L.linalg.cholesky(a), L.linalg.cholesky(a, upper=True)), spd_array((2, 3, 3))),  # grads to A itself
    case(lambda L, a: L.linalg.cholesky(a.mT, upper=True), spd_array((4, 4)).astype(np.float32), **F32),
    case(lambda L, a: L.linalg.cholesky(a.tril() + 5 * a.triu(1)), spd_array((3, 3))),  # only the lower triangle is read
    case(lambda L, a: (L.linalg.lu_factor(a), L.linalg.lu_factor(a[0, :2]), L.linalg.lu_factor(a[0, :, :2])), A3, grad=False),
    case(lambda L, a: (L.linalg.lu_factor(a), L.linalg.lu_factor(a.mT)), TIES, grad=False),
    case(lambda L, a: (L.renorm(a, 2, 0, 1.5), a.renorm(1, 1, 2.0), L.renorm(a, 3, -1, 0.5), L.renorm(a, math.inf, 0, 1.0),
                       L.renorm(a.t(), 2, 1, 1.5), L.renorm(a, 2, 0, 0.0), (a * 1).renorm_(2, 0, 1.5)), A4),
    case(lambda L, a: (L.renorm(a, 2, 1, 1.0), a.renorm(1.5, 0, 3.0)), A3.astype(np.float32), **F32),
]

CUDA_CASES = [
    case(lambda L, a: (L.linalg.det(a), *L.linalg.slogdet(a.mT), L.logdet(a), L.linalg.inv(a)), X2),
    case(lambda L, a, b: (L.linalg.solve(a, b), L.linalg.solve(a, b[0, :, 0])), X2, X2),
    case(lambda L, a: (L.linalg.cholesky(spd(L, a), upper=True), L.linalg.lu_factor(a.detach()), L.renorm(a, 2, 1, 1.0)),
         X2.astype(np.float32), **F32),
]


@pytest.mark.parametrize("backend, index", [(b, i) for b in CPU_BACKENDS for i in range(len(CPU_CASES))] +
                         [("cuda", i) for i in range(len(CUDA_CASES)) if "cuda" in BACKENDS], ids=str)
def test_against_torch(backend: str, index: int) -> None:
    cases: list[Case] = CUDA_CASES if backend == "cuda" else CPU_CASES
    run(backend, cases[index : index + 1])


# --- gradients against central differences ---


def check_against_differences(fn: Callable[..., Any], np_fn: Callable[..., Any], arrays: list[np.ndarray], backend: str) -> None:
    """The gradient of sum(w * fn(inputs)) equals central differences of the NumPy function (float64)."""
    tensors = [mt.tensor(x, backend=backend, requires_grad=True) for x in arrays]
    out = fn(*tensors)
    weight = np.random.default_rng(0).uniform(-1.0, 1.0, out.shape)
    (out * mt.tensor(weight, backend=backend)).sum().backward()
    for t, expected in zip(tensors, central_difference(np_fn, arrays, weight)):
        assert t.grad is not None
        np.testing.assert_allclose(t.grad.to_numpy(), expected, rtol=1e-6, atol=1e-7)


def test_gradients_against_differences(backend: str) -> None:
    a, b = (X2, X2[:, :, :1]) if backend == "cuda" else (A3, B3)
    check_against_differences(mt.linalg.det, np.linalg.det, [a], backend)
    check_against_differences(mt.linalg.solve, np.linalg.solve, [a, b], backend)


# --- errors ---


def test_errors(backend: str) -> None:
    def t(x: Any, dtype: Any = mt.float64) -> mt.Tensor:
        return mt.tensor(np.asarray(x), dtype=dtype, backend=backend)

    eye = t(np.eye(2))
    with pytest.raises(LinAlgError, match="^linalg.inv: \\(Batch element 1\\): The diagonal element 2 is zero, the inversion "
                                          "could not be completed because the input matrix is singular.$"):
        mt.linalg.inv(t([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]]))
    with pytest.raises(LinAlgError, match="^torch.linalg.solve: The solver failed because the input matrix is singular.$"):
        mt.linalg.solve(t(np.zeros((2, 2))), t([1.0, 2.0]))
    with pytest.raises(LinAlgError, match="^linalg.cholesky: \\(Batch element 1\\): The factorization could not be completed "
                                          "because the input is not positive-definite \\(the leading minor of order 2 is not "
                                          "positive-definite\\).$"):
        mt.linalg.cholesky(t([np.eye(2), [[1.0, 2.0], [2.0, 1.0]]]))
    assert issubclass(LinAlgError, RuntimeError) and mt.linalg.LinAlgError is LinAlgError
    with pytest.raises(DTypeError, match="linalg.det: Expected a floating point or complex tensor as input. Got Long \\(int64"):
        mt.det(t(np.eye(2), mt.int64))
    with pytest.raises(DTypeError, match="linalg.cholesky: .* Got Int \\(int32"):
        t(np.eye(2), mt.int32).cholesky()
    with pytest.raises(DTypeError, match="logdet: .* Got Long"):
        mt.logdet(t(np.eye(2), mt.int64))
    with pytest.raises(DTypeError, match="renorm: Expected a floating point tensor as input. Got int64"):
        mt.renorm(t(np.eye(2), mt.int64), 2, 0, 1.0)
    with pytest.raises(ShapeError, match="linalg.inv: The input tensor A must have at least 2 dimensions"):
        mt.inverse(t([1.0, 2.0]))
    with pytest.raises(ShapeError, match="linalg.slogdet: A must be batches of square matrices, but they are 2 by 3 matrices"):
        mt.linalg.slogdet(t(np.ones((2, 3))))
    with pytest.raises(ShapeError, match="Incompatible shapes of A and B for the equation AX = B \\(2x2 and 3x1\\)"):
        mt.linalg.solve(eye, t([1.0, 2.0, 3.0]))
    with pytest.raises(ShapeError, match="Incompatible shapes of A and B for the equation XA = B \\(2x2 and 2x1\\)"):
        mt.linalg.solve(eye, t([1.0, 2.0]), left=False)
    with pytest.raises(ShapeError, match="The input tensor B must have at least 2 dimensions"):
        mt.linalg.solve(eye, t(1.0))
    with pytest.raises(ShapeError, match="the batch dims of A \\(3, 2, 2\\) and B \\(4, 2, 1\\) do not broadcast"):
        mt.linalg.solve(eye.expand(3, 2, 2), t(np.ones((4, 2, 1))))
    with pytest.raises(TypeError, match="linalg.det\\(\\): argument 'A' \\(position 1\\) must be Tensor, not NoneType"):
        mt.linalg.det(None)
    with pytest.raises(TypeError, match="argument 'B' \\(position 2\\) must be Tensor, not list"):
        mt.linalg.solve(eye, [1.0, 2.0])
    with pytest.raises(NotImplementedError, match="LU without pivoting"):
        mt.linalg.lu_factor(eye, pivot=False)
    singular = np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])
    for a in (singular, singular[0]):  # torch's message, "(Batch element 0): " for a batch
        with pytest.raises(RuntimeError) as theirs:
            torch.linalg.lu_factor(torch.tensor(a))
        with pytest.raises(mt.LinAlgError) as ours:
            mt.linalg.lu_factor(t(a))
        assert str(ours.value) == str(theirs.value)
    assert mt.linalg.lu_factor_ex(t(singular)).info.tolist() == [2, 0]  # the _ex form reports instead
    with pytest.raises(ShapeError, match="renorm: input needs at least 2 dimensions, got 1"):
        t([1.0, 2.0]).renorm(2, 0, 1.0)
    with pytest.raises(ValueError, match="renorm: non-positive-norm not supported"):
        eye.renorm(0, 0, 1.0)
    with pytest.raises(ValueError, match="renorm: expected maxnorm to be >= 0 but got -1"):
        eye.renorm(2, 0, -1)


def test_autograd_limits() -> None:
    """No second derivatives (HigherOrderGradError names the op); inputs are not changed;
    slogdet's sign has no gradient; solve promotes mixed dtypes."""
    a = mt.tensor(A3, requires_grad=True)
    with pytest.raises(HigherOrderGradError, match="Det"):
        mt.autograd.grad(mt.linalg.det(a).sum(), a, create_graph=True)
    transposed = a.mT
    mt.linalg.det(transposed).sum().backward()
    mt.linalg.cholesky(spd(mt, transposed))
    assert transposed.tolist() == np.swapaxes(A3, -1, -2).tolist() and a.tolist() == A3.tolist()
    sign, logabsdet = mt.linalg.slogdet(a)
    assert not sign.requires_grad and logabsdet.requires_grad
    x = mt.linalg.solve(mt.tensor(A3, dtype=mt.float32), mt.tensor(B3))
    assert x.dtype == mt.float64
    np.testing.assert_allclose(x.to_numpy(), np.linalg.solve(A3.astype(np.float32), B3), rtol=1e-5)


# --- properties over well-conditioned matrices ---


@st.composite
def conditioned(draw: Any) -> np.ndarray:
    """A batch (0 to 2 dims) of n x n matrices (n up to 4), diagonally dominant: condition number below ~10."""
    batch = tuple(draw(st.lists(st.integers(1, 2), max_size=2)))
    n = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    x = np.random.default_rng(seed).uniform(-1.0, 1.0, (*batch, n, n))
    return x + np.eye(n) * (n + 1) * np.sign(np.random.default_rng(seed + 1).uniform(-1, 1, (*batch, 1, 1)))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_inverse_and_solve_properties(backend: str) -> None:
    @settings(max_examples=10)
    @given(st.data())
    def body(data: Any) -> None:
        array = data.draw(conditioned())
        k = data.draw(st.integers(1, 3))
        a = mt.tensor(array, backend=backend)
        b = mt.tensor(np.random.default_rng(k).normal(size=(*array.shape[:-1], k)), backend=backend)
        eye = np.broadcast_to(np.eye(array.shape[-1]), array.shape)
        np.testing.assert_allclose((a @ mt.linalg.inv(a)).to_numpy(), eye, atol=1e-12)
        np.testing.assert_allclose((a @ mt.linalg.solve(a, b) - b).to_numpy(), 0.0, atol=1e-12)
        np.testing.assert_allclose(mt.det(a).to_numpy(), np.linalg.det(array), rtol=1e-12)
        lower = mt.linalg.cholesky(a @ a.mT)
        np.testing.assert_allclose((lower @ lower.mT).to_numpy(), (a @ a.mT).to_numpy(), rtol=1e-12, atol=1e-12)

    body()
