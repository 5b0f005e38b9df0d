"""``mt.special``'s Chebyshev polynomials of the four kinds, T_n, U_n, V_n, W_n, and their shifted forms
T*_n(x) = T_n(2x - 1) (and U*, V*, W*), with PyTorch's conventions (see special_polynomials.py: operands, dtypes,
n's truncation, n < 0 -> 0, no derivative).

All eight share the recurrence p_(j+1) = 2y p_j - p_(j-1) (y = x, or 2x - 1 shifted) from p_0 = 1 and
p_1 = y (T), 2y (U), 2y - 1 (V), 2y + 1 (W). PyTorch's special cases come first, in its order: the ends
(|x| = 1; x = 0 or 1 shifted), then for |y| < 1 and n above a threshold (T: 6, U V W: 8; shifted: 6, and 4 for W*)
the trigonometric forms with theta = acos(y): T = cos(n theta), U = sin((n+1) theta) / sin(theta),
V = cos((n + 1/2) theta) / cos(theta / 2), W = sin((n + 1/2) theta) / sin(theta / 2) (with PyTorch's fallbacks where
the denominator's sine or cosine is exactly 0 or 1), then n = 0 and n = 1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .special_polynomials import Override, evaluate_polynomial, is_even, plus_minus, polynomial

if TYPE_CHECKING:
    from .tensor import Tensor


class _Angles:
    """theta = acos(y) and the pieces the trigonometric forms use, for y = x or 2x - 1"""

    def __init__(self, y: Tensor) -> None:
        self.y = y
        self.theta = y.acos()
        self.inside = y.abs() < 1

    def t(self, n: Tensor) -> Tensor:
        return (n * self.theta).cos()

    def u(self, n: Tensor) -> Tensor:
        sine = self.theta.sin()
        n1 = n + 1.0
        return ((n1 * self.theta).sin() / sine).where(sine != 0, n1 * (n1 * self.theta).cos() / self.y)

    def v(self, n: Tensor, fallback: Tensor) -> Tensor:
        half = self.theta * 0.5
        return (((n + 0.5) * self.theta).cos() / half.cos()).where(half.sin() != 1, fallback)

    def w(self, n: Tensor, fallback: Tensor) -> Tensor:
        half = self.theta * 0.5
        return (((n + 0.5) * self.theta).sin() / half.sin()).where(half.cos() != 1, fallback)


def _common(n: Tensor, first: Tensor, angles: _Angles, ends: list[Override], threshold: float, closed: Tensor) -> Tensor:
    """PyTorch's order: n < 0, the ends, the trigonometric form, n = 0, n = 1, then the recurrence"""
    two_y = angles.y + angles.y
    overrides: list[Override] = [(n < 0, 0.0), *ends, (angles.inside & (n > threshold), closed), (n == 0, 1.0),
                                 (n == 1, first)]
    return evaluate_polynomial(n, first, lambda j, q, p: two_y * q - p, overrides)


def _t(x: Tensor, n: Tensor) -> Tensor:
    a = _Angles(x)
    ends: list[Override] = [(x.abs() == 1, plus_minus((x > 0) | is_even(n), x._lift(1.0)))]
    return _common(n, x, a, ends, 6.0, a.t(n))


def _u(x: Tensor, n: Tensor) -> Tensor:
    a = _Angles(x)
    ends: list[Override] = [(x.abs() == 1, plus_minus((x > 0) | is_even(n), n + 1.0))]
    return _common(n, x + x, a, ends, 8.0, a.u(n))


def _v(x: Tensor, n: Tensor) -> Tensor:
    a = _Angles(x)
    odd_ends = plus_minus(is_even(n), n + n + 1.0)
    ends: list[Override] = [(x.abs() == 1, odd_ends.where(x < 0, x._lift(1.0)))]
    return _common(n, x + x - 1.0, a, ends, 8.0, a.v(n, odd_ends))


def _w(x: Tensor, n: Tensor) -> Tensor:
    a = _Angles(x)
    end_values = (n + n + 1.0).where(x > 0, plus_minus(is_even(n), x._lift(1.0)))
    ends: list[Override] = [(x.abs() == 1, end_values)]
    return _common(n, x + x + 1.0, a, ends, 8.0, a.w(n, end_values))


def _shifted_t(x: Tensor, n: Tensor) -> Tensor:
    a = _Angles(x + x - 1.0)
    ends: list[Override] = [(x == 1, x._lift(1.0)), (x == 0, plus_minus(is_even(n), x._lift(1.0)))]
    return _common(n, a.y, a, ends, 6.0, a.t(n))


def _shifted_u(x: Tensor, n: Tensor) -> Tensor:
    a = _Angles(x + x - 1.0)
    ends: list[Override] = [(x == 1, n + 1.0), (x == 0, plus_minus(is_even(n), n + 1.0))]
    return _common(n, a.y + a.y, a, ends, 6.0, a.u(n))


def _shifted_v(x: Tensor, n: Tensor) -> Tensor:
    a = _Angles(x + x - 1.0)
    odd_ends = plus_minus(is_even(n), n + n + 1.0)
    ends: list[Override] = [(x == 1, x._lift(1.0)), (x == 0, odd_ends)]
    return _common(n, a.y + a.y - 1.0, a, ends, 6.0, a.v(n, odd_ends))


def _shifted_w(x: Tensor, n: Tensor) -> Tensor:
    a = _Angles(x + x - 1.0)
    signs = plus_minus(is_even(n), x._lift(1.0))
    ends: list[Override] = [(x == 1, n + n + 1.0), (x == 0, signs)]
    return _common(n, a.y + a.y + 1.0, a, ends, 4.0, a.w(n, signs))


def chebyshev_polynomial_t(x: Any, n: Any) -> Tensor:
    """T_n(x), the Chebyshev polynomial of the first kind (cos(n acos x) on |x| < 1); 0 for n < 0. No derivative,
    as PyTorch."""
    return polynomial("chebyshev_polynomial_t", _t, x, n)


def chebyshev_polynomial_u(x: Any, n: Any) -> Tensor:
    """U_n(x), the Chebyshev polynomial of the second kind (sin((n+1) theta) / sin(theta), x = cos(theta))"""
    return polynomial("chebyshev_polynomial_u", _u, x, n)


def chebyshev_polynomial_v(x: Any, n: Any) -> Tensor:
    """V_n(x), the Chebyshev polynomial of the third kind (cos((n + 1/2) theta) / cos(theta / 2))"""
    return polynomial("chebyshev_polynomial_v", _v, x, n)


def chebyshev_polynomial_w(x: Any, n: Any) -> Tensor:
    """W_n(x), the Chebyshev polynomial of the fourth kind (sin((n + 1/2) theta) / sin(theta / 2))"""
    return polynomial("chebyshev_polynomial_w", _w, x, n)


def shifted_chebyshev_polynomial_t(x: Any, n: Any) -> Tensor:
    """T*_n(x) = T_n(2x - 1), the shifted Chebyshev polynomial of the first kind (orthogonal on [0, 1])"""
    return polynomial("shifted_chebyshev_polynomial_t", _shifted_t, x, n)


def shifted_chebyshev_polynomial_u(x: Any, n: Any) -> Tensor:
    """U*_n(x) = U_n(2x - 1), the shifted Chebyshev polynomial of the second kind"""
    return polynomial("shifted_chebyshev_polynomial_u", _shifted_u, x, n)


def shifted_chebyshev_polynomial_v(x: Any, n: Any) -> Tensor:
    """V*_n(x) = V_n(2x - 1), the shifted Chebyshev polynomial of the third kind"""
    return polynomial("shifted_chebyshev_polynomial_v", _shifted_v, x, n)


def shifted_chebyshev_polynomial_w(x: Any, n: Any) -> Tensor:
    """W*_n(x) = W_n(2x - 1), the shifted Chebyshev polynomial of the fourth kind"""
    return polynomial("shifted_chebyshev_polynomial_w", _shifted_w, x, n)


SPECIAL = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w"]
"""``mt.special``'s names from this module."""
