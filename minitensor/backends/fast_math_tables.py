"""The tables of :mod:`minitensor.backends.fast_math`, computed at import in exact fixed-point integer arithmetic.

A value v is held as the integer v * 2^128; series in integers (atanh for logarithms, Taylor for exp) give every
entry to about 2^-120, far below the float64 rounding, so each table entry is the float64 nearest the true value and
its ``lo`` part the float64 nearest the remainder (about 2 ms at import; no floating-point library is trusted).
The kernels bake these tables in when they compile, so the cache fingerprint hashes this file.
"""

from __future__ import annotations

import math

import numpy as np

FIXED_BITS = 128
"""The tables are computed at import in fixed point: integers holding value * 2^128 (about 2 ms, exact to 2^-120)."""


def atanh_fixed(n: int, d: int) -> int:
    """atanh(n / d) 2^128 for |n / d| <= 0.2: the series (n/d)^(2i+1) / (2i+1) in integers."""
    sign, n = (-1, -n) if n < 0 else (1, n)
    term = (n << FIXED_BITS) // d
    total, i = term, 1
    while term:
        term = term * n * n // (d * d)
        total += term // (2 * i + 1)
        i += 1
    return sign * total


def ln_fixed(m: int, q: int) -> int:
    """ln(m / q) 2^128 for m / q in [0.67, 1.5], as 2 atanh((m - q) / (m + q))."""
    return 2 * atanh_fixed(m - q, m + q)


def exp_fixed(x: int) -> int:
    """e^(x / 2^128) 2^128 for 0 <= x < 2^128 (Taylor series in integers)."""
    total = term = 1 << FIXED_BITS
    i = 1
    while term:
        term = term * x // (i << FIXED_BITS)
        total += term
        i += 1
    return total


def hi_lo(v: int) -> tuple[float, float]:
    """v / 2^128 as the float64 nearest it and the float64 nearest the remainder (int / int rounds correctly)."""
    hi = v / (1 << FIXED_BITS)
    num, den = hi.as_integer_ratio()
    return hi, (v * den - (num << FIXED_BITS)) / (den << FIXED_BITS)


LN2_FIXED = ln_fixed(4, 3) + ln_fixed(3, 2)


def exp2_table(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(hi, lo): 2^(j/n) for j < n as a float64 and the float64 nearest its rounding error."""
    parts = [hi_lo(exp_fixed(LN2_FIXED * j // n)) for j in range(n)]
    return np.array([h for h, _ in parts]), np.array([lo for _, lo in parts])


def log_table(n: int, off: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(invc, hi, lo) per interval of z: invc ~ 1 / (the interval's centre) to 9 significant bits (exactly 1 for the
    interval around 1), so z invc - 1 is exact; -log(invc) = hi + lo with hi a multiple of 2^-43."""
    shift = 52 - n.bit_length() + 1
    bounds = np.array([off + (i << shift) for i in range(n + 1)], dtype=np.int64).view(np.float64)
    invc, hi, lo = [], [], []
    for z_lo, z_hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        if z_lo <= 1.0 < z_hi:
            v = 1.0
        else:
            m, e = math.frexp(2.0 / (z_lo + z_hi))
            v = math.ldexp(round(m * 512), e - 9)
        logc = -ln_fixed(int(v * 512), 512)  # v = M / 512 exactly
        h = (logc + (1 << (FIXED_BITS - 44))) >> (FIXED_BITS - 43)  # logc 2^43, rounded
        invc.append(v)
        hi.append(h / 2**43)
        lo.append((logc - (h << (FIXED_BITS - 43))) / (1 << FIXED_BITS))
    return np.array(invc), np.array(hi), np.array(lo)

