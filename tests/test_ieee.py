"""IEEE float semantics agree across backends: inf, nan, signed zeros, huge and subnormal values.

Every element-wise kernel op runs on ``simple`` (the reference), ``fast`` and ``cuda`` (simulator) over values drawn
from the whole float64 line. Ops whose IEEE result is exactly defined (arithmetic, comparisons, sqrt, rounding)
must agree bit for bit, signed zeros included; transcendental ones must agree on nan/inf positions and signs and
be within a few ulps elsewhere. Reductions see the same special values.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import BACKENDS
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt
from minitensor.backends import get_backend
from minitensor.operators import BINARY_OPS, REDUCE_OPS, UNARY_OPS

EXACT_UNARY = {"id", "neg", "abs", "relu", "sq", "sqrt", "sign", "floor", "ceil", "trunc", "round", "isnan", "isinf",
               "isfinite", "logical_not", "inv"}
EXACT_BINARY = {"add", "sub", "mul", "div", "lt", "gt", "eq", "le", "ge", "ne", "max", "min", "logical_and",
                "logical_or", "logical_xor", "fmod"}
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e308, -1e308, 5e-324, -5e-324, 2.2250738585072014e-308, 1.0, -1.0,
           0.5, -2.5, 3.0, 1e-300, 710.0, -746.0]
UNARY = sorted(op for op in UNARY_OPS if op != "bitwise_not")
BINARY = sorted(op for op in BINARY_OPS if not op.startswith("bitwise_") and not op.endswith("_back") and op != "is_close")
OTHERS = [name for name in BACKENDS if name != "simple"]

values = st.one_of(st.sampled_from(SPECIAL), st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True))


def arrays(size: int) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(np.float64, size, elements=values)


def run_map(name: str, op: str, x: np.ndarray) -> np.ndarray:
    backend = get_backend(name)
    out = backend.empty(x.shape, x.dtype if op not in ("isnan", "isinf", "isfinite", "logical_not") else np.bool_)
    backend.map(op, backend.from_numpy(x), out)
    return backend.to_numpy(out)


def run_zip(name: str, op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    backend = get_backend(name)
    boolean = op in ("lt", "gt", "eq", "le", "ge", "ne", "logical_and", "logical_or", "logical_xor")
    out = backend.empty(a.shape, np.bool_ if boolean else a.dtype)
    backend.zip(op, backend.from_numpy(a), backend.from_numpy(b), out)
    return backend.to_numpy(out)


def agree(got: np.ndarray, want: np.ndarray, exact: bool, what: str) -> None:
    if got.dtype == np.bool_ or exact:
        same = (got.view(np.uint8) == want.view(np.uint8)) if got.dtype == np.bool_ else (got.view(np.int64) == want.view(np.int64))
        # NaN payloads and signs may differ between libm implementations: any NaN matches any NaN.
        same |= np.isnan(got) & np.isnan(want) if got.dtype != np.bool_ else False
        assert same.all(), f"{what}: got {got[~same]} want {want[~same]}"
        return
    assert (np.isnan(got) == np.isnan(want)).all(), f"{what}: nan positions differ: {got} vs {want}"
    finite = np.isfinite(want) & np.isfinite(got)
    assert (got[~finite & ~np.isnan(want)] == want[~finite & ~np.isnan(want)]).all(), f"{what}: infinities differ: {got} vs {want}"
    np.testing.assert_allclose(got[finite], want[finite], rtol=4 * np.finfo(np.float64).eps, atol=0, err_msg=what)


@pytest.mark.parametrize("other", OTHERS)
@pytest.mark.parametrize("op", UNARY)
@settings(max_examples=8)  # 30 ops x 2 backends: a few draws each (SPECIAL values come up often)
@given(x=arrays(12))
def test_unary_ops_agree_with_simple(other: str, op: str, x: np.ndarray) -> None:
    agree(run_map(other, op, x), run_map("simple", op, x), op in EXACT_UNARY, f"{op} on {other}")


@pytest.mark.parametrize("other", OTHERS)
@pytest.mark.parametrize("op", BINARY)
@settings(max_examples=8)
@given(a=arrays(10), b=arrays(10))
def test_binary_ops_agree_with_simple(other: str, op: str, a: np.ndarray, b: np.ndarray) -> None:
    agree(run_zip(other, op, a, b), run_zip("simple", op, a, b), op in EXACT_BINARY, f"{op} on {other}")


@pytest.mark.parametrize("other", OTHERS)
@pytest.mark.parametrize("op", sorted(REDUCE_OPS))
@given(x=hnp.arrays(np.float64, 9, elements=st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.5, 3.0])))
def test_reductions_see_special_values_alike(other: str, op: str, x: np.ndarray) -> None:
    outs = []
    for name in ("simple", other):
        backend = get_backend(name)
        out = backend.empty((1,), np.float64)
        backend.reduce(op, backend.from_numpy(x), 0, out)
        outs.append(backend.to_numpy(out))
    # Values whose partial sums and products never round, overflow or underflow: reassociation (fast splits rows)
    # cannot change them, so every op must agree exactly, nan and signed zeros included.
    agree(outs[1], outs[0], True, f"reduce {op} on {other}")


@pytest.mark.parametrize("name", BACKENDS)
def test_exp_family_overflows_exactly_where_ieee_does(name: str) -> None:
    """exp(709.5) is finite (1.35e308): an early cut-off at 709 once returned inf on every backend alike."""
    x = np.array([709.5, 709.782712893384, 709.7827128933841, 1023.5, 1024.0, -1075.0])
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(run_map(name, "exp", x), np.exp(x), rtol=1e-15)
        np.testing.assert_allclose(run_map(name, "expm1", x), np.expm1(x), rtol=1e-15)
        np.testing.assert_array_equal(run_map(name, "exp2", x), np.exp2(x))



@pytest.mark.parametrize("name", BACKENDS)
def test_sinh_cosh_overflow_exactly_where_ieee_does(name: str) -> None:
    """cosh is finite up to 710.4758600739439 and inf from the next float on; the cut-off was once 710.5, so the
    simple backend and the CUDA simulator (Python's math raises OverflowError) failed on (710.476, 710.5]."""
    edge = 710.4758600739439
    x = np.array([edge, np.nextafter(edge, 800.0), 710.5, -710.5, -edge, 711.0])
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(run_map(name, "cosh", x), np.cosh(x), rtol=1e-14)
        np.testing.assert_allclose(run_map(name, "sinh", x), np.sinh(x), rtol=1e-14)

def test_simple_follows_ieee_where_python_would_raise() -> None:
    """Python's math raises (OverflowError, ValueError, ZeroDivisionError) where IEEE gives inf or nan."""
    x = np.array([10.0, -1.0, 0.0, -0.0, 1e308, np.inf])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(run_map("simple", "exp", np.array([1000.0])), [np.inf])
        np.testing.assert_array_equal(run_map("simple", "log", x), np.log(x))
        np.testing.assert_array_equal(run_map("simple", "sqrt", x), np.sqrt(x))
        np.testing.assert_array_equal(run_map("simple", "inv", x), 1.0 / x)
        np.testing.assert_array_equal(run_zip("simple", "pow", x, np.full(6, 400.0)), np.power(x, 400.0))
        np.testing.assert_array_equal(run_zip("simple", "div", x, np.zeros(6)), x / np.zeros(6))


@pytest.mark.parametrize("name", BACKENDS)
def test_max_min_of_signed_zeros_do_not_depend_on_order(name: str) -> None:
    """IEEE 754-2019 maximum/minimum: +0.0 counts above -0.0, so reassociated reductions agree bit for bit."""
    a, b = np.array([-0.0, 0.0, -0.0, 0.0]), np.array([0.0, -0.0, -0.0, 0.0])
    assert np.signbit(run_zip(name, "max", a, b)).tolist() == [False, False, True, False]
    assert np.signbit(run_zip(name, "min", a, b)).tolist() == [True, True, True, False]


@pytest.mark.parametrize("name", BACKENDS)
def test_abs_clears_the_sign_bit_as_numpy_and_torch(name: str) -> None:
    """abs is fabs for floats: abs(-0.0) is +0.0 and abs(-nan) a nan without the sign bit (NumPy's and PyTorch's
    results, bit for bit); so copysign(-0.0, -1.0) is -0.0 (it negates |input|). The simple backend, the reference
    the other tests compare with, once returned -0.0 for abs(-0.0) on every backend."""
    x = np.array([-0.0, 0.0, -np.nan, np.nan, -np.inf, np.inf, -1.5, 2.0, -5e-324])
    got, want = run_map(name, "abs", x), np.abs(x)
    assert (got.view(np.int64) == want.view(np.int64)).all(), f"{got} vs {want}"
    zeros = mt.tensor([-0.0, 0.0, -0.0, 0.0], backend=name)
    signs = mt.copysign(zeros, mt.tensor([-1.0, -1.0, 1.0, 1.0], backend=name)).numpy()
    assert np.signbit(signs).tolist() == [True, True, False, False]



@pytest.mark.parametrize("name", BACKENDS)
def test_copysign_gradient_is_pytorchs_at_edges(name: str) -> None:
    """copysign's gradient to input is out / input (0 where input is 0), as PyTorch's: NaN at a NaN or infinite input
    (it was once sign-based, 0 there), broadcast over ``other``."""
    torch = pytest.importorskip("torch")
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 2.0, -3.0, 5e-324])
    y = np.array([[1.0], [-1.0], [-0.0], [np.nan]])
    ours = mt.tensor(x, backend=name, requires_grad=True)
    mt.copysign(ours, mt.tensor(y, backend=name)).sum().backward()
    theirs = torch.tensor(x, requires_grad=True)
    torch.copysign(theirs, torch.tensor(y)).sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())

EDGE = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, -0.4, 0.4, -2.5, 2.5, 3.0, -3.0, 1e-300,
                 -1e-300, 5e-324, -5e-324])


@pytest.mark.parametrize("name", BACKENDS)
def test_signed_zeros_and_edges_are_pytorchs(name: str) -> None:
    """Bit for bit against PyTorch, every pair of edge values (signed zeros, infinities, nan, ties, subnormals):
    floor, ceil, trunc and round keep a zero's sign; fmod has input's sign; a zero remainder has input's (Python's %
    gives other's); pow(-0.0, odd negative) is -inf and pow(-inf, y) follows C99; xlogy(0, y) is +0.0. (Where
    minitensor differs on purpose, the README's table says so: these ops are not among those.)"""
    torch = pytest.importorskip("torch")
    a, b = np.repeat(EDGE, EDGE.size), np.tile(EDGE, EDGE.size)
    x, y = mt.tensor(a, backend=name), mt.tensor(b, backend=name)
    tx, ty = torch.tensor(a), torch.tensor(b)

    with np.errstate(all="ignore"):
        overflows = np.isfinite(a) & np.isfinite(b) & (b != 0) & ~np.isfinite(a / b)  # PyTorch's CPU fmod: nan there

    def same(got: np.ndarray, want: np.ndarray, what: str, skip: np.ndarray | None = None) -> None:
        ok = (got.view(np.int64) == want.view(np.int64)) | (np.isnan(got) & np.isnan(want))
        if what == "pow":  # PyTorch's pow is not correctly rounded (0.5 ** 0.5 is an ulp low): zeros, infinities exact
            regular = np.isfinite(want) & (want != 0) & (np.sign(got) == np.sign(want))
            ok |= regular & (np.abs(got - want) <= 4 * np.finfo(np.float64).eps * np.abs(want))
        if skip is not None:
            ok |= skip
            assert np.isfinite(got[skip]).all()  # exact there (C's fmod), where PyTorch's quotient overflows
        assert ok.all(), f"{what}: at {list(zip(a[~ok], b[~ok]))[:4]} got {got[~ok][:4]}, PyTorch {want[~ok][:4]}"

    for op in ("floor", "ceil", "trunc", "round", "frac"):
        same(getattr(x, op)().numpy(), getattr(tx, op)().numpy(), op)
    for op in ("fmod", "remainder", "pow", "xlogy", "copysign"):
        skip = overflows if op in ("fmod", "remainder") else None
        with np.errstate(all="ignore"):
            same(getattr(mt, op)(x, y).numpy(), getattr(torch, op)(tx, ty).numpy(), op, skip)


@pytest.mark.parametrize("name", BACKENDS)
def test_inverse_trig_and_hyperbolic_edges_are_pytorchs(name: str) -> None:
    """asin acos atan sinh cosh asinh acosh atanh against PyTorch over the edge values and their domains' ends (+-1,
    1, overflow past 710): nan, +-inf and signed zeros exactly, other values within 2 ulps (libm against PyTorch's
    own); int64 input gives the default float dtype."""
    torch = pytest.importorskip("torch")
    values = np.concatenate([EDGE, [0.99, -0.99, 1.5, 710.0, 711.0, -711.0, 1e300, -1e300]])
    x, tx = mt.tensor(values, backend=name), torch.tensor(values)
    for op in ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"):
        got, want = getattr(mt, op)(x).numpy(), getattr(torch, op)(tx).numpy()
        special = ~np.isfinite(want) | (want == 0)
        assert (np.isnan(got) == np.isnan(want)).all(), f"{op}: nan at {values[np.isnan(got) != np.isnan(want)]}"
        exact = special & ~np.isnan(want)
        assert (got[exact].view(np.int64) == want[exact].view(np.int64)).all(), f"{op}: {values[exact]} -> {got[exact]}"
        regular = ~special
        np.testing.assert_allclose(got[regular], want[regular], rtol=2 * np.finfo(np.float64).eps, atol=0, err_msg=op)
        assert getattr(mt, op)(mt.tensor([0, 1], backend=name)).dtype == mt.get_default_dtype()
