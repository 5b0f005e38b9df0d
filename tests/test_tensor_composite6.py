"""sgn, isposinf and isneginf, isin, logaddexp2, ldexp, the function forms clone and ravel, row_stack, hsplit, vsplit,
dsplit and repeat_interleave against torch: values, dtypes, shapes and gradients, with broadcasting, zero-size dims,
0-d tensors, integer and bool dtypes and nan/inf edges; and their errors. The bulk runs on the CPU backends; one small
case per op runs on every backend (cuda under Numba's simulator)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from conftest import CPU_BACKENDS
from torch_oracle import case, check, index, run

import minitensor as mt
from minitensor import DTypeError, IndexOutOfRangeError, ShapeError

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),  # nan/inf edges on NumPy scalars
    pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning"),
]

nan, inf = math.nan, math.inf
RNG = np.random.default_rng(6)
A = np.array([[1.0, -2.5, 0.0], [3.0, -0.0, 0.5]], np.float32)
B = np.array([0.5, 2.0, -1.0], np.float32)
EDGES = np.array([inf, -inf, nan, 0.0, -0.0, 1.5, -2.0, np.finfo(np.float32).max, np.finfo(np.float32).tiny], np.float32)
INTS = np.array([[3, -1, 0, 7], [2**40, -(2**40), 5, 3]], np.int64)
INTS32 = np.array([[3, -1, 0, 7], [12, -9, 5, 3]], np.int64)  # values int32 holds



def ints(L: Any, like: Any, values: Any, dtype: str = "int64") -> Any:
    """An integer tensor of ``values`` (``dtype`` int64 or int32) for library L, on ``like``'s backend."""
    array = np.array(values, np.int64)
    if L is torch:
        return torch.tensor(array, dtype=getattr(torch, dtype))
    return mt.tensor(array, backend=like.backend.name, dtype=getattr(mt, dtype))


# --- sgn, isposinf, isneginf ---

UNARY = [  # torch's sgn gradient is a ZeroTensor the oracle cannot read: see test_sgn_gradient_is_zero
    case(lambda L, x: (L.sgn(x), x.sgn(), L.sign(x)), A, grad=False),
    case(lambda L, x: (L.sgn(x), x.sgn()), EDGES, grad=False),
    case(lambda L, x: (L.sgn(x), x.sgn()), RNG.normal(size=(3, 1, 4)), grad=False),
    case(lambda L, x: L.sgn(x.t()), A, grad=False),
    case(lambda L, x: (L.sgn(x), x.sgn()), INTS),
    case(lambda L, x: (L.sgn(x), L.sgn(x.int())), np.array([True, False, True])),
    case(lambda L, x: (L.sgn(x), x.sgn()), np.zeros((2, 0, 3), np.float32), grad=False),
    case(lambda L, x: L.sgn(x), np.array(-3.5), grad=False),
    case(lambda L, x: (L.isposinf(x), L.isneginf(x), x.isposinf(), x.isneginf()), EDGES),
    case(lambda L, x: (L.isposinf(x), L.isneginf(x)), EDGES.astype(np.float64).reshape(3, 3)),
    case(lambda L, x: (L.isposinf(x.t()), x.t().isneginf()), np.array([[inf, -inf], [nan, 1.0], [-inf, 0.0]])),
    case(lambda L, x: (L.isposinf(x), L.isneginf(x)), INTS),
    case(lambda L, x: (L.isposinf(x.int()), x.int().isneginf()), INTS32),
    case(lambda L, x: (L.isposinf(x), x.isneginf()), np.array([True, False])),
    case(lambda L, x: (L.isposinf(x), L.isneginf(x)), np.zeros((0, 3), np.float32)),
    case(lambda L, x: (L.isposinf(x), L.isneginf(x)), np.array(-inf, np.float32)),
    case(lambda L, x: (L.isposinf(x), L.isneginf(x)), np.array(7, np.int64)),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_sgn_isposinf_isneginf(backend: str) -> None:
    run(backend, UNARY)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_sgn_gradient_is_zero(backend: str) -> None:
    """sgn is piecewise constant: a zero gradient of the input's dtype (torch: a ZeroTensor, all zeros)."""
    t = torch.tensor(EDGES, requires_grad=True)
    (torch.sgn(t) * 3.0).sum().backward()
    assert t.grad is not None
    x = mt.tensor(EDGES, backend=backend, requires_grad=True)
    (mt.sgn(x) * 3.0).sum().backward()
    assert x.grad is not None and x.grad.dtype == mt.float32
    np.testing.assert_array_equal(x.grad.to_numpy(), t.grad.numpy(force=True))


def test_isposinf_results_are_fresh_and_gradient_free() -> None:
    x = mt.tensor([1.0, inf, -inf], requires_grad=True)
    assert not mt.isposinf(x).requires_grad and not x.isneginf().requires_grad
    a, b = mt.isposinf(mt.tensor([1, 2])), mt.isposinf(mt.tensor([1, 2]))
    a[0] = True  # all-False results of integer tensors are new tensors, never a shared constant
    assert b.tolist() == [False, False] and a.tolist() == [True, False]


# --- isin ---

SMALL_TESTS = np.array([2.0, nan, 0.0, inf, -1.0], np.float32)
MEMBERS = np.array([[1.0, 2.0, nan, -inf], [3.0, -0.0, inf, -1.0]], np.float32)
BIG = RNG.integers(-200, 200, size=(60, 90)).astype(np.float32)  # 5400 elements x 150 tests: past ISIN_MATRIX_MAX
BIG_TESTS = RNG.integers(-100, 100, size=150).astype(np.float32)

ISIN = [
    case(lambda L, e, t: (L.isin(e, t), L.isin(e, t, invert=True), L.isin(e, t, assume_unique=True)), MEMBERS, SMALL_TESTS),
    case(lambda L, e, t: (L.isin(t, e), L.isin(e.t(), t.reshape(5, 1))), MEMBERS, SMALL_TESTS),
    case(lambda L, e, t: (L.isin(e, 2.0), L.isin(e, nan), L.isin(e, -inf, invert=True), L.isin(2.0, t), L.isin(nan, t),
                          L.isin(-0.0, t), L.isin(3, t, invert=True)), MEMBERS, SMALL_TESTS),
    case(lambda L, e, t: (L.isin(e, t), L.isin(e, t.double()), L.isin(e.float(), t)), INTS, INTS[:, 1:].copy()),
    case(lambda L, e, t: (L.isin(e.int(), t), L.isin(e, t.int()), L.isin(e.int(), t.int())), INTS32, INTS32[::-1, 1:].copy()),
    case(lambda L, e, t: (L.isin(e, t), L.isin(e.long(), t), L.isin(e, 2.5), L.isin(e.long(), 2.5), L.isin(e.long(), 2.0),
                          L.isin(e.long(), 2), L.isin(2, e.int())), np.array([1.0, 2.0, 2.5, 3.0], np.float32),
         np.array([2.5, 3.0], np.float32)),
    case(lambda L, e, t: L.isin(e, t), np.array([1.0, 1.0 + 2.0**-30], np.float64), np.array([1.0], np.float32)),  # in float64
    case(lambda L, e, t: (L.isin(e, t), L.isin(e, t, invert=True)), np.zeros((2, 0, 3), np.float32), SMALL_TESTS),
    case(lambda L, e, t: (L.isin(e, t), L.isin(e, t, invert=True)), MEMBERS, np.zeros((0, 2), np.float32)),
    case(lambda L, e, t: (L.isin(e, t), L.isin(e, t, invert=True)), np.array(2.0, np.float32), SMALL_TESTS),
    case(lambda L, e, t: L.isin(e, t), np.array(2.0, np.float32), np.array(2.0, np.float32)),
    case(lambda L, e, t: L.isin(e, t), np.array([[5, 6], [7, 8]], np.int32), np.array([8, 1, 5], np.int32)),
]
ISIN_BIG = [  # past ISIN_MATRIX_MAX: the default takes the sort and search path here
    case(lambda L, e, t: (L.isin(e, t), L.isin(e, t, invert=True)), BIG, BIG_TESTS),
    case(lambda L, e, t: L.isin(e.long(), t.double()), BIG, BIG_TESTS),
    case(lambda L, e, t: (L.isin(e, t), L.isin(e, t[:3])), np.concatenate([BIG.ravel()[:4000], [nan, inf, -0.0]]).astype(np.float32),
         np.concatenate([BIG_TESTS, [nan, 0.0, inf]]).astype(np.float32)),
]


@pytest.mark.parametrize("matrix_max", [0, None, 1 << 30], ids=["sorted", "default", "matrix"])
@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_isin(backend: str, matrix_max: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both strategies (every pair compared, or sort and binary search) on every small case; the large ones (slow
    as a matrix on the simple backend) with the sort."""
    if matrix_max is not None:
        monkeypatch.setattr(mt.tensor_compare, "ISIN_MATRIX_MAX", matrix_max)
    run(backend, ISIN + (ISIN_BIG if matrix_max is None else []))


def test_isin_errors() -> None:
    x = mt.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="elements and test_elements cannot both be numbers"):
        mt.isin(1, 2)
    with pytest.raises(TypeError, match="argument 'test_elements' must be a Tensor or a number, not list"):
        mt.isin(x, [1.0, 2.0])
    with pytest.raises(TypeError, match="argument 'elements' must be a Tensor or a number, not bool"):
        mt.isin(True, x)
    with pytest.raises(DTypeError, match=r"isin\(\) does not support bool tensors, got elements of dtype bool \(shape \(2,\)\)"):
        mt.isin(mt.tensor([True, False]), mt.tensor([1, 0]))
    with pytest.raises(DTypeError, match="got test_elements of dtype bool"):
        mt.isin(mt.tensor([1, 0]), mt.tensor([True]))
    assert not hasattr(mt.Tensor, "isin")  # torch has no Tensor.isin either


# --- logaddexp2 ---

X = RNG.normal(size=(4, 1, 3)).astype(np.float32) * 3
Y = RNG.normal(size=(5, 1)).astype(np.float32) * 3
PAIRS = np.array([[inf, -inf, 1.0], [-inf, 3.0, 2.0], [1e30, -1e30, 1.0], [0.0, 0.0, 0.0], [-inf, -1e30, 2.0],
                  [300.0, 299.0, 1.0], [-300.0, -301.5, 1.0]], np.float32).T.copy()  # rows: a, b, (unused)
EQUAL_EDGES = np.array([[inf, -inf, nan, 1.0, nan], [inf, -inf, 1.0, nan, nan]], np.float32)


def floated(L: Any, *xs: Any) -> tuple[Any, ...]:
    """torch has no integer logaddexp2: its oracle gets the inputs in minitensor's compute dtype (the default float)."""
    return xs if L is mt else tuple(x.float() if not x.is_floating_point() else x for x in xs)


LOGADDEXP2 = [
    case(lambda L, a, b: (L.logaddexp2(a, b), a.logaddexp2(b)), A, B),
    case(lambda L, a, b: L.logaddexp2(a, b), X, Y),  # (4, 1, 3) with (5, 1): (4, 5, 3)
    case(lambda L, a, b: L.logaddexp2(a * 60, b * 60), X, Y),  # 2^(+-500) overflows float32: the stable form does not
    case(lambda L, a, b: L.logaddexp2(a.t(), b), A.T.copy(), B),
    case(lambda L, a, b: L.logaddexp2(a, b), X.astype(np.float64) * 200, Y.astype(np.float64)),
    case(lambda L, a, b: L.logaddexp2(a, b), A, B.astype(np.float64)),  # float32 with float64: float64
    case(lambda L, a, b: L.logaddexp2(a, b), PAIRS[0], PAIRS[1]),  # infinities against finite values: gradients too
    case(lambda L, a: (L.logaddexp2(a[0], a[1]), L.logaddexp2(a[1], a[0])), EQUAL_EDGES, grad=False),
    case(lambda L, a, b: L.logaddexp2(a, b), np.zeros((2, 0), np.float32), np.zeros((1, 0), np.float32)),
    case(lambda L, a, b: a.logaddexp2(b), np.zeros((0, 3), np.float32), B),
    case(lambda L, a, b: L.logaddexp2(a, b), np.array(1.5, np.float32), np.array(-0.5, np.float32)),
    case(lambda L, a, b: L.logaddexp2(*floated(L, a, b)), INTS[:, :3] % 50, B),
    case(lambda L, a, b: L.logaddexp2(*floated(L, a, b)), INTS % 50, INTS[::-1] % 7),  # integers: the default float
    case(lambda L, a, b: L.logaddexp2(*floated(L, a, b)), np.array([True, False]), np.array([[False], [True]])),
    case(lambda L, a, b: (L.logaddexp2(a, 2.0) if L is mt else L.logaddexp2(a, torch.tensor(2.0)),
                          L.logaddexp2(-1, a) if L is mt else L.logaddexp2(torch.tensor(-1.0), a)), A, B),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_logaddexp2(backend: str) -> None:
    run(backend, LOGADDEXP2)


def test_logaddexp2_equal_infinities_gradient() -> None:
    """Equal infinities: the value is that infinity and each side gets half the gradient (PyTorch's is nan)."""
    a = mt.tensor([inf, -inf, 2.0], requires_grad=True)
    b = mt.tensor([inf, -inf, 2.0], requires_grad=True)
    out = mt.logaddexp2(a, b)
    assert out.tolist() == [inf, -inf, 3.0]
    out.sum().backward()
    assert a.grad is not None and b.grad is not None
    assert a.grad.tolist() == [0.5, 0.5, 0.5] and b.grad.tolist() == [0.5, 0.5, 0.5]


# --- ldexp ---

F32 = np.array([3.0, 1.5, 2.0**-140, 2.0**-149, 1.0, 0.75, -5.0, inf, -inf, nan, 0.0, -0.0], np.float32)
E32 = np.array([-150, -150, 260, 270, 200, -149, -2, -5000, 3, 3, 5000, 7], np.int64)  # subnormal, exact, overflow
F64 = np.array([1.5, 1.0, 2.0**-1000, 2.0**-1074, 3.0, 1.0 + 2.0**-52, -7.0, 2.0**1000, inf, nan, 0.0, 5.0], np.float64)
E64 = np.array([-1075, -1075, 1100, 2000, -1073, -1070, -1024, -2000, -9000, 2, 9000, 1024], np.int64)
SMALL_E = np.array([[0, 3, 10], [1, 2, 40]], np.int64)  # non-negative (torch's gradient for negative ones is 0)

LDEXP = [
    case(lambda L, x, e: (L.ldexp(x, e), x.ldexp(e)), A, SMALL_E),
    case(lambda L, x, e: L.ldexp(x, e[0]), X, SMALL_E),  # (4, 1, 3) with (3,)
    case(lambda L, x, e: L.ldexp(x, e), F32, E32, grad=False, rtol=0, atol=0),  # exact, subnormals too
    case(lambda L, x, e: L.ldexp(x, e), F64, E64, grad=False, rtol=0, atol=0),
    case(lambda L, x, e: (L.ldexp(x, e.int()), L.ldexp(x.double(), e.int())), F32, E32 // 2, grad=False, rtol=0, atol=0),
    case(lambda L, x, e: L.ldexp(x, e), RNG.normal(size=(3, 4)).astype(np.float32), RNG.integers(-130, 130, size=(3, 4)),
         grad=False, rtol=0, atol=0),
    case(lambda L, x, y: (L.ldexp(x, y), x.ldexp(y)), A, A[::-1].copy() * 3),  # float exponents: gradients to both
    case(lambda L, x, y: L.ldexp(x, y), X, Y),
    case(lambda L, x, y: L.ldexp(x, y), A, B.astype(np.float64)),  # float32 by float64: float64
    case(lambda L, x, y: L.ldexp(x, y), A.astype(np.float64), B),
    case(lambda L, x, y: (L.ldexp(x, y), L.ldexp(x.int(), y), L.ldexp(x.bool(), y)), SMALL_E, B),  # integer x: y's dtype
    case(lambda L, x, y: (L.ldexp(x, y), L.ldexp(x.int(), y.int()), L.ldexp(x, y.int()), L.ldexp(x.bool(), y)), SMALL_E - 5,
         SMALL_E[::-1].copy() - 3),  # integers: the default float
    case(lambda L, x, y: L.ldexp(x, y), np.array([True, False]), np.array([[3], [-1]])),
    case(lambda L, x, e: L.ldexp(x, e), np.zeros((2, 0), np.float32), np.zeros((0,), np.int64)),
    case(lambda L, x, y: L.ldexp(x, y), np.zeros((0, 3), np.float32), B),
    case(lambda L, x, e: L.ldexp(x, e), np.array(-1.25, np.float32), np.array(4, np.int64)),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_ldexp(backend: str) -> None:
    run(backend, LDEXP)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_ldexp_integer_exponent_gradient(backend: str) -> None:
    """The gradient to input is 2**other for negative integer exponents too: equal to torch's with the exponents as
    floats (torch's own for integer exponents is an integer pow, 0 for negative ones)."""
    e = np.array([[-3, 0, 5], [-20, 7, -1]], np.int64)
    check(backend, lambda L, x: L.ldexp(x, ints(L, x, e)) if L is mt else L.ldexp(x, torch.tensor(e, dtype=torch.float32)),
          A)


def test_ldexp_errors() -> None:
    x = mt.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match=r"ldexp\(\): argument 'other' \(position 2\) must be Tensor, not int"):
        mt.ldexp(x, 3)
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        x.ldexp(0.5)  # type: ignore[arg-type]


# --- clone, ravel ---

COPIES = [
    case(lambda L, x: (L.clone(x), L.ravel(x), x.ravel()), A),
    case(lambda L, x: (L.ravel(x.t()), L.clone(x.t()), L.ravel(x[:, ::2])), RNG.normal(size=(3, 4))),
    case(lambda L, x: (L.ravel(x), L.clone(x)), np.array(2.5, np.float32)),
    case(lambda L, x: (L.ravel(x), L.clone(x)), np.zeros((2, 0, 3), np.float32)),
    case(lambda L, x: (L.ravel(x), L.clone(x), L.ravel(x.bool())), INTS),
    case(lambda L, x: L.clone(x, memory_format=L.contiguous_format) if L is torch else L.clone(x, memory_format=None), A),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_clone_ravel(backend: str) -> None:
    run(backend, COPIES)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_ravel_views_and_clone_copies(backend: str) -> None:
    """ravel of a contiguous tensor shares its storage (writes show through); of a transposed one, and clone, copy."""
    x = mt.tensor(A, backend=backend)
    flat, copied, transposed = mt.ravel(x), mt.clone(x), x.t().ravel()
    flat[0] = 9.0
    transposed[1] = 7.0
    copied[0, 1] = 8.0
    assert x.tolist()[0] == [9.0, -2.5, 0.0] and x.tolist()[1] == [3.0, -0.0, 0.5]
    assert flat.shape == (6,) and copied.tolist()[0] == [1.0, 8.0, 0.0]


# --- row_stack, hsplit, vsplit, dsplit ---

CUBE = np.arange(24, dtype=np.float32).reshape(2, 4, 3) - 7
SPLITS = [
    case(lambda L, a, b: (L.row_stack([a, b]), L.row_stack((b, a[0], b)), L.row_stack([a[0, 0], b[0]])), A, B),
    case(lambda L, c: (L.hsplit(c, 2), L.hsplit(c, [1, 3]), L.hsplit(c, (1,)), L.hsplit(c, [3, 1]), L.hsplit(c, [])), CUBE),
    case(lambda L, c: (L.hsplit(c[0, 0], 3), L.hsplit(c[0, :, 0], [2, 10]), L.hsplit(c.flatten(), [-1])), CUBE),
    case(lambda L, c: (L.vsplit(c, 2), L.vsplit(c, [1]), L.vsplit(c[0], (1, 1, 3)), L.vsplit(c.transpose(0, 1), 4)), CUBE),
    case(lambda L, c: (L.dsplit(c, 3), L.dsplit(c, [1, 1, 2]), L.dsplit(c.unsqueeze(0), [2])), CUBE),
    case(lambda L, c: (c.hsplit(2), c.hsplit(1, 3), c.hsplit([1]), c.vsplit([1]), c.vsplit(1), c.dsplit(1, 2), c.dsplit(3)), CUBE),
    case(lambda L, c: (L.hsplit(c, 2), L.vsplit(c, 1), L.hsplit(c[:, :0], 1)), np.zeros((3, 0, 2), np.float32)),
    case(lambda L, c: (L.hsplit(c, 4), L.hsplit(c, L.tensor(2) if L is torch else mt.tensor(2))), INTS),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_row_stack_and_splits(backend: str) -> None:
    run(backend, SPLITS)


def test_split_errors() -> None:
    c = mt.tensor(CUBE)
    with pytest.raises(ShapeError, match=r"hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 dimensions "
                                         r"\(shape \(\)\)"):
        mt.hsplit(mt.tensor(1.0), 1)
    with pytest.raises(ShapeError, match=r"vsplit requires a tensor with at least 2 dimensions, but got a tensor with 1 dimensions "
                                         r"\(shape \(3,\)\)"):
        mt.vsplit(c[0, 0], 1)
    with pytest.raises(ShapeError, match="dsplit requires a tensor with at least 3 dimensions, but got a tensor with 2 dimensions"):
        c[0].dsplit(1)
    with pytest.raises(ShapeError, match=r"hsplit attempted to split along dimension 1, but the size of the dimension 4 \(shape "
                                         r"\(2, 4, 3\)\) is not divisible by the split_size 3"):
        mt.hsplit(c, 3)
    with pytest.raises(ShapeError, match="split along dimension 0, but the size of the dimension 3 .* split_size 2"):
        mt.hsplit(c[0, 0], 2)
    with pytest.raises(ShapeError, match="dsplit attempted to split along dimension 2, but the size of the dimension 3"):
        mt.dsplit(c, 2)
    for sections in (0, -2):
        with pytest.raises(ShapeError, match=f"the number of sections must be larger than 0, got {sections}"):
            mt.vsplit(c, sections)
    for bad, name in ((2.0, "float"), (True, "bool"), (mt.tensor([1, 2]), "Tensor"), (mt.tensor(2.0), "Tensor")):
        with pytest.raises(TypeError, match=f"hsplit\\(\\): indices_or_sections must be an int or a list or tuple of ints, not {name}"):
            mt.hsplit(c, bad)
    with pytest.raises(TypeError, match=r"vsplit\(\) missing its argument"):
        c.vsplit()
    assert [p.shape for p in mt.hsplit(c, np.int64(2))] == [(2, 2, 3)] * 2  # NumPy ints are ints, as in torch


# --- repeat_interleave ---

COUNTS = RNG.integers(0, 4, size=40)
REPEAT = [
    case(lambda L, x: (L.repeat_interleave(x, 2), L.repeat_interleave(x, 2, dim=1), x.repeat_interleave(3, 0),
                       L.repeat_interleave(x, 2, -1, output_size=6), L.repeat_interleave(x, 1, 0)), A),
    case(lambda L, x: (L.repeat_interleave(x, index(L, x, [1, 0, 3]), dim=1), x.repeat_interleave(index(L, x, [2, 1]), 0),
                       L.repeat_interleave(x, index(L, x, [1, 2, 0, 1, 0, 3])), L.repeat_interleave(x, index(L, x, [2]), dim=1),
                       L.repeat_interleave(x, index(L, x, 2), dim=0, output_size=4)), A),
    case(lambda L, x: (L.repeat_interleave(x, ints(L, x, [3, 0, 1], "int32"), dim=1),
                       L.repeat_interleave(x, ints(L, x, [1, 2], "int32"), dim=0, output_size=3)), A),
    case(lambda L, x: (L.repeat_interleave(x.t(), index(L, x, [2, 0, 1, 1]), 0), L.repeat_interleave(x.t(), 2, 1)),
         RNG.normal(size=(3, 4))),
    case(lambda L, x: (L.repeat_interleave(x, 0), L.repeat_interleave(x, 0, 1), L.repeat_interleave(x, index(L, x, [0, 0]), 0)),
         A[:2, :2].copy()),
    case(lambda L, x: (L.repeat_interleave(x, 2, 1), L.repeat_interleave(x, index(L, x, [3]), 1),
                       L.repeat_interleave(x, index(L, x, np.zeros(0)), 1), L.repeat_interleave(x, 3)), np.zeros((2, 0), np.float32)),
    case(lambda L, x: (L.repeat_interleave(x, 3), x.repeat_interleave(index(L, x, [2])), L.repeat_interleave(x, 0)),
         np.array(5.5, np.float32)),
    case(lambda L, x: (L.repeat_interleave(x, 2, 1), L.repeat_interleave(x.bool(), index(L, x, [1, 0, 2, 1]), dim=1)), INTS),
    case(lambda L, x: (L.repeat_interleave(index(L, x, [1, 2, 0, 3])), L.repeat_interleave(ints(L, x, [2, 1], "int32")),
                       L.repeat_interleave(index(L, x, [2, 0, 1])), L.repeat_interleave(index(L, x, [1, 2]), output_size=3),
                       L.repeat_interleave(index(L, x, np.zeros(0))), L.repeat_interleave(repeats=index(L, x, [0, 2, 1])),
                       L.repeat_interleave(repeats=index(L, x, [1, 2]), output_size=3)), A),
    case(lambda L, x: L.repeat_interleave(x, index(L, x, COUNTS), dim=1), RNG.normal(size=(3, 40, 2))),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_repeat_interleave(backend: str) -> None:
    run(backend, REPEAT)


def test_repeat_interleave_errors() -> None:
    x = mt.tensor(A)
    with pytest.raises(ShapeError, match=r"repeats must have one count per slice along dim 1 of input \(2, 3\) \(3\), got 2 counts"):
        mt.repeat_interleave(x, mt.tensor([1, 2]), dim=1)
    with pytest.raises(ShapeError, match=r"one count per slice along dim 0 of input \(2, 3\) \(6\), got 3 counts"):
        x.repeat_interleave(mt.tensor([1, 2, 3]))  # dim None: the flattened input
    with pytest.raises(ShapeError, match=r"repeats must be non-negative, got -2 in \[1, -2, 3\]"):
        mt.repeat_interleave(x, mt.tensor([1, -2, 3]), dim=1)
    with pytest.raises(ShapeError, match="repeats must be non-negative, got -1"):
        mt.repeat_interleave(x, -1)
    with pytest.raises(DTypeError, match=r"repeats must be an integer tensor, got float32 \(shape \(3,\)\)"):
        mt.repeat_interleave(x, mt.tensor([1.0, 2.0, 3.0]), dim=1)
    with pytest.raises(DTypeError, match="repeats must be an integer tensor, got bool"):
        mt.repeat_interleave(mt.tensor([True, False]))
    with pytest.raises(ShapeError, match=r"repeats must be a 0-d or 1-D tensor, got shape \(1, 3\)"):
        mt.repeat_interleave(x, mt.tensor([[1, 2, 3]]), dim=1)
    with pytest.raises(ShapeError, match=r"repeat_interleave\(repeats\): repeats must be a 1-D tensor, got shape \(\)"):
        mt.repeat_interleave(mt.tensor(3))
    with pytest.raises(ShapeError, match=r"output_size=5 does not match the 6 slices the repeats give along dim 1 of input \(2, 3\)"):
        mt.repeat_interleave(x, 2, dim=1, output_size=5)
    with pytest.raises(ShapeError, match="output_size=7 does not match the 6 slices"):
        mt.repeat_interleave(mt.tensor([1, 2, 3]), output_size=7)
    with pytest.raises(IndexOutOfRangeError, match="dim 2 is out of range for a tensor with 2 dims"):
        mt.repeat_interleave(x, 2, dim=2)
    with pytest.raises(IndexOutOfRangeError, match="dim 0 is out of range for a tensor with 0 dims"):
        mt.repeat_interleave(mt.tensor(5.0), mt.tensor([3]), dim=0)
    with pytest.raises(TypeError, match="repeats must be an int or an integer Tensor, not float"):
        mt.repeat_interleave(x, 2.5)
    with pytest.raises(TypeError, match="repeats must be an int or an integer Tensor, not bool"):
        mt.repeat_interleave(x, True)


def test_repeat_interleave_copies() -> None:
    """One repeat still gives a new tensor (as PyTorch), never a view of the input."""
    x = mt.tensor(A)
    once = mt.repeat_interleave(x, 1, dim=0)
    once[0, 0] = 100.0
    assert x.tolist()[0][0] == 1.0


# --- every backend, cuda included: one small case of each ---

EVERY_BACKEND = [
    case(lambda L, x, e: (L.sgn(x), L.isposinf(x), L.isneginf(x), L.isin(x, x[0])), np.array([[inf, -1.0, 0.0], [nan, -inf, 2.0]]),
         SMALL_E, grad=False),
    case(lambda L, x, y: (L.logaddexp2(x, y), L.ldexp(x, y)), A, B),
    case(lambda L, x, e: (L.ldexp(x, e), L.ravel(x.t()), L.clone(x)), A, SMALL_E),
    case(lambda L, x: (L.hsplit(x, [1]), L.row_stack([x, x[0]]), L.repeat_interleave(x, index(L, x, [2, 0, 1]), dim=1),
                       x.repeat_interleave(2)), A),
]


def test_every_backend(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mt.tensor_compare, "ISIN_MATRIX_MAX", 0)  # isin's sort and search path, the kernel-heavy one
    for fn, arrays, options in EVERY_BACKEND:
        check(backend, fn, *arrays, **options)
