"""Composite pointwise ops (frac, copysign, fmax, ...), products (trace, kron, cross, addmm, cdist, ...) and selection
(tensor_split, rot90, take, cummax, logcumsumexp) against torch, on every backend: values, dtypes, shapes and
gradients, with broadcasting, a zero-size dim and transposed input; and their errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from torch_oracle import case, run

import minitensor as mt
from minitensor import DTypeError, IndexOutOfRangeError, ShapeError

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.filterwarnings("ignore:Using torch.cross without specifying the dim"),  # torch's, for dim=None
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),  # the CUDA simulator's NumPy scalars (inf - inf)
]

nan, inf = math.nan, math.inf
A = np.array([[0.5, -1.25, 2.0], [3.0, 0.25, -0.75]], dtype=np.float32)
B = np.array([1.5, -0.5, 4.0], dtype=np.float32)
C = np.array([[2.0], [-3.0]], dtype=np.float32)
INTS = np.array([[1, -2, 0], [4, 3, -1]])
E = np.zeros((0, 3), np.float32)


# --- pointwise ---

SINC = np.array([[0.0, 0.5, -1.25], [2.0, 0.125, -3.0]], np.float32)
SIGNS = np.array([-1.5, 0.0, -0.0, 2.0, inf, -inf], np.float32)
UNIT = np.array([0.1, 0.5, 0.9, 0.25], np.float32)
NAN_A = np.array([1.0, nan, 3.0, nan, 2.0, 2.0], np.float32)
NAN_B = np.array([0.0, 5.0, nan, nan, 2.0, 4.0], np.float32)

POINTWISE = [
    case(lambda L, a: L.frac(a * 3.7), A),
    case(lambda L, a: a.t().frac(), np.array([[-2.5, 7.25, 0.0]], np.float32).T.copy()),
    case(lambda L, a: L.frac(a), E),
    case(lambda L, a: L.sinc(a), SINC),
    case(lambda L, a: a.t().sinc(), SINC),
    case(lambda L, a: L.sinc(a), INTS),
    case(lambda L, a: (L.deg2rad(a * 90), a.rad2deg()), A),
    case(lambda L, a: (L.deg2rad(a), L.rad2deg(a)), INTS),
    case(lambda L, a: L.deg2rad(a), np.array([True, False])),
    case(lambda L, a, b: L.copysign(a, b), A, B),
    case(lambda L, a, b: a.t().copysign(b.t()), A, C),
    case(lambda L, a: (L.copysign(a, -0.0), L.copysign(a, 2)), A),
    case(lambda L, a, b: L.copysign(a, b), np.array([1.0, 0.0, -2.0, 3.0], np.float32), SIGNS[:4]),
    case(lambda L, a, b: L.copysign(a, b), INTS, np.array([-1, 1, 0])),
    case(lambda L, a, b: L.copysign(a, b), E, B),
    case(lambda L, a: (L.signbit(a), a.signbit()), SIGNS),
    case(lambda L, a: (L.signbit(a), a.t().signbit()), np.array([[nan, -nan], [-0.0, 1.0]])),  # a NaN's sign bit counts
    case(lambda L, a, b: L.copysign(a, b), np.array([1.0, -2.0, 3.0, -0.5], np.float32), np.array([-nan, nan, -nan, 1.0])),
    case(lambda L, a: (L.signbit(a), L.signbit(a > 0)), INTS),
    case(lambda L, a, v: L.heaviside(a, v), np.array([-1.0, 0.0, 2.0, nan, 0.0], np.float32),
         np.array([0.5, 0.25, 7.0, 1.0, -3.0], np.float32), grad=False),
    case(lambda L, a, v: a.t().heaviside(v), np.where(A > 1, 0.0, A).astype(np.float32), np.array([0.5, 9.0], np.float32), grad=False),
    case(lambda L, a, v: L.heaviside(a, v), INTS, np.array([5])),
    case(lambda L, a, b: L.float_power(a.abs() + 0.1, b), A, B),
    case(lambda L, a: (L.float_power(a, 2), a.float_power(-1.5)), np.abs(A) + 0.5),
    case(lambda L, a, b: a.t().float_power(b), INTS, np.array([[2, 3]])),
    case(lambda L, a: (L.logit(a), a.logit(eps=0.2)), UNIT),
    case(lambda L, a: L.logit(a, 0.1), np.array([0.0, 0.05, 0.5, 0.97, 1.0], np.float32)),
    case(lambda L, a: L.logit(a), np.array([0.0, 1.0, 1.5, -0.5], np.float32), grad=False),
    case(lambda L, a: (L.logit(a), L.logit(a.t())), np.array([[0, 1], [1, 0]])),
    case(lambda L, a: (L.positive(a), a.t().positive()), A),
    case(lambda L, a: L.positive(a), INTS),
    case(lambda L, a, b: (L.fmax(a, b), L.fmin(a, b), a.fmax(b), b.fmin(a)), NAN_A, NAN_B),
    case(lambda L, a, b: (L.fmax(a, b), L.fmin(a.t(), b.t())), A, C),
    case(lambda L, a, b: (L.fmax(a, b), L.fmin(a, b)), INTS, A),
    case(lambda L, a, b: (L.fmax(a, b), L.fmin(a, b)), INTS, INTS[:1, ::-1].copy()),
    case(lambda L, a, b: L.fmax(a, b), E, B),
]


def test_pointwise(backend: str) -> None:
    run(backend, POINTWISE)


def test_pointwise_specifics_and_errors(backend: str) -> None:
    x = mt.tensor(A, backend=backend)
    assert mt.positive(x) is x and x.positive() is x
    assert mt.fmax(x, 1.0).tolist() == torch.fmax(torch.tensor(A), torch.tensor(1.0)).tolist()
    assert mt.float_power(2, x).dtype == np.float64 and mt.float_power(x, x).dtype == np.float64
    with pytest.raises(DTypeError, match="frac\\(\\) needs a float tensor, got int64"):
        mt.frac(mt.tensor(INTS, backend=backend))
    with pytest.raises(DTypeError, match="heaviside\\(\\): input and values need one dtype, got float32 .* and int64"):
        mt.heaviside(x, mt.tensor([1], backend=backend))
    with pytest.raises(DTypeError, match="positive\\(\\) is not supported for bool"):
        mt.positive(x > 0)
    with pytest.raises(ShapeError, match="cannot be broadcast"):
        mt.fmax(x, mt.ones(2, backend=backend))
    with pytest.raises(TypeError, match="^copysign\\(\\): argument 'input' \\(position 1\\) must be Tensor, not NoneType"):
        mt.copysign(None, x)  # type: ignore[arg-type]


# --- products ---

M23 = np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]], np.float32)
M32 = np.array([[0.5, 1.0], [-1.5, 2.0], [2.5, -0.5]], np.float32)
V3 = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0], [0.0, 1.0, -2.0]], np.float32)
X1 = np.array([[0.0, 1.0, 2.0], [1.5, -1.0, 0.5]], np.float32)
X2 = np.array([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0], [-2.0, 0.5, 3.0], [0.5, 0.5, -1.0]], np.float32)  # row 0 == X1's row 0

PRODUCTS = [
    case(lambda L, a: (L.trace(a), a.t().trace()), A),
    case(lambda L, a: L.trace(a), INTS),
    case(lambda L, a: L.trace(a), E),
    # torch.kron raises for non-contiguous input ("view size is not compatible"): it gets a contiguous copy
    case(lambda L, a, b: (L.kron(a, b), b.kron(a.t() if L is mt else a.t().contiguous())), A, C),
    case(lambda L, a, b: L.kron(a, b), B, A),
    case(lambda L, a, b: (L.kron(a, b), L.kron(b, a)), np.array(2.5, np.float32), B),
    case(lambda L, a, b: L.kron(a, b), INTS, np.array([1.5, -1.0], np.float32)),
    case(lambda L, a, b: L.kron(a, b), np.array([True, False]), np.array([[True], [True]])),
    case(lambda L, a, b: L.kron(a, b), E, C),
    case(lambda L, a, b: (L.cross(a, b), L.cross(a, b, dim=1)), V3, V3[::-1].copy()),
    case(lambda L, a, b: L.cross(a, b, dim=-1), M23[:1], V3),
    case(lambda L, a, b: a.t().cross(b.t(), dim=0), V3[:2], V3[1:]),
    case(lambda L, a, b: L.cross(a, b, 0), np.array([1, 2, 3]), np.array([4, -5, 6])),
    case(lambda L, a, b: L.cross(a, b), np.zeros((0, 3), np.float32), V3[:1]),
    case(lambda L, a, b: (L.inner(a, b), a.inner(a)), A, B),
    case(lambda L, a, b: L.inner(a.t(), b), A, M32),
    case(lambda L, a, b: L.inner(a, b), np.array(-2.0, np.float32), A),
    case(lambda L, a, b: L.inner(a, b), INTS, INTS),
    case(lambda L, a, b: L.inner(a, b), E, A),
    case(lambda L, c, a, b: (L.addmm(c, a, b), L.addmm(c, a, b, beta=0.5, alpha=-2)), np.ones((2, 2), np.float32), M23, M32),
    case(lambda L, c, a, b: c.addmm(a.t(), b.t(), alpha=3), np.array([1.0, -1.0], np.float32), M32, M23),
    case(lambda L, c, a, b: L.addmm(c, a, b, beta=0), np.full((2, 1), nan, np.float32), M23, M32, grad=False),
    case(lambda L, c, a, b: L.addmm(c, a, b, beta=2, alpha=3), np.array([[1], [2]]), INTS, INTS.T.copy()),
    case(lambda L, c, a, b: L.addmm(c, a, b), np.zeros(2, np.float32), np.zeros((0, 3), np.float32), M32),
    case(lambda L, c, a, b: (L.addmv(c, a, b), c.addmv(a, b, beta=-1, alpha=0.5)), np.array([1.0, 2.0], np.float32), M23, B),
    case(lambda L, c, a, b: L.addmv(c, a.t(), b), np.array(3.0, np.float32), M32, B),
    case(lambda L, c, a, b: (L.baddbmm(c, a, b), c.baddbmm(a, b, beta=0.5, alpha=2)),
         C, np.stack([M23, M23 * 2]), np.stack([M32, -M32])),
    case(lambda L, a, b, c: L.block_diag(a, b, c), A, B, np.array(7.0, np.float32)),
    case(lambda L, a, b, c: L.block_diag(a.t(), b, c), A, INTS, np.zeros((2, 0), np.float32)),
    case(lambda L, a, b: L.block_diag(a, b), np.array([[True]]), np.array([[False, True]])),
    case(lambda L, a, b: (L.cartesian_prod(a, b), L.cartesian_prod(a)), B, np.array([0.5, -2.0], np.float32)),
    case(lambda L, a, b, c: L.cartesian_prod(a, b, c), np.array([1, 2]), np.array([3]), np.array([4, 5])),
    case(lambda L, a, b: L.cartesian_prod(a, b), B, np.zeros(0, np.float32)),
    case(lambda L, a, b: (L.cdist(a, b), L.cdist(a, b, p=1.0), L.cdist(a, b, p=0.5), L.cdist(a, b, p=3)), X1, X2),
    case(lambda L, a, b: (L.cdist(a, b, p=0), L.cdist(a, b, p=inf)), X1, X2, grad=False),
    case(lambda L, a, b: L.cdist(a.transpose(-1, -2), b), np.stack([X1.T, -X1.T]), X2[None]),
    case(lambda L, a, b: L.cdist(a, b), np.zeros((0, 3), np.float32), X2),
    case(lambda L, a, b: (L.dist(a, b), a.dist(b, 1), L.dist(a, b, 3.5), L.dist(a, b, inf)), A, B),
    case(lambda L, a, b: (L.dist(a, b.t(), 0), L.dist(a.t(), b)), A, C.T.copy(), grad=False),
]


def test_products(backend: str) -> None:
    run(backend, PRODUCTS)


def test_product_errors(backend: str) -> None:
    def t(*shape: int) -> mt.Tensor:
        return mt.ones(*shape, backend=backend)

    with pytest.raises(ShapeError, match="no dimension of size 3 in input of shape \\(2, 4\\)"):
        mt.cross(t(2, 4), t(2, 4))
    with pytest.raises(ShapeError, match="dimension 1 must have length 3"):
        mt.cross(t(3, 4), t(3, 4), dim=1)
    with pytest.raises(ShapeError, match="same number of dimensions"):
        mt.cross(t(2, 3), t(3))
    with pytest.raises(ShapeError, match="trace: expected a matrix, but got tensor with dim 1"):
        mt.trace(t(3))
    with pytest.raises(ShapeError, match="trace: expected a matrix, but got tensor with dim 3"):
        t(2, 2, 2).trace()
    with pytest.raises(DTypeError, match="trace"):
        mt.trace(t(2, 2) > 0)
    with pytest.raises(TypeError, match="kron\\(\\): argument 'other' \\(position 2\\) must be Tensor, not list"):
        mt.kron(t(2), [1, 2])  # type: ignore[arg-type]
    with pytest.raises(ShapeError, match="cannot be multiplied \\(2x3 and 2x2\\)"):
        mt.addmm(t(2, 2), t(2, 3), t(2, 2))
    with pytest.raises(ShapeError, match="addmm\\(\\): input of shape \\(3,\\) cannot be broadcast to the product's shape \\(3, 2\\)"):
        mt.addmm(t(3), t(3, 3), t(3, 2))
    with pytest.raises(ShapeError, match="must be a matrix"):
        mt.addmm(t(2, 2), t(3), t(3, 2))
    with pytest.raises(DTypeError, match="value=0.5 would be truncated for int64"):
        mt.addmm(t(2, 2).long(), t(2, 3).long(), t(3, 2).long(), beta=0.5)
    with pytest.raises(ShapeError, match="size mismatch"):
        mt.addmv(t(2), t(2, 3), t(2))
    with pytest.raises(ShapeError, match="baddbmm\\(\\): input of shape \\(3, 2\\)"):
        mt.baddbmm(t(3, 2), t(2, 2, 3), t(2, 3, 2))
    with pytest.raises(ShapeError, match="inner\\(\\) the last dimension must match"):
        mt.inner(t(2, 3), t(2, 4))
    with pytest.raises(ShapeError, match="2 or fewer dimensions, input 1 has shape \\(1, 1, 1\\)"):
        mt.block_diag(t(2), t(1, 1, 1))
    empty = mt.block_diag()
    assert empty.shape == (1, 0) and empty.dtype == np.float32
    with pytest.raises(ShapeError, match="expected 1-D tensors, got shape \\(2, 2\\) at position 0"):
        mt.cartesian_prod(t(2, 2), t(2))
    with pytest.raises(DTypeError, match="all tensors need one dtype"):
        mt.cartesian_prod(t(2), t(2).long())
    with pytest.raises(ShapeError, match="X1 and X2 must have the same number of columns. X1: 3 X2: 4"):
        mt.cdist(t(2, 3), t(2, 4))
    with pytest.raises(ShapeError, match="at least 2D tensors, X1 got: 1D"):
        mt.cdist(t(3), t(2, 3))
    with pytest.raises(DTypeError, match="floating-point dtypes, X2 got: int64"):
        mt.cdist(t(2, 3), t(2, 3).long())
    with pytest.raises(ValueError, match="non-negative p values, got p=-1"):
        mt.cdist(t(2, 3), t(2, 3), p=-1)
    with pytest.raises(TypeError, match="cdist\\(\\): argument 'x1' \\(position 1\\) must be Tensor, not NoneType"):
        mt.cdist(None, t(2, 3))  # type: ignore[arg-type]
    with pytest.raises(DTypeError, match="dist\\(\\) needs a float tensor, got int64"):
        mt.dist(t(3).long(), t(3).long())


# --- selection ---

R7 = np.arange(7, dtype=np.float32) * 0.5 - 1.0
RUN = np.array([[1.0, 3.0, 3.0, nan, 2.0, nan, 5.0], [4.0, -1.0, -1.0, 0.0, -2.0, 6.0, -2.0]], np.float32)
RUN_TIES = np.array([[1.0, 3.0, 3.0, 0.5, 3.0], [2.0, -1.0, -1.0, 4.0, -1.0]], np.float32)
CUBE = np.arange(12, dtype=np.float32).reshape(2, 3, 2) - 5.0

SELECT = [
    case(lambda L, a: (L.tensor_split(a, 3), a.tensor_split([1, 5]), L.tensor_split(a, [-2, 9, 3])), R7),
    case(lambda L, a: L.tensor_split(a, 4, dim=0), R7[:2]),
    case(lambda L, a: (L.tensor_split(a.t(), 2, dim=1), L.tensor_split(a, (1,), dim=-1)), A),
    case(lambda L, a, i: (L.tensor_split(a, i), L.tensor_split(a, i[0])), R7, np.array([2, 4])),
    case(lambda L, a: (L.tensor_split(a, 2, 0), L.tensor_split(a, []), L.tensor_split(a, 2, 1)), E),
    case(lambda L, a: tuple(L.rot90(a, k) for k in (1, 2, 3, -1, 0, 6)), A),
    case(lambda L, a: (L.rot90(a, 1, (1, 0)), a.t().rot90(-3, [0, 1])), A),
    case(lambda L, a: (L.rot90(a, 1, (0, 2)), L.rot90(a, 2, (-1, 1))), CUBE),
    case(lambda L, a: L.rot90(a), E),
    case(lambda L, a, i: (L.take(a, i), a.t().take(i)), A, np.array([[-1, 0], [5, -6], [0, 0]])),
    case(lambda L, a, i: L.take(a, i), INTS, np.array(3)),
    case(lambda L, a, i: L.take(a, i), CUBE, np.zeros((2, 0), np.int64)),
    case(lambda L, a, i: L.take(a, i), np.array(2.5, np.float32), np.array([0, -1, 0])),
    case(lambda L, a: (L.cummax(a, 1), a.cummin(1), L.cummax(a, 0), a.t().cummin(dim=0)), RUN_TIES),
    case(lambda L, a: (L.cummax(a, 1), L.cummin(a, -1)), RUN),
    case(lambda L, a: (L.cummax(a, 0), L.cummin(a, 1)), INTS),
    case(lambda L, a: (L.cummax(a, 0), L.cummin(a, 0)), np.array([False, True, False, True])),
    case(lambda L, a: (L.cummax(a, 0), a.cummin(-1)), np.array(2.5, np.float32)),
    case(lambda L, a: (L.cummax(a, 0), L.cummin(a, 1)), E),
    case(lambda L, a: (L.logcumsumexp(a, 1), a.logcumsumexp(0), L.logcumsumexp(a.t(), -1)), A),
    case(lambda L, a: L.logcumsumexp(a, 0), np.array([-1000.0, 0.0, 1000.0, 2.0, -3.0])),
    case(lambda L, a: L.logcumsumexp(a, 0), np.array([-inf, -inf, 1.0, inf, 2.0, nan], np.float32), grad=False),
    case(lambda L, a: L.logcumsumexp(a, 0), R7.astype(np.float64)),
    case(lambda L, a: (L.logcumsumexp(a, 0), L.logcumsumexp(a, 1)), E),
    case(lambda L, a: L.logcumsumexp(a, -1), np.array(-2.5, np.float32)),
]


def test_select(backend: str) -> None:
    run(backend, SELECT)


def test_select_specifics_and_errors(backend: str) -> None:
    x = mt.tensor(A, backend=backend)
    parts = mt.tensor_split(x.clone(), 2, dim=1)
    parts[0]._base.add_(1.0)  # views of one storage, as PyTorch's
    np.testing.assert_allclose(parts[1].numpy(), A[:, 2:] + 1.0)
    out = mt.cummax(x, 1)
    assert out._fields == ("values", "indices") and out.indices.dtype == np.int64
    with pytest.raises(ShapeError, match="number of sections must be larger than 0, got 0"):
        mt.tensor_split(x, 0)
    with pytest.raises(ShapeError, match="number of sections must be larger than 0, got -2"):
        x.tensor_split(-2, dim=1)
    with pytest.raises(ShapeError, match="zero-dimensional or one-dimensional tensor, but got a tensor with 2 dims"):
        mt.tensor_split(x, mt.tensor([[1]], backend=backend))
    with pytest.raises(DTypeError, match="dtype of int64, but got float32"):
        mt.tensor_split(x, mt.tensor([1.0], backend=backend))
    with pytest.raises(ShapeError, match="at least a 1-dimensional tensor"):
        mt.tensor_split(mt.tensor(1.0, backend=backend), 2)
    with pytest.raises(TypeError, match="indices_or_sections must be an int"):
        mt.tensor_split(x, 2.0)
    with pytest.raises(IndexOutOfRangeError, match="take\\(\\): index 6 is out of range for a tensor of 6 elements"):
        mt.take(x, mt.tensor([0, 6], backend=backend))
    with pytest.raises(IndexOutOfRangeError, match="index -7 is out of range"):
        x.take(mt.tensor([-7], backend=backend))
    with pytest.raises(IndexOutOfRangeError, match="of 0 elements"):
        mt.take(mt.zeros(0, backend=backend), mt.tensor([0], backend=backend))
    with pytest.raises(DTypeError, match="index must be an int64 or int32 tensor, got a float32 tensor"):
        mt.take(x, x)
    with pytest.raises(ShapeError, match="expected total rotation dims == 2, but got dims = 3"):
        mt.rot90(x, 1, (0, 1, 2))
    with pytest.raises(ShapeError, match="expected total dims >= 2"):
        mt.rot90(mt.ones(3, backend=backend))
    with pytest.raises(ShapeError, match="rotation dims to be different"):
        mt.rot90(x, 1, (1, -1))
    with pytest.raises(IndexOutOfRangeError):
        mt.rot90(x, 1, (0, 2))
    with pytest.raises(DTypeError, match="logcumsumexp\\(\\) needs a float tensor, got int64"):
        mt.logcumsumexp(mt.tensor(INTS, backend=backend), 0)
    with pytest.raises(IndexOutOfRangeError):
        mt.cummax(x, 2)


@pytest.mark.parametrize("backend", ["simple", "fast"])
def test_sinc_derivatives_near_zero_against_mpmath(backend: str) -> None:
    """sinc's first and second derivatives stay accurate near 0 (its Taylor series there) and across the switch at
    |pi x| = 0.5; autodiff of sin(s) / s loses them to cancellation (1e-10 gave -1.5e-6, not -3.3e-10)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    xs = [1e-12, -1e-10, 1e-7, 3e-4, 0.05, 0.159, 0.1592, -0.16, 0.7, 2.5]
    x = mt.tensor(xs, dtype=mt.float64, backend=backend, requires_grad=True)
    (first,) = mt.autograd.grad(mt.sinc(x).sum(), x, create_graph=True)
    (second,) = mt.autograd.grad(first.sum(), x)

    def sinc_mp(t):  # type: ignore[no-untyped-def]
        return mpmath.sin(mpmath.pi * t) / (mpmath.pi * t)

    for v, d1, d2 in zip(xs, first.tolist(), second.tolist()):
        want1, want2 = (float(mpmath.diff(sinc_mp, mpmath.mpf(v), n)) for n in (1, 2))
        assert abs(d1 - want1) <= 1e-14 * abs(want1) + 1e-300, (v, d1, want1)
        assert abs(d2 - want2) <= 1e-12 * abs(want2), (v, d2, want2)
