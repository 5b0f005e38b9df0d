"""Rank-1 and batch-summed products (addr, addbmm), matrix powers (matrix_power, Tensor.matrix_power,
linalg.matrix_power), the trapezoidal rule (trapezoid, trapz, cumulative_trapezoid), diagflat, and the creation
functions tril_indices, triu_indices and logspace against torch: values, dtypes, shapes and gradients, with batch
dims, broadcasting, zero-size dims, integer and bool dtypes and transposed inputs; and their errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from conftest import CPU_BACKENDS
from torch_oracle import case, check, run

import minitensor as mt
from minitensor import DTypeError, IndexOutOfRangeError, LinAlgError, ShapeError

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),  # the CUDA simulator's NumPy scalars
    pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:torch.trapz is deprecated:UserWarning"),
]

nan, inf = math.nan, math.inf
RNG = np.random.default_rng(5)


def normal(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return RNG.normal(size=shape).astype(dtype)


def on(L: Any, like: Any) -> dict[str, Any]:
    """Creation keywords for library L: minitensor's backend of ``like``, nothing for torch."""
    return {} if L is torch else {"backend": like.backend.name}


def well_conditioned(*shape: int, dtype: Any = np.float64) -> np.ndarray:
    """Square matrices near the identity (spectral radius about 1): safe to invert and to raise to a power."""
    n = shape[-1]
    return (np.eye(n) + 0.3 * RNG.normal(size=shape) / math.sqrt(n)).astype(dtype)


V3, V2 = normal(3), normal(2)
M32 = normal(3, 2)

# --- addr, addbmm ---

ADDR = [
    case(lambda L, m, u, v: (L.addr(m, u, v), m.addr(u, v, beta=0.5, alpha=-2), L.addr(m, u, v, alpha=0)), M32, V3, V2),
    case(lambda L, m, u, v: (L.addr(m[0], u, v), L.addr(m[:, :1], u, v), L.addr(m[0, 0], u, v, beta=3)), M32, V3, V2),  # broadcast
    case(lambda L, m, u, v: L.addr(m.t(), u, v[:3] * 2, beta=2), normal(3, 3), V3, normal(4)),  # transposed input
    case(lambda L, m, u, v: (L.addr(m, u, v, beta=0), L.addr(m[:0], u[:0], v), L.addr(m[:, :0], u, v[:0])),
         np.full((3, 2), nan, np.float32), V3, V2),
    case(lambda L, m, u, v: L.addr(m, u, v), np.zeros((0, 4), np.float32), np.zeros(0, np.float32), normal(4)),
    case(lambda L, m, u, v: L.addr(m, u, v, beta=-1, alpha=0.25), normal(4, 5, dtype=np.float64), normal(4, dtype=np.float64),
         normal(5, dtype=np.float64)),
    # promoted to float64; torch's forward promotes but its backward fails, so gradients against torch on promoted operands
    case(lambda L, m, u, v: L.addr(m, u, v), M32, normal(3, dtype=np.float64), V2, grad=False),
    case(lambda L, m, u, v: L.addr(m, u, v) if L is mt else L.addr(m.double(), u, v.double()), M32, normal(3, dtype=np.float64), V2),
    case(lambda L, m, u, v: (L.addr(m, u, v, beta=2, alpha=3), L.addr(m.int(), u.int(), v.int(), alpha=-1)),
         np.arange(6).reshape(3, 2), np.array([1, -2, 3]), np.array([4, 5])),
    case(lambda L, m, u, v: L.addr(m, u, v), np.arange(6).reshape(3, 2), V3, V2),  # int input, float vectors
    case(lambda L, m, u, v: (L.addr(m, u, v), L.addr(m, u, v, beta=False), L.addr(m, u, v, alpha=0), L.addr(m[0], u, v, beta=2)),
         np.array([[True, False], [False, False], [False, True]]), np.array([True, False, True]), np.array([False, True])),
    case(lambda L, m, u, v: L.addr(m, u, v), M32, np.array([True, False, True]), np.array([True, True])),  # bool vectors
]

ADDBMM = [
    case(lambda L, m, a, b: (L.addbmm(m, a, b), m.addbmm(a, b, beta=0.5, alpha=2), L.addbmm(m, a[:1], b[:1], alpha=-1)),
         normal(2, 5), normal(4, 2, 3), normal(4, 3, 5)),
    case(lambda L, m, a, b: (L.addbmm(m[0], a, b), L.addbmm(m[:1], a, b), L.addbmm(m[0, 0], a, b, beta=2)),
         normal(2, 5), normal(3, 2, 4), normal(3, 4, 5)),  # broadcast input
    case(lambda L, m, a, b: L.addbmm(m.t(), a.transpose(1, 2), b.permute(0, 2, 1), beta=-1),
         normal(3, 2), normal(4, 3, 2), normal(4, 3, 3)),  # transposed operands
    case(lambda L, m, a, b: (L.addbmm(m, a[:0], b[:0]), L.addbmm(m, a[:, :, :0], b[:, :0]), L.addbmm(m, a[:0], b[:0], beta=0),
                             L.addbmm(m[:0], a[:, :0], b)), normal(2, 5), normal(3, 2, 4), normal(3, 4, 5)),  # zero-size dims
    case(lambda L, m, a, b: L.addbmm(m, a, b, beta=0), np.full((2, 2), nan, np.float32), normal(2, 2, 3), normal(2, 3, 2)),
    case(lambda L, m, a, b: L.addbmm(m, a, b, beta=0.25, alpha=-0.5), normal(3, 4, dtype=np.float64), normal(5, 3, 2, dtype=np.float64),
         normal(5, 2, 4, dtype=np.float64)),
    # mixed dtypes are promoted (as matmul here; torch rejects them): against torch on promoted operands
    case(lambda L, m, a, b: L.addbmm(m, a, b) if L is mt else L.addbmm(m.double(), a, b.double()),
         normal(2, 2), normal(3, 2, 4, dtype=np.float64), normal(3, 4, 2)),
    case(lambda L, m, a, b: (L.addbmm(m, a, b, alpha=3), L.addbmm(m.int(), a.int(), b.int(), beta=-2)),
         RNG.integers(-5, 5, (2, 3)), RNG.integers(-5, 5, (4, 2, 2)), RNG.integers(-5, 5, (4, 2, 3))),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_addr(backend: str) -> None:
    run(backend, ADDR)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_addbmm(backend: str) -> None:
    run(backend, ADDBMM)


# --- matrix_power ---

A3 = well_conditioned(3, 3)
BATCH = well_conditioned(2, 3, 4, 4, dtype=np.float32)

MATRIX_POWER = [
    case(lambda L, a: tuple(L.matrix_power(a, n) for n in (0, 1, 2, 3, 4, 5, 7, 8, 13)), A3),
    case(lambda L, a: tuple(L.matrix_power(a, n) for n in (-1, -2, -3, -6)), A3),
    case(lambda L, a: (L.matrix_power(a, 3), a.matrix_power(-2), L.linalg.matrix_power(a, 0), L.linalg.matrix_power(a, 6)), BATCH,
         rtol=1e-4, atol=1e-5),
    case(lambda L, a: (a.t().matrix_power(5), L.matrix_power(a.t(), -1)), well_conditioned(3, 3, dtype=np.float32), rtol=1e-4),
    case(lambda L, a: (L.matrix_power(a, 2), L.matrix_power(a[0], np.int64(3))), well_conditioned(1, 2, 2)),  # NumPy int n
    case(lambda L, a: tuple(L.matrix_power(a, n) for n in (0, 1, 3, -1)), np.zeros((0, 2, 2), np.float32)),  # zero-size batch
    case(lambda L, a: tuple(L.matrix_power(a, n) for n in (0, 1, 2, -2)), np.zeros((2, 0, 0))),  # 0 x 0 matrices
    case(lambda L, a: (L.matrix_power(a, 0), L.matrix_power(a, 3), L.matrix_power(a.int(), 4), L.matrix_power(a, 1)),
         RNG.integers(-3, 4, (2, 3, 3))),
    case(lambda L, a: (L.matrix_power(a, 0), L.matrix_power(a, 1)), np.array([[True, False], [True, True]])),
    case(lambda L, a: L.matrix_power(a, 0), np.array([[inf, nan], [1.0, 2.0]], np.float32)),  # n = 0 ignores the values
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_matrix_power(backend: str) -> None:
    run(backend, MATRIX_POWER)


def test_matrix_power_copies() -> None:
    """n = 1 is a copy (as torch's clone), not a view; n = 0 requires grad when the input does, with gradient 0."""
    a = mt.tensor(A3, requires_grad=True)
    one = mt.matrix_power(a, 1)
    one.detach().add_(1)
    assert np.array_equal(a.detach().to_numpy(), A3)
    zero = a.matrix_power(0)
    assert zero.requires_grad and zero.tolist() == np.eye(3).tolist()
    zero.sum().backward()
    assert a.grad is not None and not a.grad.to_numpy().any()


# --- the trapezoidal rule ---

Y = normal(2, 3, 4)
XS = np.array([0.0, 0.5, 2.0, 2.25], np.float32)

TRAPEZOID = [
    case(lambda L, y: (L.trapezoid(y), L.trapezoid(y, dx=0.5), L.trapezoid(y, dx=-2), L.trapezoid(y, dim=1), L.trapezoid(y, dim=0, dx=3)),
         Y),
    case(lambda L, y, x: (L.trapezoid(y, x), L.trapezoid(y, x=x[:3], dim=1), L.trapezoid(y.transpose(0, 2), x, dim=0)), Y, XS),
    case(lambda L, y, x: (L.trapezoid(y, x), L.trapezoid(y, x[0]), L.trapezoid(y, x[:, :1]), L.trapezoid(y, x[0, :, :1], dim=1)),
         Y, normal(2, 3, 4).cumsum(-1)),  # x of y's shape, broadcasting (fewer dims, size-1 dims)
    case(lambda L, y, x: (L.trapezoid(y, x, dim=0), L.cumulative_trapezoid(y, x, dim=0)), normal(3), normal(3, 2)),  # x of more dims
    case(lambda L, y: (L.trapezoid(y), L.trapezoid(y, dx=2), L.trapezoid(y[:, :1]), L.trapezoid(y.int(), dx=0.5)),
         RNG.integers(-4, 5, (3, 5))),  # integers give float32
    case(lambda L, y, x: (L.trapezoid(y, x), L.trapezoid(y.int(), x.int())), RNG.integers(-4, 5, (3, 4)), np.array([0, 1, 3, 6])),
    case(lambda L, y, x: (L.trapezoid(y, x), L.cumulative_trapezoid(y, x)), Y, XS.astype(np.float64)),  # promoted to float64
    case(lambda L, y: (L.trapezoid(y, dx=0.1), L.cumulative_trapezoid(y, dim=0)), normal(5, 3, dtype=np.float64)),
    case(lambda L, y: (L.trapezoid(y), L.trapezoid(y, dim=0), L.trapezoid(y[:, :1]), L.cumulative_trapezoid(y[:, :1])),
         normal(0, 3)),  # zero-size dims
    case(lambda L, y: (L.trapezoid(y), L.trapezoid(y.long(), dx=0.5), L.trapezoid(y, L.tensor([], **on(L, y))),
                       L.trapezoid(y.bool())),
         np.zeros((2, 0), np.float32), grad=False),  # no samples: zeros of y's dtype, even int64 and bool
    case(lambda L, y: (L.trapezoid(y), L.trapezoid(y, dim=0), L.trapezoid(y[:1], dim=0), L.trapezoid(y[:, :1])), normal(2, 1)),
    case(lambda L, y: (L.trapezoid(y), L.trapezoid(y, L.tensor([0.0, 1.0, 2.0], **on(L, y))), L.cumulative_trapezoid(y)),
         np.array([inf, 1.0, 2.0], np.float32), grad=False),  # torch: nan with a constant spacing, inf with points
    case(lambda L, y: (L.trapz(y), L.trapz(y, dx=0.25, dim=0), L.trapz(y.long()), L.trapezoid(y, dx=L.tensor(2.5))), normal(3, 4)),
    case(lambda L, y, x: (L.trapz(y, x), L.trapz(y, x[:3], dim=0)), normal(3, 4), XS),
]

CUMULATIVE = [
    case(lambda L, y: (L.cumulative_trapezoid(y), L.cumulative_trapezoid(y, dx=0.5), L.cumulative_trapezoid(y, dim=1, dx=-3),
                       L.cumulative_trapezoid(y, dim=0)), Y),
    case(lambda L, y, x: (L.cumulative_trapezoid(y, x), L.cumulative_trapezoid(y, x[:3], dim=-2),
                          L.cumulative_trapezoid(y.transpose(1, 2), x, dim=1)), Y, XS),
    case(lambda L, y, x: (L.cumulative_trapezoid(y, x), L.cumulative_trapezoid(y, x[1]), L.cumulative_trapezoid(y, x[:1, :2], dim=1)),
         Y, normal(2, 3, 4).cumsum(-1)),
    case(lambda L, y, x: (L.cumulative_trapezoid(y), L.cumulative_trapezoid(y, dx=2), L.cumulative_trapezoid(y, x)),
         RNG.integers(-4, 5, (3, 4)), np.array([0, 2, 3, 7])),  # integers give float32
    case(lambda L, y: (L.cumulative_trapezoid(y), L.cumulative_trapezoid(y, dim=0), L.cumulative_trapezoid(y[:, :1]),
                       L.cumulative_trapezoid(y.long()), L.cumulative_trapezoid(y, L.tensor([], **on(L, y)))),
         np.zeros((2, 0), np.float32)),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_trapezoid(backend: str) -> None:
    run(backend, TRAPEZOID)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_cumulative_trapezoid(backend: str) -> None:
    run(backend, CUMULATIVE)


# --- diagflat ---

DIAGFLAT = [
    case(lambda L, a: (L.diagflat(a), L.diagflat(a, 1), a.diagflat(-2), L.diagflat(a, offset=4)), normal(3)),
    case(lambda L, a: (L.diagflat(a), L.diagflat(a.t(), -1), L.diagflat(a[0, 0]), L.diagflat(a[:, :0], 2)), normal(2, 3)),
    case(lambda L, a: (L.diagflat(a), a.diagflat(1)), normal(2, 1, 2, dtype=np.float64)),
    case(lambda L, a: (L.diagflat(a), L.diagflat(a, -1)), np.zeros(0, np.float32)),
    case(lambda L, a: (L.diagflat(a, 1), L.diagflat(a.bool(), -1)), np.array([[3, 0], [-1, 2]])),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_diagflat(backend: str) -> None:
    run(backend, DIAGFLAT)


# --- creation: tril_indices, triu_indices, logspace ---

SIZES = [(3, 3, 0), (3, 4, 1), (4, 3, -1), (5, 2, 1), (2, 5, -1), (3, 3, -5), (3, 3, 10), (3, 3, -2), (0, 3, 0), (3, 0, 0), (1, 1, 0),
         (6, 4, 2)]
ONE = np.zeros(1, np.int64)  # check's input, for the backend of the created tensors

CREATION = [
    case(lambda L, a: tuple(L.tril_indices(r, c, k, **on(L, a)) for r, c, k in SIZES), ONE),
    case(lambda L, a: tuple(L.triu_indices(r, c, k, **on(L, a)) for r, c, k in SIZES), ONE),
    case(lambda L, a: (L.tril_indices(4, 4, dtype=L.int32, **on(L, a)), L.triu_indices(3, 5, offset=2, dtype=L.int64, **on(L, a)),
                       L.tril_indices(3, 2, np.int64(-1), **on(L, a))), ONE),
    case(lambda L, a: (L.logspace(0, 2, 3, **on(L, a)), L.logspace(-3.5, 5.25, 11, **on(L, a)), L.logspace(3, -1, 6, 2, **on(L, a)),
                       L.logspace(0, 3, 4, base=0.5, **on(L, a)), L.logspace(1, 3, 1, **on(L, a)), L.logspace(1, 3, 0, **on(L, a)),
                       L.logspace(L.tensor(0.5), L.tensor(1.5), 3, **on(L, a)), L.logspace(-1, 1, 3, base=0, **on(L, a))), ONE),
    case(lambda L, a: (L.logspace(0, 1, 5, dtype=L.float64, **on(L, a)), L.logspace(-2, 2.5, 9, base=3, dtype=L.float64, **on(L, a)),
                       L.logspace(0, 3, 4, base=-2, **on(L, a)), L.logspace(0, 1, 3, base=-2, **on(L, a))), ONE),
    case(lambda L, a: (L.logspace(0, 3, 4, dtype=L.int64, **on(L, a)), L.logspace(0, 1, 5, dtype=L.int64, **on(L, a)),
                       L.logspace(0, 2, 5, base=3, dtype=L.int32, **on(L, a)), L.logspace(0.5, 2.5, 3, dtype=L.int64, **on(L, a)),
                       L.logspace(0, 2, 5, base=2.5, dtype=L.int64, **on(L, a)), L.logspace(-2, 2, 5, dtype=L.int64, **on(L, a))), ONE),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_creation(backend: str) -> None:
    run(backend, CREATION)


def test_creation_options() -> None:
    """Created tensors land on the requested backend (``backend=`` or ``device=``), and logspace honours
    requires_grad."""
    assert mt.tril_indices(3, 3, backend="simple").backend.name == "simple"
    assert mt.triu_indices(2, 4, device="cpu").dtype == mt.int64
    out = mt.logspace(0, 1, 4, requires_grad=True, dtype=mt.float64)
    assert out.requires_grad and out.dtype == mt.float64
    assert mt.logspace(0, 1, 4).dtype == mt.get_default_dtype()


# --- every backend (cuda included): one tiny case each ---

TINY = [
    case(lambda L, m, u, v: L.addr(m, u, v, beta=0.5), M32, V3, V2),
    case(lambda L, m, a, b: L.addbmm(m, a, b, alpha=2), normal(2, 3), normal(2, 2, 2), normal(2, 2, 3)),
    case(lambda L, a: (L.matrix_power(a, 3), L.matrix_power(a, 0)), well_conditioned(2, 2, dtype=np.float32), rtol=1e-4),
    case(lambda L, y, x: (L.trapezoid(y, x), L.cumulative_trapezoid(y, dx=0.5)), normal(2, 3), np.array([0.0, 1.0, 3.0], np.float32)),
    case(lambda L, a: L.diagflat(a, 1), normal(2)),
    case(lambda L, a: (L.tril_indices(2, 3, **on(L, a)), L.triu_indices(3, 2, -1, **on(L, a)), L.logspace(0, 2, 3, **on(L, a))), ONE),
]


def test_on_every_backend(backend: str) -> None:
    for i, (fn, arrays, options) in enumerate(TINY):
        try:
            check(backend, fn, *arrays, **options)
        except AssertionError as error:
            raise AssertionError(f"case {i}: {error}") from error


def test_matrix_power_inverse_on_every_backend(backend: str) -> None:
    a = mt.tensor([[2.0, 1.0], [1.0, 1.0]], backend=backend, dtype=mt.float64)
    assert np.allclose(mt.linalg.matrix_power(a, -2).to_numpy(), [[2.0, -3.0], [-3.0, 5.0]])


# --- errors ---


def test_product_errors() -> None:
    m, u, v = mt.ones(3, 2), mt.ones(3), mt.ones(2)
    with pytest.raises(ShapeError, match="addr: Expected 1-D argument vec1, but got 2-D \\(shape \\(1, 3\\)\\)"):
        mt.addr(m, u.reshape(1, 3), v)
    with pytest.raises(ShapeError, match="addr: Expected 1-D argument vec2, but got 0-D"):
        m.addr(u, v[0])
    with pytest.raises(ShapeError, match="addr\\(\\): input of shape \\(3,\\) cannot be broadcast to the product's shape \\(3, 2\\)"):
        mt.addr(u, u, v)
    with pytest.raises(ShapeError, match="input of shape \\(1, 3, 2\\) cannot be broadcast"):
        mt.addr(m.reshape(1, 3, 2), u, v)
    with pytest.raises(DTypeError, match="addr\\(\\): value=1.5 would be truncated for int64"):
        mt.addr(m.long(), u.long(), v.long(), alpha=1.5)
    with pytest.raises(DTypeError, match="addr\\(\\): value=0.5 would be truncated"):
        mt.addr(m.bool(), u.bool(), v.bool(), beta=0.5)
    with pytest.raises(TypeError, match="addr\\(\\): argument 'vec2' \\(position 3\\) must be Tensor, not list"):
        mt.addr(m, u, [1.0, 2.0])  # type: ignore[arg-type]
    b1, b2 = mt.ones(4, 2, 3), mt.ones(4, 3, 5)
    with pytest.raises(ShapeError, match="addbmm: batch1 and batch2 must have the same number of batches, got 4 and 3 "
                                         "\\(shapes \\(4, 2, 3\\) and \\(3, 3, 5\\)\\)"):
        mt.addbmm(mt.zeros(2, 5), b1, b2[:3])
    with pytest.raises(ShapeError, match="addbmm: incompatible matrix sizes for bmm \\(2x3 and 2x5; "
                                         "shapes \\(4, 2, 3\\) and \\(4, 2, 5\\)\\)"):
        mt.addbmm(mt.zeros(2, 5), b1, mt.ones(4, 2, 5))
    with pytest.raises(ShapeError, match="addbmm: batch2 must be a 3D tensor, got a 2-D tensor of shape \\(3, 5\\)"):
        mt.zeros(2, 5).addbmm(b1, b2[0])
    with pytest.raises(ShapeError, match="input of shape \\(3, 5\\) cannot be broadcast to the product's shape \\(2, 5\\)"):
        mt.addbmm(mt.zeros(3, 5), b1, b2)
    with pytest.raises(DTypeError, match="\"addbmm\" not implemented for 'Bool'"):
        mt.addbmm(mt.zeros(2, 5), b1.bool(), b2.bool())


def test_matrix_power_errors() -> None:
    with pytest.raises(ShapeError, match="A must be batches of square matrices, but they are 2 by 3 matrices \\(shape \\(4, 2, 3\\)\\)"):
        mt.matrix_power(mt.ones(4, 2, 3), 2)
    with pytest.raises(ShapeError, match="but they are 2 by 3 matrices \\(shape \\(2, 3\\)\\)"):
        mt.linalg.matrix_power(mt.ones(2, 3), 0)
    with pytest.raises(ShapeError, match="must have at least 2 dimensions, got shape \\(3,\\)"):
        mt.ones(3).matrix_power(2)
    with pytest.raises(DTypeError, match="n=-1 < 0 needs the inverse, so a float tensor, got int64 \\(shape \\(2, 2\\)\\)"):
        mt.matrix_power(mt.ones(2, 2, dtype=mt.int64), -1)
    with pytest.raises(DTypeError, match="\"matrix_power\" not implemented for 'Bool'"):
        mt.matrix_power(mt.ones(2, 2, dtype=mt.bool), 2)
    with pytest.raises(LinAlgError, match="linalg.inv: The diagonal element 2 is zero"):
        mt.matrix_power(mt.ones(2, 2), -1)
    with pytest.raises(TypeError, match="argument 'n' \\(position 2\\) must be int, not float"):
        mt.matrix_power(mt.eye(2), 2.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be int, not bool"):
        mt.eye(2).matrix_power(True)
    with pytest.raises(TypeError, match="linalg.matrix_power\\(\\): argument 'input' \\(position 1\\) must be Tensor, not list"):
        mt.linalg.matrix_power([[1.0]], 2)


def test_trapezoid_errors() -> None:
    y = mt.ones(2, 3)
    with pytest.raises(ShapeError, match="trapezoid: There must be one `x` value for each sample point: x has shape \\(2,\\), "
                                         "y has shape \\(2, 3\\) with 3 samples along dim 1"):
        mt.trapezoid(y, mt.ones(2))
    with pytest.raises(ShapeError, match="cumulative_trapezoid: There must be one `x` value"):
        mt.cumulative_trapezoid(mt.ones(2, 0), mt.ones(4))  # checked even without samples (as torch)
    with pytest.raises(ShapeError, match="trapezoid: the spacings of x \\(shape \\(3, 3\\).* intervals of y \\(shape \\(2, 3\\)"):
        mt.trapezoid(y, mt.ones(3, 3))
    with pytest.raises(ShapeError, match="trapz: the spacings of x"):
        mt.trapz(y, mt.ones(1, 2, 3))
    with pytest.raises(DTypeError, match="trapezoid: received a bool tensor \\(shape \\(2, 3\\)\\), but bool is not supported"):
        mt.trapezoid(y.bool())
    with pytest.raises(DTypeError, match="received a bool tensor \\(shape \\(3,\\)\\)"):
        mt.trapezoid(y, mt.ones(3).bool())
    with pytest.raises(DTypeError, match="cumulative_trapezoid: received a bool tensor"):
        mt.cumulative_trapezoid(mt.ones(2, 0).bool())
    with pytest.raises(TypeError, match="pass either the sample points x or their constant spacing dx, not both"):
        mt.trapezoid(y, mt.ones(3), dx=2)
    with pytest.raises(TypeError, match="trapz\\(\\): argument 'x' \\(position 2\\) must be Tensor, not int; pass a constant spacing"):
        mt.trapz(y, 2)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="dx must be a real number, got bool True"):
        mt.cumulative_trapezoid(y, dx=True)
    with pytest.raises(TypeError, match="dx must be a real number, got a tensor of shape \\(2,\\)"):
        mt.trapezoid(y, dx=mt.ones(2))
    with pytest.raises(TypeError, match="trapezoid\\(\\): argument 'y' \\(position 1\\) must be Tensor, not list"):
        mt.trapezoid([1.0, 2.0])  # type: ignore[arg-type]
    with pytest.raises(IndexOutOfRangeError, match="dim 2 is out of range for a tensor with 2 dims"):
        mt.trapezoid(y, dim=2)
    with pytest.raises(IndexOutOfRangeError, match="dim -1 is out of range for a tensor with 0 dims"):
        mt.cumulative_trapezoid(mt.tensor(1.0))


def test_build_and_creation_errors() -> None:
    with pytest.raises(TypeError, match="diagflat\\(\\): argument 'offset' \\(position 2\\) must be int, not float"):
        mt.diagflat(mt.ones(2), 1.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="diagflat\\(\\): argument 'input' \\(position 1\\) must be Tensor, not list"):
        mt.diagflat([1.0])
    with pytest.raises(ValueError, match="tril_indices\\(\\): row must be non-negative, got -1"):
        mt.tril_indices(-1, 3)
    with pytest.raises(ValueError, match="triu_indices\\(\\): col must be non-negative, got -2"):
        mt.triu_indices(3, -2)
    with pytest.raises(TypeError, match="tril_indices\\(\\): argument 'row' must be int, not float"):
        mt.tril_indices(2.0, 2)  # type: ignore[arg-type]
    with pytest.raises(DTypeError, match="triu_indices\\(\\) needs an integer dtype \\(int64 or int32\\), got float32"):
        mt.triu_indices(2, 2, dtype=mt.float32)
    with pytest.raises(ValueError, match="logspace\\(\\) needs steps >= 0, got -1"):
        mt.logspace(0, 1, -1)
    with pytest.raises(TypeError, match="argument 'steps' \\(position 3\\) must be int, not float"):
        mt.logspace(0, 1, 2.0)  # type: ignore[arg-type]
    with pytest.raises(DTypeError, match="logspace\\(\\) is not implemented for bool"):
        mt.logspace(0, 1, 2, dtype=mt.bool)
