"""The fast backend's own exp, log, tanh and sigmoid (minitensor/backends/fast_math.py) against high precision.

The Numba kernels are forced with ``FastBackend(use_numpy_math=False)`` (the default backend hands contiguous float
maps to NumPy). Every float64 result must be within 1 ulp of the correctly rounded value (measured against 80-bit
long double, or mpmath where long double is no wider than double), on dense random samples over the whole float64
line and on the special values, where NumPy's results (inf, -inf, nan, signed zeros, subnormals) must match
exactly. float32 results must be within 1 ulp of the correctly rounded float32 value (NumPy's float32 loops are
less accurate: see that test). The kernel loops must vectorise.
"""

from __future__ import annotations

import os
import re
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from numba import njit

from minitensor.backends import fast_intrinsics, fast_math
from minitensor.backends.fast import FastBackend
from minitensor.tensor_data import TensorData

OPS = ("exp", "log", "tanh", "sigmoid")
kernel_only = FastBackend(use_numpy_math=False)
WIDE = np.finfo(np.longdouble).nmant >= 63  # x86 80-bit or quad: a reference 2^-10 ulp or better
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 5e-324, -5e-324, 2.2250738585072014e-308,
                    -2.2250738585072014e-308, 1e-300, 1e308, -1e308, 709.782712893384, 709.7827128933841, 710.0,
                    -708.4, -745.1332191019411, -745.1332191019412, -746.0, 0.55, -0.55, 0.5493, 19.0, 22.0, -37.0,
                    -40.0, 36.0, 37.5, 1e-8, -1e-8, 0.7071067811865476, 1.4142135623730951])
with np.errstate(all="ignore"):
    NUMPY = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x))}


def run(op: str, x: np.ndarray) -> np.ndarray:
    """``op`` over ``x`` through the fast backend's Numba kernel (no NumPy delegation)."""
    out = kernel_only.empty(x.shape, x.dtype)
    kernel_only.map(op, TensorData(np.ascontiguousarray(x).reshape(-1), x.shape), out)
    return kernel_only.to_numpy(out)


def exact_mp(op: str, x: float) -> mpmath.mpf:
    """``op`` at ``x`` to 60 digits (finite x; the caller handles the log of non-positives)."""
    with mpmath.workdps(60):
        v = mpmath.mpf(x)
        return {"exp": mpmath.exp, "log": mpmath.log, "tanh": mpmath.tanh,
                "sigmoid": lambda t: 1 / (1 + mpmath.exp(-t))}[op](v)


def reference(op: str, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(correctly rounded float64 result, exact result as long double or float64 where only mpmath is exact)."""
    if WIDE:
        xl = x.astype(np.longdouble)
        with np.errstate(all="ignore"):
            exact = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "sigmoid": lambda t: 1 / (1 + np.exp(-t))}[op](xl)
        with np.errstate(over="ignore"):
            return exact.astype(np.float64), exact
    values = [float(exact_mp(op, v)) for v in x.tolist()]  # mpmath rounds to nearest
    rounded = np.array(values)
    return rounded, rounded


def ulp_steps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many representable floats apart ``a`` and ``b`` are (same dtype, finite or inf; -0 == +0)."""
    bits = {np.dtype(np.float64): np.int64, np.dtype(np.float32): np.int32}[a.dtype]
    def ordered(v: np.ndarray) -> np.ndarray:
        i = v.view(bits).astype(np.int64)
        return np.where(i < 0, np.int64(np.iinfo(bits).min) - i, i)
    return np.abs(ordered(a) - ordered(b))


def samples(op: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """Dense random inputs over the op's whole domain plus where its method switches or could cancel (ranges,
    subnormals, log's reduction ends sqrt(1/2) and sqrt(2) and the values around 1, exp's and tanh's switch from k = 0
    to k = +-1 at |x| = ln2/2 and ln2/4, and k = 1 to 2)."""
    if op == "log":
        parts = [np.exp(rng.uniform(-744.0, 709.7, n)), rng.uniform(0.5, 2.0, n), rng.uniform(0.0, 2.3e-308, n // 4),
                 rng.uniform(0.68, 0.71, n // 4), rng.uniform(1.37, 1.42, n // 4), rng.uniform(0.99, 1.01, n // 4)]
    elif op == "exp":
        parts = [rng.uniform(-745.2, 709.8, n), rng.uniform(-1.0, 1.0, n), rng.uniform(-745.2, -700.0, n // 4),
                 rng.uniform(700.0, 709.79, n // 4), rng.standard_normal(n) * 1e-9, rng.uniform(0.33, 0.36, n // 4),
                 rng.uniform(-0.36, -0.33, n // 4), rng.uniform(1.02, 1.06, n // 4)]
    elif op == "tanh":
        parts = [rng.uniform(-25.0, 25.0, n), rng.uniform(-1.0, 1.0, n), rng.uniform(0.16, 0.19, n // 4),
                 rng.uniform(0.51, 0.53, n // 4),
                 np.exp(rng.uniform(-700.0, 0.0, n // 4)) * rng.choice([-1.0, 1.0], n // 4), rng.uniform(-0.03, 0.03, n // 4)]
    else:
        parts = [rng.uniform(-750.0, 40.0, n), rng.uniform(-5.0, 5.0, n), rng.uniform(-745.2, -700.0, n // 4)]
    return np.concatenate(parts)


@pytest.mark.parametrize("op", OPS)
def test_float64_within_one_ulp_of_correctly_rounded(op: str) -> None:
    rng = np.random.default_rng(OPS.index(op))
    x = samples(op, rng, 100_000 if WIDE else 500)
    got = run(op, x)
    rounded, exact = reference(op, x)
    steps = ulp_steps(got, rounded)
    worst = int(np.argmax(steps))
    assert steps.max() <= 1, f"{op}({x[worst]!r}) = {got[worst]!r}, correctly rounded {rounded[worst]!r}"
    # Over 90% are the correctly rounded one (NumPy: 1-4%, a method 0.5 ulp worse: about a quarter or more).
    assert np.mean(steps > 0) < 0.1, f"{op}: {np.mean(steps > 0):.1%} not correctly rounded"
    if WIDE:  # error in ulps of the exact value, for normal results (subnormals round twice)
        normal = (np.abs(exact) >= np.finfo(np.float64).tiny) & (np.abs(exact) <= np.finfo(np.float64).max)
        m, e = np.frexp(exact[normal])
        err = np.abs(got[normal].astype(np.longdouble) - exact[normal]) / np.ldexp(np.longdouble(1), e - 53)
        assert err.max() < 0.9, f"{op}: {float(err.max()):.3f} ulp"


@pytest.mark.parametrize("op", OPS)
def test_longdouble_reference_agrees_with_mpmath(op: str) -> None:
    """The reference itself, checked at a few hundred points (mpmath at 60 digits, rounded to nearest)."""
    x = samples(op, np.random.default_rng(7), 60)
    rounded, _ = reference(op, x)
    want = np.array([float(exact_mp(op, v)) for v in x.tolist()])
    assert ulp_steps(rounded, want).max() == 0
    assert ulp_steps(run(op, x), want).max() <= 1


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", OPS)
def test_special_values_match_numpy(op: str, dtype: type) -> None:
    """inf, nan, +-0, overflow, underflow and subnormals: exactly NumPy's result (sigmoid: the exact one, which
    NumPy's 1 / (1 + exp(-x)) only misses by flushing e^x below the normals to 0), finite ones within 1 ulp."""
    with np.errstate(over="ignore"):
        x = SPECIAL.astype(dtype)
    got = run(op, x)
    with np.errstate(all="ignore"):
        if op == "sigmoid":
            want = (1 / (1 + np.exp(-x.astype(np.longdouble)))).astype(dtype) if WIDE else NUMPY[op](x)
        else:
            want = NUMPY[op](x)
    assert (np.isnan(got) == np.isnan(want)).all(), f"{op}: nan at {x[np.isnan(got) != np.isnan(want)]}"
    exact = ~np.isfinite(want) | (want == 0) | np.isin(x, [0.0, 1.0]) & (op == "log")
    exact &= ~np.isnan(want)
    assert (got[exact].view(want.dtype) == want[exact]).all() and (np.signbit(got[exact]) == np.signbit(want[exact])).all(), (
        f"{op}: {x[exact]} -> {got[exact]}, NumPy {want[exact]}")
    finite = np.isfinite(want) & ~exact
    assert ulp_steps(got[finite], want[finite]).max() <= 1, f"{op}: {x[finite]} -> {got[finite]} vs {want[finite]}"


@pytest.mark.parametrize("op", OPS)
def test_float32_correctly_rounded_and_near_numpy(op: str) -> None:
    """float32 data (computed in float64, rounded on store) against the exact value and NumPy's float32 loops.

    NumPy's float32 exp and log are up to 2-3 ulps off (its SIMD loops trade accuracy for speed) and its sigmoid
    expression flushes to 0 below -88: so ours must be within 1 ulp of the correctly rounded value, and no further
    from NumPy's result than 1 ulp plus NumPy's own error."""
    rng = np.random.default_rng(11 + OPS.index(op))
    lo, hi = {"exp": (-104.0, 88.8), "log": (-100.0, 88.0), "tanh": (-10.0, 10.0), "sigmoid": (-104.0, 20.0)}[op]
    x = rng.uniform(lo, hi, 200_000 if WIDE else 300)
    x = (np.exp(x) if op == "log" else x).astype(np.float32)
    got = run(op, x)
    assert got.dtype == np.float32
    with np.errstate(all="ignore"):
        numpy32 = NUMPY[op](x)
        rounded = reference(op, x.astype(np.float64))[1].astype(np.float32)  # exact -> float32 (one rounding)
    assert ulp_steps(got, rounded).max() <= 1
    assert (ulp_steps(got, numpy32) <= ulp_steps(numpy32, rounded) + 1).all()


@pytest.mark.parametrize("op", OPS)
def test_mixed_dtypes_take_the_output_precision(op: str) -> None:
    """float64 data into float32 outputs (the float32 versions see float64 subnormals and huge values), integer data
    into float32, float32 data into float64: each within 1 ulp of the exact value rounded to the output dtype."""
    rng = np.random.default_rng(21)
    f64 = np.concatenate([rng.uniform(-120.0, 100.0, 3000), SPECIAL, [1e-310, -1e-310, 3e-39, 1e39, -1e39]])
    arg = np.abs(f64) if op == "log" else f64
    with np.errstate(over="ignore"):
        cases = [(arg, np.float32), (rng.integers(-90, 90, 300).astype(np.int32), np.float32), (arg.astype(np.float32), np.float64)]
    for x, dtype in cases:
        out = kernel_only.empty(x.shape, np.dtype(dtype))
        kernel_only.map(op, TensorData(x, x.shape), out)
        got = kernel_only.to_numpy(out)
        with np.errstate(all="ignore"):
            want = reference(op, x.astype(np.float64))[1].astype(dtype)  # exact (long double or mpmath), rounded once
        assert (np.isnan(got) == np.isnan(want)).all()
        steps = ulp_steps(got[~np.isnan(want)], want[~np.isnan(want)])
        assert steps.max() <= 1, f"{op} {x.dtype} -> {np.dtype(dtype).name}: {x[~np.isnan(want)][steps > 1]}"


def test_strided_layout_gives_the_same_values() -> None:
    """The kernels' strided loop (a transposed input) inlines the same functions as the unit-stride one."""
    x = np.random.default_rng(3).uniform(-30.0, 30.0, (40, 30))
    for op in OPS:
        arg = np.abs(x) if op == "log" else x
        data = TensorData(np.ascontiguousarray(arg.T).reshape(-1), (30, 40)).permute(1, 0)
        out = kernel_only.empty((40, 30), np.float64)
        kernel_only.map(op, data, out)
        np.testing.assert_array_equal(kernel_only.to_numpy(out), run(op, arg))


def test_backward_ops_use_the_same_functions() -> None:
    """exp_back, tanh_back and sigmoid_back (zip kernels) against their formulas on fast_math's forward values."""
    x = np.random.default_rng(4).uniform(-20.0, 20.0, 1000)
    d = np.random.default_rng(5).standard_normal(1000)
    s, t, e = run("sigmoid", x), run("tanh", x), run("exp", x)
    for op, want in (("exp_back", d * e), ("tanh_back", d * (1.0 - t * t)), ("sigmoid_back", d * s * (1.0 - s))):
        out = kernel_only.empty(x.shape, np.float64)
        kernel_only.zip(op, TensorData(x, x.shape), TensorData(d, d.shape), out)
        np.testing.assert_array_equal(kernel_only.to_numpy(out), want, err_msg=op)


def test_loops_that_inline_them_vectorise() -> None:
    """A loop over all four compiles to SIMD code: LLVM's optimised IR holds vector-of-double operations, and no
    gathers."""

    @njit
    def loop(a: np.ndarray, out: np.ndarray) -> None:
        for i in range(a.size):
            v = a[i]
            out[i] = fast_math.exp(v) + fast_math.log(v) + fast_math.tanh(v) + fast_math.sigmoid(v)

    loop(np.ones(4), np.empty(4))
    ir = "\n".join(loop.inspect_llvm().values())
    assert re.search(r"<\d+ x double>", ir), "the loop was not vectorised"
    assert "gather" not in ir, "a table lookup became a vector gather (slow on some CPUs: see fast_math's docstring)"


def test_polynomials_and_constants_hold_what_the_methods_assume() -> None:
    """exp's u^2 Q(u) is within 2^-59 of e^u - 1 - u (relative to e^u) over |u| <= ln2/2, and log's s^3 P(s^2) within
    2^-59 of 2 atanh(s) - 2 s (relative to s) over |s| <= 3 - 2 sqrt(2): the float64 coefficients evaluated exactly
    at 1,201 points each, ends included, against 50-digit values. ln2 splits into LN2_HI43 (a multiple of 2^-43, so k
    LN2_HI43 is exact for |k| <= 1077) and LN2_LO43; the shift leaves k + 1023 (2^k's exponent field) in the low
    bits."""
    with mpmath.workdps(50):
        half_ln2 = mpmath.log(2) / 2
        s_max = 3 - 2 * mpmath.sqrt(2)
        for i in range(-600, 601):
            u = half_ln2 * i / 600
            q = sum(mpmath.mpf(c) * u ** (10 - j) for j, c in enumerate(fast_math.EXP_Q))
            assert abs(u * u * q - (mpmath.exp(u) - 1 - u)) < mpmath.exp(u) * mpmath.mpf(2) ** -59, u
            s = s_max * i / 600
            p = sum(mpmath.mpf(c) * (s * s) ** (7 - j) for j, c in enumerate(fast_math.LOG_P))
            assert abs(s ** 3 * p - (2 * mpmath.atanh(s) - 2 * s)) <= abs(s) * mpmath.mpf(2) ** -59, s
        ln2_hi = Fraction(fast_math.LN2_HI43)
        assert (ln2_hi * 2**43).denominator == 1 and (1077 * ln2_hi * 2**43) < 2**53
        assert abs(mpmath.mpf(fast_math.LN2_HI43) + mpmath.mpf(fast_math.LN2_LO43) - mpmath.log(2)) < mpmath.mpf(2) ** -95
    for k in (-1076, -1, 0, 1, 58, 1024):  # exp's whole range of k
        shifted = np.float64(fast_math.SHIFT + k)
        assert shifted - fast_math.SHIFT == k and int(shifted.view(np.int64)) - fast_math.SHIFT_BITS == k
        if -1022 <= k <= 1023:
            bits = (int(shifted.view(np.int64)) << 52) & (2**64 - 1)
            assert np.uint64(bits).view(np.float64) == 2.0**k


@pytest.mark.skipif(not os.path.exists("/proc/cpuinfo"), reason="reads the CPU flags Linux reports")
def test_vscalef_route_only_on_cpus_with_avx512() -> None:
    """The vscalef route is taken exactly when the kernel reports AVX-512F: without it llvm.ldexp is a libm call per
    element (float32 exp, GELU and softmax ~5x slower). LLVM lists missing features too ("-avx512f")."""
    with open("/proc/cpuinfo") as info:
        flags = next((line.split(":", 1)[1].split() for line in info if line.startswith("flags")), [])
    assert fast_intrinsics.SCALEF == ("avx512f" in flags)
    assert fast_intrinsics.cpu_has("avx2") == ("avx2" in flags)


@pytest.mark.parametrize("scalef", [True, False])
def test_ldexp_routes_round_once(scalef: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """x 2^k through ``vscalefpd`` (AVX-512) and through the two power-of-two products used elsewhere: both equal
    NumPy's ldexp (one rounding), into the subnormals, to 0 and to inf, for float64 and float32."""
    monkeypatch.setattr(fast_intrinsics, "SCALEF", scalef)  # read while the functions below compile

    @njit
    def scale64(x: np.ndarray, k: np.ndarray, out: np.ndarray) -> None:
        for i in range(x.size):
            out[i] = fast_intrinsics.ldexp(x[i], k[i])

    @njit
    def scale32(x: np.ndarray, shifted: np.ndarray, out: np.ndarray) -> None:
        for i in range(x.size):
            out[i] = fast_intrinsics.exp2_scale32(x[i], shifted[i])

    rng = np.random.default_rng(8)
    x = rng.uniform(1.0, 2.0, 4000) * rng.choice([-1.0, 1.0], 4000)
    k = rng.integers(-1130, 1030, 4000)
    out = np.empty_like(x)
    scale64(x, k, out)
    with np.errstate(over="ignore"):
        assert (out == np.ldexp(x, k)).all()
        x32, k32 = x.astype(np.float32), rng.integers(-160, 130, 4000).astype(np.int32)
        out32 = np.empty_like(x32)
        scale32(x32, (k32 + np.float32(12582912.0)).astype(np.float32), out32)  # k in the low bits of 1.5 * 2^23
        assert (out32 == np.ldexp(x32, k32)).all()
