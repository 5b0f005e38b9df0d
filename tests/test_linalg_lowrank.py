"""linalg_lowrank.py: the randomized ``svd_lowrank pca_lowrank`` and the legacy ``frobenius_norm nuclear_norm``.

The randomized SVDs draw their probe from each library's own generator, so they are compared where the result does
not depend on it: on matrices of rank <= q, where they give the exact SVD up to the sign of each singular pair. The
singular values and the reconstruction U diag(S) V^T are compared with torch and NumPy, the singular vectors after
fixing their signs; the gradients of sign-invariant functions of (U, S, V) (S, U**2, V**2) with torch's, on full-rank
matrices with q = min(m, n), in A and in M. The norms are compared with torch (values and gradients).

The CUDA simulator runs each thread in Python, so its cases are tiny."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import BACKENDS, CPU_BACKENDS
from torch_oracle import Case, case, run

import minitensor as mt
from minitensor import DTypeError, ShapeError

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:.*_norm is deprecated and it is just left for JIT:UserWarning")  # torch's legacy norms

RNG = np.random.default_rng(5)


def low_rank(shape: tuple[int, ...], rank: int) -> np.ndarray:
    """A (*, m, n) array of rank ``rank`` with well-separated singular values."""
    *batch, m, n = shape
    return RNG.normal(size=(*batch, m, rank)) @ (np.diag(np.arange(rank, 0, -1) * 2.0) @ RNG.normal(size=(rank, n)))


def signed(u: np.ndarray, v: np.ndarray, rank: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``rank`` singular pairs with the largest-magnitude entry of each column of u made positive."""
    u, v = u[..., :rank], v[..., :rank]
    rows = np.abs(u).argmax(-2)[..., None, :]
    flip = np.sign(np.take_along_axis(u, rows, -2))
    return u * flip, v * flip


def check_decomposition(ours: tuple[mt.Tensor, ...], theirs: tuple[Any, ...], target: np.ndarray, rank: int) -> None:
    """Equal shapes and dtypes, equal singular values (the nonzero ones; the others ~0), U diag(S) V^T = target, and
    equal leading singular vectors up to sign."""
    u, s, v = (t.to_numpy() for t in ours)
    tu, ts, tv = (t.detach().numpy() for t in theirs)
    for got, want in zip(ours, theirs):
        assert got.shape == tuple(want.shape) and got.dtype.name == str(want.dtype).removeprefix("torch.")
    tol = 1e-4 if s.dtype == np.float32 else 1e-10
    scale = np.abs(target).max()
    np.testing.assert_allclose(s[..., :rank], ts[..., :rank], rtol=tol)
    np.testing.assert_allclose(s[..., :rank], np.linalg.svd(target, compute_uv=False)[..., :rank], rtol=tol)
    assert np.abs(s[..., rank:]).max(initial=0) < tol * scale
    np.testing.assert_allclose((u * s[..., None, :]) @ np.swapaxes(v, -1, -2), target, atol=tol * scale)
    gram = np.swapaxes(u, -1, -2) @ u
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(u.shape[-1]), gram.shape), atol=tol)  # orthonormal columns
    for got, want in zip(signed(u, v, rank), signed(tu, tv, rank)):
        np.testing.assert_allclose(got, want, atol=tol * 10)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("shape, rank, q", [((6, 5), 2, 4), ((3, 5, 7), 3, 3), ((2, 8, 4), 4, 6)], ids=str)
def test_svd_lowrank_values(backend: str, shape: tuple[int, ...], rank: int, q: int) -> None:
    """Tall, wide and batched matrices of rank <= q (q > min(m, n) too), with and without M, float64 and float32
    (cuda: in test_against_torch)."""
    a = low_rank(shape, rank)
    mean = RNG.normal(size=shape[-1:])
    x, m = mt.tensor(a + mean, backend=backend), mt.tensor(mean, backend=backend)
    ta, tm = torch.tensor(a + mean), torch.tensor(mean)
    check_decomposition(mt.svd_lowrank(x, q=q, M=m), torch.svd_lowrank(ta, q=q, M=tm), a, rank)
    check_decomposition(mt.svd_lowrank(x - m, q, 1), torch.svd_lowrank(ta - tm, q, 1), a, rank)
    check_decomposition(mt.svd_lowrank((x - m).float(), q), torch.svd_lowrank((ta - tm).float(), q), a, rank)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_pca_lowrank_values(backend: str) -> None:
    """pca_lowrank centres the columns (``center``) and takes q = min(6, m, n) by default."""
    a = low_rank((2, 7, 5), 2) + 3.0
    centred = a - a.mean(-2, keepdims=True)
    x, ta = mt.tensor(a, backend=backend), torch.tensor(a)
    check_decomposition(mt.pca_lowrank(x), torch.pca_lowrank(ta), centred, 2)
    check_decomposition(mt.pca_lowrank(x, q=2, niter=0), torch.pca_lowrank(ta, q=2, niter=0), centred, 2)
    check_decomposition(mt.pca_lowrank(x, 3, center=False), torch.pca_lowrank(ta, 3, center=False), a, 3)


def sign_free(lib: Any, u: Any, s: Any, v: Any) -> tuple[Any, ...]:
    """Functions of (U, S, V) that do not depend on the signs of the singular pairs."""
    return s, u * u, v * v, (u * s.unsqueeze(-2)) @ v.mT


CPU_CASES: list[Case] = [  # full rank, q = min(m, n): the exact SVD, so the gradients are determined
    case(lambda L, a: sign_free(L, *L.svd_lowrank(a, q=3)), RNG.normal(size=(5, 3))),
    case(lambda L, a: sign_free(L, *L.svd_lowrank(a, 3, niter=1)), RNG.normal(size=(2, 3, 5))),
    case(lambda L, a, m: sign_free(L, *L.svd_lowrank(a, 3, M=m)), RNG.normal(size=(2, 4, 3)), RNG.normal(size=(4, 1))),
    case(lambda L, a: sign_free(L, *L.pca_lowrank(a, q=3)), RNG.normal(size=(6, 3))),
    case(lambda L, a: sign_free(L, *L.svd_lowrank(a, q=3)), RNG.normal(size=(5, 3)).astype(np.float32), rtol=2e-3, atol=2e-4),
    # the legacy norms
    case(lambda L, x: (L.frobenius_norm(x, (0, 1)), L.frobenius_norm(x, (-1, -3), True), L.frobenius_norm(x, 1),
                       L.frobenius_norm(x, [2]), L.frobenius_norm(x, ()), L.frobenius_norm(x, dim=(), keepdim=True),
                       L.frobenius_norm(input=x[0], dim=(0, 1))), RNG.normal(size=(2, 3, 4))),
    case(lambda L, x: (L.frobenius_norm(x, (0, 1)), L.frobenius_norm(x[:0], (0, 1)), L.frobenius_norm(x[0, 0], 0)),
         np.zeros((2, 3))),  # zero norms: gradient 0, as torch
    case(lambda L, x: L.frobenius_norm(x, (1, 2)), RNG.normal(size=(2, 3, 4)).astype(np.float32), rtol=1e-4, atol=1e-5),
    case(lambda L, x: (L.nuclear_norm(x), L.nuclear_norm(x, True), L.nuclear_norm(x, keepdim=True), L.nuclear_norm(x, (0, 2)),
                       L.nuclear_norm(x, (2, 0), True), L.nuclear_norm(x, dim=(-1, 1)), L.nuclear_norm(input=x[0])),
         RNG.normal(size=(2, 3, 4))),
    case(lambda L, x: (L.nuclear_norm(x), L.nuclear_norm(x[:, :0])), RNG.normal(size=(3, 2)).astype(np.float32), rtol=1e-4, atol=1e-5),
]

CUDA_CASES: list[Case] = [
    case(lambda L, a: (*sign_free(L, *L.svd_lowrank(a, q=2)), L.frobenius_norm(a, (0, 1)), L.nuclear_norm(a)), RNG.normal(size=(3, 2))),
]


@pytest.mark.parametrize("backend, index", [(b, i) for b in CPU_BACKENDS for i in range(len(CPU_CASES))] +
                         [("cuda", i) for i in range(len(CUDA_CASES)) if "cuda" in BACKENDS], ids=str)
def test_against_torch(backend: str, index: int) -> None:
    cases = CUDA_CASES if backend == "cuda" else CPU_CASES
    run(backend, cases[index : index + 1])


def test_random_stream() -> None:
    """The probe comes from the shared generator: the same seed gives the same result, another seed another basis;
    a rank-deficient A with q > rank still reconstructs; empty shapes follow torch's."""
    a = mt.tensor(low_rank((6, 5), 2))
    mt.manual_seed(3)
    first = mt.svd_lowrank(a, q=2, niter=0)
    mt.manual_seed(3)
    again = mt.svd_lowrank(a, q=2, niter=0)
    assert all(x.tolist() == y.tolist() for x, y in zip(first, again))
    shapes = [tuple(t.shape) for t in mt.svd_lowrank(a, q=0)] + [tuple(t.shape) for t in mt.svd_lowrank(a[:0], q=2)]
    expected = [tuple(t.shape) for t in torch.svd_lowrank(torch.ones(6, 5, dtype=torch.float64), q=0)]
    expected += [tuple(t.shape) for t in torch.svd_lowrank(torch.ones(0, 5, dtype=torch.float64), q=2)]
    assert shapes == expected
    assert isinstance(first, tuple) and isinstance(mt.pca_lowrank(a), tuple)


def test_errors() -> None:
    x = mt.tensor(np.ones((4, 3)))
    for q in (-1, 4):
        with pytest.raises(ValueError, match=f"^q\\(={q}\\) must be non-negative integer and not greater than min\\(m, n\\)=3$"):
            mt.pca_lowrank(x, q=q)
    with pytest.raises(ValueError, match="^niter\\(=-1\\) must be non-negative integer$"):
        mt.pca_lowrank(x, niter=-1)
    with pytest.raises(ValueError, match="svd_lowrank: q\\(=-2\\) must be a non-negative integer"):
        mt.svd_lowrank(x, q=-2)
    with pytest.raises(ShapeError, match="svd_lowrank: The input tensor A must have at least 2 dimensions"):
        mt.svd_lowrank(x[0])
    with pytest.raises(DTypeError, match="pca_lowrank: Expected a floating point .* Got Long"):
        mt.pca_lowrank(x.long())
    with pytest.raises(TypeError, match="argument 'M' must be Tensor or None, not list"):
        mt.svd_lowrank(x, M=[1.0])
    with pytest.raises(TypeError, match="frobenius_norm\\(\\): argument 'dim' \\(position 2\\) must be tuple of ints, not NoneType"):
        mt.frobenius_norm(x, None)  # type: ignore[arg-type]
    with pytest.raises(ShapeError, match="^frobenius_norm: Expected at most 2 dimensions, but got 3 dimensions instead."):
        mt.frobenius_norm(x, (0, 1, 0))
    with pytest.raises(ShapeError, match="names a dim more than once"):
        mt.frobenius_norm(x, (1, 1))
    with pytest.raises(DTypeError, match="frobenius_norm: norm\\(\\): input dtype should be either floating point or complex. "
                                         "Got Long instead."):
        mt.frobenius_norm(x.long(), (0, 1))
    with pytest.raises(TypeError, match="nuclear_norm\\(\\): argument 'input' \\(position 1\\) must be Tensor, not list"):
        mt.nuclear_norm([[1.0]])  # type: ignore[arg-type]
    with pytest.raises(ShapeError, match="^linalg.matrix_norm: dims must be different. Got \\(1, 1\\)"):
        mt.nuclear_norm(x, 1)  # an int stands for (d, d), as in torch
    with pytest.raises(ShapeError, match="^linalg.matrix_norm: The input tensor A must have at least 2 dimensions"):
        mt.nuclear_norm(x[0])
    with pytest.raises(ShapeError, match="^linalg.matrix_norm: dim must be a 2-tuple"):
        mt.nuclear_norm(x, (0,))
