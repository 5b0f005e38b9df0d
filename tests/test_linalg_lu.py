"""The LU and LDL families and Householder products (linalg_lu.py, linalg_ldl.py, linalg_householder.py):
``linalg.lu lu_solve ldl_factor ldl_factor_ex ldl_solve householder_product``, ``mt.lu lu_unpack lu_solve orgqr``,
against torch (values, dtypes, shapes, pivots and gradients: square, tall and wide, batched and broadcast, float32
and float64, 2 x 2 Bunch-Kaufman blocks, singular input), the LU gradients also against central differences, and
the errors. One tiny case runs on the CUDA simulator."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import BACKENDS, CPU_BACKENDS
from strategies import central_difference
from torch_oracle import Case, case, run

import minitensor as mt
from minitensor import DTypeError, IndexOutOfRangeError, LinAlgError, ShapeError

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),  # inf and nan on singular input
    pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:torch.lu is deprecated:UserWarning"),
    pytest.mark.filterwarnings("ignore:torch.lu_solve is deprecated:UserWarning"),
]

RNG = np.random.default_rng(11)
A3 = RNG.normal(size=(2, 3, 3))
WIDE = RNG.normal(size=(2, 3, 5))
TALL = RNG.normal(size=(2, 5, 3))
TIES = np.array([[1.0, 2.0, 3.0], [-1.0, 5.0, 2.0], [1.0, 0.0, 4.0]])  # equal |values| in the pivot columns
SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
F32 = {"rtol": 1e-4, "atol": 1e-5}


def factored(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """torch's (LU, pivots) of a, as arrays (inputs of lu_solve and lu_unpack, so LU can take a gradient)."""
    lu, pivots = torch.linalg.lu_factor(torch.tensor(a))
    return lu.numpy(), pivots.numpy()


def symmetric_mix(n: int, batch: int) -> np.ndarray:
    """Symmetric (batch, n, n) matrices with small diagonals (Bunch-Kaufman takes 2 x 2 blocks and swaps), one also
    with rounded entries (ties in the pivot search) and one general (only its lower triangle is read)."""
    x = RNG.normal(size=(batch, n, n))
    x = x + np.swapaxes(x, -1, -2)
    x[:, range(n), range(n)] *= 0.02
    x[0] = np.round(x[0] * 2)
    x[-1] = RNG.normal(size=(n, n))
    return x


LU3, PIV3 = factored(A3)
LU_WIDE, PIV_WIDE = factored(WIDE)
LU_TALL, PIV_TALL = factored(TALL)
B32 = RNG.normal(size=(2, 3, 2))
SYM = symmetric_mix(6, 4)
HOUSE = RNG.normal(size=(2, 5, 3))
TAU = RNG.normal(size=(2, 3))

CPU_CASES: list[Case] = [
    case(lambda L, a: L.linalg.lu(a), A3),  # square, batched: P, L, U and the gradient of L and U
    case(lambda L, a: (L.linalg.lu(a), L.linalg.lu(a[0])), WIDE),  # wide
    case(lambda L, a: (L.linalg.lu(a), L.linalg.lu(a.mT)), TALL),  # tall, and wide through a transposed view
    case(lambda L, a: L.linalg.lu(a), RNG.normal(size=(2, 2, 3, 3))),  # two batch dims
    case(lambda L, a: (L.linalg.lu(a), L.linalg.lu(a.mT)), TIES),  # ties in the pivot search
    case(lambda L, a: L.linalg.lu(a), TALL.astype(np.float32), **F32),
    case(lambda L, a: (L.linalg.lu_factor(a), L.linalg.lu_factor_ex(a[0])[0], L.lu(a[1])), A3),  # the packed factors
    case(lambda L, a: (L.linalg.lu_factor(a), L.linalg.lu_factor(a.mT)), WIDE),  # wide, and tall through a view
    case(lambda L, a: L.linalg.lu_factor(a), RNG.normal(size=(2, 2, 4, 3)).astype(np.float32), **F32),
    case(lambda L, a: (L.linalg.lu(a), L.linalg.lu(a[:, :0]), L.linalg.lu(a[:0])), WIDE, grad=False),  # empty
    case(lambda L, a: L.linalg.lu(a), SINGULAR, grad=False),
    case(lambda L, lu, p, b: (L.linalg.lu_solve(lu, p, b), L.linalg.lu_solve(lu, p, b, adjoint=True)), LU3, PIV3, B32),
    case(lambda L, lu, p, b: (L.linalg.lu_solve(lu, p, b.mT, left=False), L.linalg.lu_solve(lu, p, b.mT, left=False,
                                                                                                adjoint=True)), LU3, PIV3, B32),
    case(lambda L, lu, p, b: (L.linalg.lu_solve(lu, p, b), L.linalg.lu_solve(lu[0], p[0], b)), LU3, PIV3,
         RNG.normal(size=(3, 1, 3, 2))),  # broadcast batch dims
    case(lambda L, lu, p, b: (L.lu_solve(b, lu, p), L.lu_solve(b[..., :0], lu, p)), LU3, PIV3, B32),  # torch.lu_solve
    case(lambda L, lu, p, b: L.linalg.lu_solve(lu, p, b), LU3.astype(np.float32), PIV3, B32.astype(np.float32), **F32),
    case(lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor_ex(a)[:2], b), SINGULAR, np.ones((2, 1)), grad=False),
    case(lambda L, lu, p: L.lu_unpack(lu, p), LU3, PIV3),
    case(lambda L, lu, p: (L.lu_unpack(lu, p, unpack_data=False), L.lu_unpack(lu, p, unpack_pivots=False)), LU3, PIV3, grad=False),
    case(lambda L, lu, p: (L.lu_unpack(lu, p), L.lu_unpack(lu[0], p[0])), LU_WIDE, PIV_WIDE),
    case(lambda L, lu, p: L.lu_unpack(lu, p), LU_TALL, PIV_TALL),
    case(lambda L, a: (L.lu(a), L.lu(a, get_infos=True), L.lu(a[0, :2, :2] * 0, get_infos=True)), A3, grad=False),
    case(lambda L, a: (L.linalg.ldl_factor_ex(a), L.linalg.ldl_factor(a, hermitian=True)), SYM, grad=False),
    case(lambda L, a: L.linalg.ldl_factor_ex(a), np.stack([np.zeros((3, 3)), np.diag([1.0, 0.0, 2.0])]), grad=False),
    case(lambda L, a: L.linalg.ldl_factor_ex(a), np.zeros((0, 2, 2)), grad=False),
    case(lambda L, a, b: (L.linalg.ldl_solve(*L.linalg.ldl_factor(a), b), L.linalg.ldl_solve(*L.linalg.ldl_factor(a[1]), b)),
         SYM, RNG.normal(size=(4, 6, 2)), grad=False),
    case(lambda L, a: L.linalg.ldl_factor(a), SYM.astype(np.float32), grad=False, **F32),
    case(lambda L, a, t: (L.linalg.householder_product(a, t), L.orgqr(a[0], t[0]), L.linalg.householder_product(a, t[:, :2]),
                          L.linalg.householder_product(a[:, :3], t)), HOUSE, TAU),
    case(lambda L, a, t: L.linalg.householder_product(a, t), HOUSE.astype(np.float32), TAU.astype(np.float32), **F32),
]

CUDA_CASES: list[Case] = [
    case(lambda L, a, b: (L.linalg.lu(a), L.linalg.lu_solve(*L.linalg.lu_factor(a.detach()), b)), A3[0, :2, :2], B32[0, :2]),
]


@pytest.mark.parametrize("backend, index", [(b, i) for b in CPU_BACKENDS for i in range(len(CPU_CASES))] +
                         [("cuda", i) for i in range(len(CUDA_CASES)) if "cuda" in BACKENDS], ids=str)
def test_against_torch(backend: str, index: int) -> None:
    cases = CUDA_CASES if backend == "cuda" else CPU_CASES
    run(backend, cases[index : index + 1])


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_ldl_pivots_match_lapack(backend: str) -> None:
    """LD, pivots and info equal torch's (LAPACK's sytrf) over many small symmetric batches, and ldl_solve solves."""
    for n in (2, 3, 5):
        x = symmetric_mix(n, 6)
        ours, theirs = mt.linalg.ldl_factor_ex(mt.tensor(x, backend=backend)), torch.linalg.ldl_factor_ex(torch.tensor(x))
        np.testing.assert_array_equal(ours.pivots.to_numpy(), theirs.pivots.numpy())
        np.testing.assert_allclose(ours.LD.to_numpy(), theirs.LD.numpy(), rtol=1e-9, atol=1e-12)
        assert ours.info.tolist() == theirs.info.tolist()
        b = RNG.normal(size=(6, n, 1))
        solved = mt.linalg.ldl_solve(ours.LD, ours.pivots, mt.tensor(b, backend=backend)).to_numpy()
        lower = np.tril(x) + np.swapaxes(np.tril(x, -1), -1, -2)
        np.testing.assert_allclose(lower @ solved, b, rtol=1e-8, atol=1e-8)


def test_householder_product_is_qr_q() -> None:
    """householder_product of geqrf's reflectors is linalg.qr's Q (the same Householder convention)."""
    a = RNG.normal(size=(2, 5, 3))
    reflectors, tau = torch.geqrf(torch.tensor(a))
    q = mt.linalg.householder_product(mt.tensor(reflectors.numpy()), mt.tensor(tau.numpy()))
    np.testing.assert_allclose(q.to_numpy(), mt.linalg.qr(mt.tensor(a)).Q.to_numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_lu_gradients_against_differences(backend: str) -> None:
    """d(sum w (L + U-padding))/dA of linalg.lu equals central differences of a NumPy LU (no pivoting needed: the
    matrices are diagonally dominant, so the pivots do not change)."""

    def numpy_lu(a: np.ndarray) -> np.ndarray:
        m, n = a.shape
        u, lower = a.copy(), np.eye(m)[:, : min(m, n)]
        for k in range(min(m, n)):
            lower[k + 1 :, k] = u[k + 1 :, k] / u[k, k]
            u[k + 1 :] -= np.outer(lower[k + 1 :, k], u[k])
        return np.concatenate([lower.ravel(), np.triu(u[: min(m, n)]).ravel()])

    for shape in ((3, 3), (3, 4), (4, 2)):
        a = RNG.normal(size=shape) + 6 * np.eye(*shape)
        x = mt.tensor(a, backend=backend, requires_grad=True)
        _, lower, upper = mt.linalg.lu(x)
        weight = RNG.uniform(-1.0, 1.0, lower.numel() + upper.numel())
        packed = mt.cat([lower.reshape(-1), upper.reshape(-1)])
        (packed * mt.tensor(weight, backend=backend)).sum().backward()
        (expected,) = central_difference(numpy_lu, [a], weight)
        assert x.grad is not None
        np.testing.assert_allclose(x.grad.to_numpy(), expected, rtol=1e-6, atol=1e-7)


def test_errors() -> None:
    def t(x: Any, dtype: Any = mt.float64) -> mt.Tensor:
        return mt.tensor(np.asarray(x), dtype=dtype)

    lu, pivots = mt.linalg.lu_factor(t(A3))
    b = t(B32)
    with pytest.raises(NotImplementedError, match="^linalg.lu_factor: LU without pivoting is not implemented on the CPU$"):
        mt.linalg.lu(t(A3), pivot=False)
    with pytest.raises(ShapeError, match="linalg.lu: Expected tensor with 2 or more dimensions. Got size: \\[3\\] instead"):
        mt.linalg.lu(t([1.0, 2.0, 3.0]))
    with pytest.raises(DTypeError, match="linalg.lu: Expected a floating point or complex tensor as input. Got Long"):
        mt.linalg.lu(t(np.eye(2), mt.int64))
    with pytest.raises(TypeError, match="argument 'A' \\(position 1\\) must be Tensor, not list"):
        mt.linalg.lu([[1.0]])
    with pytest.raises(DTypeError, match="linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32, got Long"):
        mt.linalg.lu_solve(lu, pivots.long(), b)
    with pytest.raises(ShapeError, match="linalg.lu_solve: Expected the shape of pivots to be \\(2, 3\\)"):
        mt.linalg.lu_solve(lu, pivots[:1], b)
    with pytest.raises(ShapeError, match="linalg.lu_solve: The input tensor B must have at least 2 dimensions"):
        mt.linalg.lu_solve(lu, pivots, t([1.0, 2.0, 3.0]))
    with pytest.raises(DTypeError, match="linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                                         "Double and B of type Float instead"):
        mt.linalg.lu_solve(lu, pivots, b.float())
    with pytest.raises(ShapeError, match="linalg.lu_solve: Incompatible shapes of A and B for the equation XA = B \\(3x3 and 3x2\\)"):
        mt.linalg.lu_solve(lu, pivots, b, left=False)
    with pytest.raises(ShapeError, match="torch.linalg.lu_solve: A must be batches of square matrices, but they are 3 by 2"):
        mt.linalg.lu_solve(lu[..., :2], pivots[..., :2], b)
    with pytest.raises(IndexOutOfRangeError, match="pivots must be between 1 and LU.size\\(-2\\) = 3 inclusive"):
        mt.linalg.lu_solve(lu, pivots * 2, b)
    with pytest.raises(ShapeError, match="the batch dims of A \\(2, 3, 3\\) and B \\(3, 3, 2\\) do not broadcast"):
        mt.linalg.lu_solve(lu, pivots, t(np.ones((3, 3, 2))))
    with pytest.raises(ShapeError, match="torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: \\[3\\]"):
        mt.lu_unpack(t([1.0, 2.0, 3.0]), pivots[0])
    with pytest.raises(DTypeError, match="torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32"):
        mt.lu_unpack(lu, pivots.long())
    with pytest.raises(IndexOutOfRangeError, match="pivots must be between 1 and LU.size\\(-2\\) = 3 inclusive"):
        mt.lu_unpack(lu, pivots * 0)
    sym = t(SYM[:2])
    with pytest.raises(ShapeError, match="torch.linalg.ldl_factor_ex: A must be batches of square matrices, but they are 2 by 3"):
        mt.linalg.ldl_factor_ex(t(np.ones((2, 3))))
    with pytest.raises(DTypeError, match="Expected a floating point or complex tensor as input. Got Long"):
        mt.linalg.ldl_factor(t(np.eye(2), mt.int64))
    with pytest.raises(LinAlgError, match="^torch.linalg.ldl_factor: \\(Batch element 1\\): The factorization could not be "
                                          "completed because D\\[2,2\\] is exactly zero"):
        mt.linalg.ldl_factor(t([np.eye(2), np.diag([1.0, 0.0])]))
    with pytest.raises(LinAlgError, match="^torch.linalg.ldl_factor_ex: D\\[1,1\\] is exactly zero|^torch.linalg.ldl_factor_ex: "
                                          "The factorization"):
        mt.linalg.ldl_factor_ex(t(np.zeros((2, 2))), check_errors=True)
    ld, ldl_pivots = mt.linalg.ldl_factor(sym)
    with pytest.raises(ShapeError, match="Expected LD.shape\\[:-1\\] and pivots.shape to be the same, but got pivots with shape "
                                         "\\[2, 2\\] instead"):
        mt.linalg.ldl_solve(ld, ldl_pivots[:, :2], t(np.ones((2, 6, 1))))
    with pytest.raises(ShapeError, match="Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is 6 by 6 but "
                                         "each b matrix is 4 by 1"):
        mt.linalg.ldl_solve(ld, ldl_pivots, t(np.ones((2, 4, 1))))
    with pytest.raises(DTypeError, match="Expected b and A to have the same dtype, but found b of type Float and A of type Double"):
        mt.linalg.ldl_solve(ld, ldl_pivots, t(np.ones((2, 6, 1)), mt.float32))
    with pytest.raises(ShapeError, match="ldl_solve: The input tensor B must have at least 2 dimensions"):
        mt.linalg.ldl_solve(ld, ldl_pivots, t(np.ones(6)))
    with pytest.raises(NotImplementedError, match="derivative for linalg.ldl_factor is not implemented"):
        mt.linalg.ldl_factor(sym.requires_grad_()).LD.sum().backward()
    with pytest.raises(NotImplementedError, match="derivative for linalg.ldl_solve is not implemented"):
        mt.linalg.ldl_solve(ld, ldl_pivots, t(np.ones((2, 6, 1))).requires_grad_()).sum().backward()
    a, tau = t(HOUSE), t(TAU)
    name = "torch.linalg.householder_product: "
    with pytest.raises(ShapeError, match=name + "input.shape\\[-2\\] must be greater than or equal to input.shape\\[-1\\]"):
        mt.linalg.householder_product(a.mT, tau)
    with pytest.raises(ShapeError, match=name + "input.shape\\[-1\\] must be greater than or equal to tau.shape\\[-1\\]"):
        mt.linalg.householder_product(a[..., :2], tau)
    with pytest.raises(ShapeError, match=name + "Expected tau to have one dimension less than input, but got tau.ndim equal to 1"):
        mt.linalg.householder_product(a, tau[0])
    with pytest.raises(ShapeError, match=name + "Expected batch dimensions of tau to be equal to input.shape\\[:-2\\], but got \\[1\\]"):
        mt.linalg.householder_product(a, tau[:1])
    with pytest.raises(ShapeError, match=name + "input must have at least 2 dimensions"):
        mt.linalg.householder_product(tau[0], tau[0, :0])
    with pytest.raises(DTypeError, match=name + "tau dtype Float does not match input dtype Double"):
        mt.orgqr(a, tau.float())


def test_singular_lu_solve_is_not_an_error() -> None:
    """As torch: a zero on U's diagonal gives inf (nan) in the solution, no error; the _ex info flags it."""
    lu, pivots, info = mt.linalg.lu_factor_ex(mt.tensor(SINGULAR))
    assert info.item() == 2
    x = mt.linalg.lu_solve(lu, pivots, mt.tensor(np.ones((2, 1))))
    assert not np.isfinite(x.to_numpy()).all()


def test_lu_unpack_broadcasts_pivots() -> None:
    """Pivots with batch dims of 1 broadcast over LU's batch (torch accepts them but leaves later matrices' P as the
    identity)."""
    lu, pivots = mt.tensor(LU_TALL), mt.tensor(PIV_TALL)
    broadcast = mt.lu_unpack(lu, pivots[:1]).P.to_numpy()
    np.testing.assert_array_equal(broadcast, mt.lu_unpack(lu, pivots[:1].expand(2, 3)).P.to_numpy())
    np.testing.assert_array_equal(broadcast[1], mt.lu_unpack(lu[1], pivots[0]).P.to_numpy())


def test_result_types() -> None:
    a = mt.tensor(A3)
    assert mt.linalg.lu(a)._fields == ("P", "L", "U") and type(mt.linalg.lu(a)).__name__ == "LUResult"
    assert mt.lu_unpack(*mt.linalg.lu_factor(a))._fields == ("P", "L", "U")
    assert type(mt.lu(a)) is tuple and mt.lu(a, get_infos=True)._fields == ("LU", "pivots", "info")
    assert mt.linalg.ldl_factor(mt.tensor(SYM))._fields == ("LD", "pivots")
    assert mt.linalg.ldl_factor_ex(mt.tensor(SYM))._fields == ("LD", "pivots", "info")
