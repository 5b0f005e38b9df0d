"""Matrix decompositions (linalg_decomp.py, linalg_svd.py, linalg_lstsq.py): ``linalg.qr eigh eigvalsh svd svdvals
pinv lstsq matrix_rank cond``, ``qr svd pinverse`` and the Tensor methods, against torch on every backend.

Eigenvectors and singular vectors are unique only up to sign (and within repeated values), so the torch cases
compare sign-invariant functions of them (V^2, |U|, U Vh, U S Vh) and their gradients; QR is unique with LAPACK's
signs, which minitensor follows, so Q and R are compared directly. Also: accuracy against torch over random,
ill-conditioned and rank-deficient matrices (float64 to 1e-10, float32 to 1e-4, relative to the largest singular
value or |eigenvalue|), reconstruction and orthogonality, the sign rule, batches, empty and zero-size matrices, the
errors, and the gradients of cond against central differences (torch's own cond backward fails for p != 2).

The CUDA simulator runs each thread in Python, so its cases are one tiny (2 x 2 or 3 x 3) case per function."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from conftest import BACKENDS, CPU_BACKENDS
from strategies import central_difference
from torch_oracle import Case, case, check

import minitensor as mt
from minitensor import DTypeError, GradientError, LinAlgError, ShapeError, linalg_decomp, linalg_svd

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:torch.qr is deprecated:UserWarning")

RNG = np.random.default_rng(11)
TALL = RNG.normal(size=(2, 4, 3))
WIDE = RNG.normal(size=(2, 3, 4))
SQUARE = RNG.normal(size=(2, 3, 3))
SYM = SQUARE + np.swapaxes(SQUARE, -1, -2)
RHS = RNG.normal(size=(2, 4, 2))
F32 = {"rtol": 1e-4, "atol": 1e-4}


def orthogonal(n: int) -> np.ndarray:
    return np.linalg.qr(RNG.normal(size=(n, n)))[0]


def with_values(values: list[float], m: int, n: int) -> np.ndarray:
    """An m x n matrix with the given singular values (random singular vectors)."""
    k = len(values)
    return (orthogonal(m)[:, :k] * np.array(values)) @ orthogonal(n)[:, :k].T


REPEATED = (lambda q: (q * np.array([1.0, 1.0, 3.0])) @ q.T)(orthogonal(3))  # eigenvalues 1, 1, 3
RANK2 = RNG.normal(size=(4, 2)) @ RNG.normal(size=(2, 3))  # 4 x 3 of rank 2
ILL = with_values([1.0, 1e-5, 1e-11], 3, 3)


def svd_invariants(L: Any, a: Any, full: bool = False) -> tuple[Any, ...]:
    """S, |U| and Vh^2 of the first k singular pairs, and U Vh (all independent of the signs)."""
    u, s, vh = L.linalg.svd(a, full_matrices=full)
    k = s.shape[-1]
    return s, u[..., :k].abs(), vh[..., :k, :] ** 2, u[..., :k] @ vh[..., :k, :]


def eigh_invariants(L: Any, a: Any, uplo: str = "L") -> tuple[Any, ...]:
    values, vectors = L.linalg.eigh(a, UPLO=uplo)
    return values, vectors**2, L.linalg.eigvalsh(a, UPLO=uplo)


def cond_values(L: Any, a: Any) -> tuple[Any, ...]:
    return tuple(L.linalg.cond(a, p) for p in (None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc"))


CPU_CASES: list[Case] = [
    # QR: Q and R themselves (LAPACK's signs), every mode, tall, wide and square, the old forms
    case(lambda L, a: L.linalg.qr(a), TALL),
    case(lambda L, a: (*L.linalg.qr(a), *L.linalg.qr(a, mode="complete"), L.qr(a).Q, a.qr(some=False).R), WIDE),
    case(lambda L, a: (*L.linalg.qr(a, mode="complete"), L.linalg.qr(a.mT).R), SQUARE),
    case(lambda L, a: L.linalg.qr(a).Q, TALL),  # gradient from Q alone
    case(lambda L, a: L.linalg.qr(a).R, WIDE),  # and from R alone
    case(lambda L, a: (*L.linalg.qr(a, mode="complete"), L.linalg.qr(a, mode="r").R), TALL, grad=False),
    case(lambda L, a: L.linalg.qr(a), TALL.astype(np.float32), **F32),
    case(lambda L, a: L.linalg.qr(a), np.zeros((3, 0))),
    case(lambda L, a: L.linalg.qr(a, mode="complete"), np.zeros((3, 0)), grad=False),
    case(lambda L, a: (*L.linalg.qr(a), *L.linalg.qr(a, mode="complete"), L.linalg.qr(a[:0]).R), np.zeros((2, 0, 3))),
    case(lambda L, a: L.linalg.qr(a), np.triu(SQUARE) * np.array([1.0, -1.0, 1.0]), grad=False),  # columns zero below
    # eigh
    case(eigh_invariants, SYM),
    case(lambda L, a: eigh_invariants(L, a, "U"), SQUARE),  # only the upper triangle is read
    case(lambda L, a: L.linalg.eigh(a).eigenvalues, SQUARE),  # gradient from the values alone
    case(lambda L, a: L.linalg.eigh(a).eigenvectors.abs(), SYM[0]),  # and from the vectors alone
    case(eigh_invariants, SYM.astype(np.float32), **F32),
    case(lambda L, a: L.linalg.eigvalsh(a), REPEATED, grad=False),  # repeated eigenvalues: values only
    case(lambda L, a: (*L.linalg.eigh(a), L.linalg.eigvalsh(a)), np.zeros((2, 0, 0))),
    case(lambda L, a: (*L.linalg.eigh(a), L.linalg.eigvalsh(a)), np.full((1, 1, 1), -2.0)),
    # SVD
    case(svd_invariants, TALL),
    case(lambda L, a: svd_invariants(L, a, True), WIDE),
    case(lambda L, a: (svd_invariants(L, a), L.linalg.svdvals(a)), SQUARE),
    case(lambda L, a: (L.linalg.svd(a).S, L.linalg.svdvals(a)), TALL),  # gradients of the values alone
    case(lambda L, a: L.linalg.svd(a, full_matrices=False).U.abs(), WIDE),  # of U alone
    case(lambda L, a: L.linalg.svd(a, full_matrices=False).Vh ** 2, TALL),  # of Vh alone
    case(lambda L, a: (lambda r: (r.S, r.U @ r.V.mT))(L.svd(a)), TALL),  # torch.svd: V, not Vh
    case(lambda L, a: (lambda r: (r.S, r.U[..., :3] @ r.V.mT))(a.svd(some=False)), TALL),
    case(lambda L, a: L.svd(a, compute_uv=False), WIDE),
    case(lambda L, a: svd_invariants(L, a), TALL.astype(np.float32), **F32),
    case(lambda L, a: (L.linalg.svdvals(a), svd_invariants(L, a, True)[0]), RANK2, grad=False, atol=1e-12),
    case(lambda L, a: (L.linalg.svdvals(a), L.linalg.svd(a).U.abs()), ILL, grad=False, atol=1e-12),
    case(lambda L, a: (*L.linalg.svd(a), *L.linalg.svd(a, full_matrices=False), L.linalg.svdvals(a)), np.zeros((2, 3, 0))),
    case(lambda L, a: (*L.linalg.svd(a), L.linalg.svdvals(a)), np.zeros((0, 2, 3))),
    case(lambda L, a: L.linalg.svd(a), np.zeros((3, 3)), grad=False),
    # pinv
    case(lambda L, a: (L.linalg.pinv(a), L.pinverse(a), a.pinverse(1e-3)), TALL),
    case(lambda L, a: (L.linalg.pinv(a), L.linalg.pinv(a, atol=0.5), L.linalg.pinv(a, rtol=0.3)), WIDE),
    case(lambda L, a: L.linalg.pinv(a, hermitian=True), SYM),
    case(lambda L, a: L.linalg.pinv(a), RANK2),  # rank-deficient: the gradient of the truncated pinv
    case(lambda L, a: L.linalg.pinv(a), TALL.astype(np.float32), **F32),
    case(lambda L, a, t: L.linalg.pinv(a[0], atol=t), TALL, np.array([[0.1], [1.5]]), grad=False),  # broadcast atol
    case(lambda L, a: (L.linalg.pinv(a), L.linalg.pinv(a[:, :0]), L.linalg.pinv(a[:0])), TALL, grad=False),
    # lstsq
    case(lambda L, a, b: L.linalg.lstsq(a, b), TALL, RHS),
    case(lambda L, a, b: L.linalg.lstsq(a, b[:1], driver="gelsd"), TALL, RHS),  # broadcast batch, residuals
    case(lambda L, a, b: (L.linalg.lstsq(a, b, driver="gelss"), L.linalg.lstsq(a, b, driver="gels")), TALL[0], RHS[0, :, 0]),
    case(lambda L, a, b: (L.linalg.lstsq(a, b[:, :3]), L.linalg.lstsq(a, b[:, :3], driver="gelsd")), WIDE, RHS),
    case(lambda L, a, b: L.linalg.lstsq(a, b), TALL.astype(np.float32), RHS.astype(np.float32), **F32),
    case(lambda L, a, b: (L.linalg.lstsq(a, b), L.linalg.lstsq(a, b, driver="gelsd")), RANK2, RHS[0], grad=False),
    case(lambda L, a, b: (L.linalg.lstsq(a, b), L.linalg.lstsq(a, b, driver="gelsd")), np.zeros((3, 2)), RHS[0, :3],
         grad=False),
    case(lambda L, a, b: (L.linalg.lstsq(a, b, driver="gelsd"), L.linalg.lstsq(a[:, :0], b)), np.zeros((0, 3)),
         np.zeros((0, 2)), grad=False),
    # matrix_rank and cond
    case(lambda L, a, b: (L.linalg.matrix_rank(a), L.linalg.matrix_rank(b), L.linalg.matrix_rank(b, atol=0.5),
                          L.linalg.matrix_rank(b, rtol=0.3), L.linalg.matrix_rank(b, atol=0.1, rtol=0.5),
                          L.linalg.matrix_rank(b @ b.mT, hermitian=True), L.linalg.matrix_rank(b[:, :0]),
                          L.linalg.matrix_rank(b[:0])), RANK2, TALL),
    case(lambda L, a, t: L.linalg.matrix_rank(a, atol=t), TALL, np.array([0.5, 1.5])),
    case(lambda L, a: (L.linalg.cond(a), L.linalg.cond(a, -2)), TALL),
    case(cond_values, SQUARE, grad=False),
    case(cond_values, np.array([[1.0, 2.0], [0.0, 0.0]]), grad=False),  # singular: inf
    case(lambda L, a: (L.linalg.cond(a), L.linalg.cond(a, 1), L.linalg.cond(a[:0, :0])), np.zeros((2, 0, 0)), grad=False),
]

CUDA_CASES: list[Case] = [
    case(lambda L, a: L.linalg.qr(a), SQUARE[0, :2, :2]),
    case(lambda L, a: (lambda r: (r.eigenvalues, r.eigenvectors**2))(L.linalg.eigh(a)), SYM[0, :2, :2]),
    case(lambda L, a: (lambda r: (r.S, r.U @ r.Vh))(L.linalg.svd(a)), SQUARE[0, :2, :2]),
    case(lambda L, a, b: (L.linalg.pinv(a), L.linalg.lstsq(a, b), L.linalg.matrix_rank(a), L.linalg.cond(a)),
         SQUARE[0, :2, :2], RHS[0, :2], grad=False),
]


@pytest.mark.parametrize("backend, index", [(b, i) for b in CPU_BACKENDS for i in range(len(CPU_CASES))] +
                         [("cuda", i) for i in range(len(CUDA_CASES)) if "cuda" in BACKENDS], ids=str)
def test_against_torch(backend: str, index: int) -> None:
    fn, arrays, options = (CUDA_CASES if backend == "cuda" else CPU_CASES)[index]
    check(backend, fn, *arrays, **{"rtol": 1e-7, "atol": 1e-9, **options})


# --- accuracy over many matrices, reconstruction, orthogonality, signs ---


def accuracy_inputs(dtype: type) -> list[np.ndarray]:
    """Random matrices of every shape up to 5 x 5 (some batched), ill-conditioned and rank-deficient ones."""
    shapes = [(m, n) for m in range(1, 6) for n in range(1, 6)] + [(3, 4, 2), (2, 2, 5)]
    mats = [RNG.normal(size=s) for s in shapes]
    mats += [with_values([1.0, 1e-6, 1e-12, 1e-15], 5, 4), with_values([1.0, 1e-9, 1e-9], 3, 5)]  # ill-conditioned
    mats += [RANK2, RNG.normal(size=(5, 1)) @ RNG.normal(size=(1, 4)), np.ones((3, 3)), np.zeros((2, 3))]  # rank < k
    mats += [RNG.normal(size=(4, 4)) * 1e150, RNG.normal(size=(3, 2)) * 1e-150]  # no overflow or underflow
    if dtype == np.float32:
        mats = [m for m in mats if np.abs(m).max(initial=0) < 1e30 and np.abs(m).max(initial=1) > 1e-30]
    return [m.astype(dtype) for m in mats]


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-10), (np.float32, 1e-4)])
def test_accuracy(dtype: type, tol: float) -> None:
    """S, eigenvalues and R's diagonal against torch, relative to the largest; A = U S Vh = Q R = V L V^T;
    orthogonal U, V, Q; each vector's largest-magnitude component positive; the same result twice."""
    for a in accuracy_inputs(dtype):
        x = mt.tensor(a, backend="fast")
        scale = max(float(np.abs(a).max(initial=0)), np.finfo(dtype).tiny)
        u, s, vh = (t.to_numpy().astype(np.float64) for t in mt.linalg.svd(x))
        want = torch.linalg.svdvals(torch.tensor(a)).numpy()
        assert np.abs(s - want).max(initial=0) <= tol * max(want.max(initial=0), np.finfo(dtype).tiny), a.shape
        k = s.shape[-1]
        assert np.abs(u[..., :k] * s[..., None, :] @ vh[..., :k, :] - a).max(initial=0) <= tol * scale
        for w in (u, np.swapaxes(vh, -1, -2)):
            assert np.abs(np.swapaxes(w, -1, -2) @ w - np.eye(w.shape[-1])).max(initial=0) <= tol
        assert (np.take_along_axis(u, np.abs(u).argmax(-2)[..., None, :], -2) > 0).all()  # the sign rule, on U
        np.testing.assert_array_equal(mt.linalg.svd(x).U.to_numpy(), u.astype(dtype))  # deterministic
        q, r = (t.to_numpy().astype(np.float64) for t in mt.linalg.qr(x))
        _, tr = torch.linalg.qr(torch.tensor(a))
        assert np.abs(np.diagonal(r, 0, -2, -1) - np.diagonal(tr.numpy(), 0, -2, -1)).max(initial=0) <= tol * scale
        assert np.abs(q @ r - a).max(initial=0) <= tol * scale
        if a.shape[-1] == a.shape[-2]:
            sym = a + np.swapaxes(a, -1, -2)
            values, vectors = (t.to_numpy().astype(np.float64) for t in mt.linalg.eigh(mt.tensor(sym, backend="fast")))
            want = torch.linalg.eigvalsh(torch.tensor(sym)).numpy()
            assert np.abs(values - want).max(initial=0) <= tol * max(np.abs(want).max(initial=0), np.finfo(dtype).tiny)
            assert np.abs(vectors * values[..., None, :] @ np.swapaxes(vectors, -1, -2) - sym).max(initial=0) <= tol * 2 * scale
            top = np.take_along_axis(vectors, np.abs(vectors).argmax(-2)[..., None, :], -2)
            assert (top > 0).all()


@pytest.mark.parametrize("backend", [b for b in CPU_BACKENDS if b != "fast"])
def test_backends_agree(backend: str) -> None:
    """The simple backend gives the fast backend's factors (the same ops), to rounding."""
    a = TALL
    sym = a[..., :2, :2] + np.swapaxes(a[..., :2, :2], -1, -2)
    for fn, x in ((mt.linalg.svd, a), (mt.linalg.qr, a), (mt.linalg.eigh, sym)):
        got, want = fn(mt.tensor(x, backend=backend)), fn(mt.tensor(x, backend="fast"))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.to_numpy(), w.to_numpy(), rtol=1e-12, atol=1e-13)


def test_cond_gradient_against_differences() -> None:
    """torch's cond backward fails for p != +-2 (an in-place fill of the inverse); ours is by composition."""
    a = SQUARE[0]
    for p in (1, -math.inf, "fro", "nuc"):
        x = mt.tensor(a, requires_grad=True)
        mt.linalg.cond(x, p).backward()
        assert x.grad is not None
        expected = central_difference(lambda m, p=p: np.linalg.cond(m, p), [a], np.ones(()))[0]
        np.testing.assert_allclose(x.grad.to_numpy(), expected, rtol=1e-5, atol=1e-6)


# --- errors ---


def test_errors() -> None:
    ints = mt.tensor(np.eye(3, dtype=np.int64))
    for fn in (mt.linalg.qr, mt.linalg.eigh, mt.linalg.eigvalsh, mt.linalg.svd, mt.linalg.svdvals, mt.linalg.pinv,
               mt.linalg.matrix_rank, mt.linalg.cond, mt.qr, mt.svd, mt.pinverse, lambda a: mt.linalg.lstsq(a, a)):
        with pytest.raises(DTypeError):
            fn(ints)
    x = mt.tensor(TALL)
    with pytest.raises(ShapeError, match="linalg.eigh: A must be batches of square matrices, but they are 4 by 3"):
        mt.linalg.eigh(x)
    with pytest.raises(ShapeError, match="must have at least 2 dimensions"):
        mt.linalg.svd(x[0, 0])
    with pytest.raises(ValueError, match="qr received unrecognized mode 'full'"):
        mt.linalg.qr(x, mode="full")
    with pytest.raises(ValueError, match="Expected UPLO argument to be 'L' or 'U', but got X"):
        mt.linalg.eigh(mt.tensor(SYM), UPLO="X")
    with pytest.raises(ValueError, match="linalg.cond got an invalid norm type: 3"):
        mt.linalg.cond(x, 3)
    with pytest.raises(ShapeError, match="linalg.cond\\(ord=1\\): A must be batches of square matrices"):
        mt.linalg.cond(x, 1)
    with pytest.raises(LinAlgError, match="^linalg.svd: \\(Batch element 1\\): The algorithm failed to converge because "
                                          "the input matrix contained non-finite values.$"):
        mt.linalg.svdvals(mt.tensor(np.array([np.eye(2), [[math.nan, 1.0], [1.0, 2.0]]])))
    s = mt.linalg.svd(mt.tensor(np.array([np.eye(2), [[math.inf, 1.0], [1.0, 2.0]]]))).S.to_numpy()  # inf: nan, as torch
    assert np.isnan(s[1]).all() and (s[0] == 1).all()
    assert np.isnan(mt.linalg.eigvalsh(mt.tensor([[math.nan, 1.0], [1.0, 2.0]])).to_numpy()).all()
    b = mt.tensor(RHS)
    with pytest.raises(DTypeError, match="Expected input and other to have the same dtype"):
        mt.linalg.lstsq(x, b.float())
    with pytest.raises(ShapeError, match="input.size\\(-2\\) should match other.size\\(-2\\)"):
        mt.linalg.lstsq(x, b[:, :3])
    with pytest.raises(ShapeError, match="input.dim\\(\\) must be greater or equal to other.dim\\(\\)"):
        mt.linalg.lstsq(x[0], b)
    with pytest.raises(ValueError, match="parameter `driver` should be one of \\(gels, gelsy, gelsd, gelss\\)"):
        mt.linalg.lstsq(x, b, driver="gelsx")
    with pytest.raises(TypeError, match="linalg.qr\\(\\): argument 'A' \\(position 1\\) must be Tensor, not list"):
        mt.linalg.qr([[1.0]])


def test_backward_errors_and_non_convergence(monkeypatch: pytest.MonkeyPatch) -> None:
    x = mt.tensor(TALL, requires_grad=True)
    with pytest.raises(GradientError, match="not differentiable when mode='complete' and nrows > ncols"):
        mt.linalg.qr(x, mode="complete").Q.sum().backward()
    with pytest.raises(GradientError, match="which is not computed when mode='r'"):
        mt.linalg.qr(x, mode="r").R.sum().backward()
    mt.linalg.qr(x.mT, mode="complete").R.sum().backward()  # complete with m <= n is differentiable
    monkeypatch.setattr(linalg_decomp, "MAX_SWEEPS", 1)
    monkeypatch.setattr(linalg_svd, "MAX_SWEEPS", 1)
    with pytest.raises(LinAlgError, match="^linalg.eigh: \\(Batch element 0\\): The algorithm failed to converge"):
        mt.linalg.eigh(mt.tensor(RNG.normal(size=(2, 5, 5))))
    with pytest.raises(LinAlgError, match="^linalg.svd: The algorithm failed to converge"):
        mt.linalg.svd(mt.tensor(RNG.normal(size=(5, 5))))
