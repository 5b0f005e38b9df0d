"""``mt.special.airy_ai``: the Airy function Ai(x), the solution of y'' = x y that decays as x -> +inf.

Three Chebyshev expansions fitted here (node interpolants of 50-digit values, truncated below 1e-18 or 1e-19),
evaluated by tensor ops in float64 (special_series.py); zeta = (2/3) |x|^(3/2):

- -5 <= x <= 2: Ai itself, in t = (x + 3/2) / (7/2).
- x > 2: Ai(x) = e^-zeta (1 + R(t)) / (2 sqrt(pi) x^(1/4)), t = 2 zeta_2 / zeta - 1 (zeta_2 = zeta at x = 2), R the
  correction to the leading asymptotic term.
- x < -5: Ai(x) = (cos(zeta - pi/4) (1 + F(t)) + sin(zeta - pi/4) G(t) / zeta) / (sqrt(pi) |x|^(1/4)),
  t = 2 zeta_5 / zeta - 1, F and G the modulus-phase corrections (cos and sin of zeta - pi/4 expanded into cos zeta
  and sin zeta: no rounded zeta - pi/4).

A few ulps of float64 where Ai is not small; near its zeros and for large |x| the error is that of zeta's rounding
(relative ~1e-16 zeta), as PyTorch's. Edges as PyTorch: nan at +-inf and 0 above x = 103.892 (where Ai underflows
towards subnormals). PyTorch has no derivative (``no_derivative``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .special_series import chebyshev_series, in_float64, no_derivative
from .tensor_math import _float_input

if TYPE_CHECKING:
    from .tensor import Tensor

LEFT, RIGHT = -5.0, 2.0
ZETA_LEFT = 2.0 / 3.0 * 5.0**1.5
ZETA_RIGHT = 2.0 / 3.0 * 2.0**1.5
UNDERFLOW = 103.892  # PyTorch returns 0 above this
INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
SQRT1_2 = math.sqrt(0.5)

AI_MIDDLE = (
    0.15168947628223672, -0.005228692408472365, -0.007183007563342123, -0.2750085825170078, 0.15267285652736612,
    0.11299722901833571, -0.12930163519980795, 0.021717950423082666, 0.024911850702736413, -0.01433585742189573,
    0.000696689451639598, 0.001974398933529019, -0.0007230393972252199, -1.6112414526177467e-05,
    8.133273673249939e-05, -2.0775365813975462e-05, -1.6054762687164758e-06, 2.0560158255601387e-06,
    -3.825520517284178e-07, -4.913870596184178e-08, 3.514168642051892e-08, -4.846385010860496e-09,
    -8.897812059422213e-10, 4.329786248648808e-10, -4.414745597439301e-11, -1.1096862995764342e-11,
    4.024832028797832e-12, -2.9609936249846454e-13, -1.0257635127287476e-13, 2.920579876829024e-14,
    -1.4619955511486232e-15, -7.35505053091767e-16, 1.6986548408182807e-16, -5.0563208224652944e-18,
    -4.2234448483626644e-18, 8.087008847190025e-19,
)
AI_LEFT_F = (
    -0.0002458770118767533, -0.0003265982675007251, -7.981413648152953e-05, 1.017222243442064e-06,
    1.0399553244035248e-07, -6.345336539621232e-09, -1.8372886389906092e-10, 5.2076899039877404e-11,
    -2.371394869982987e-12, -3.4056038047789317e-13, 6.671006052435995e-14, -2.8738167332319415e-15,
    -7.836814938587172e-16, 1.7492629791170046e-16, -1.1190649847803312e-17, -2.3351139691764555e-18,
)
AI_LEFT_G = (
    0.0691973141808099, -0.0003271207011389106, -7.825984570346181e-05, 1.923993403748453e-06, 1.7709286721686765e-07,
    -1.6691604114605716e-08, -2.1081038743969808e-10, 1.6134496280508183e-10, -1.1935245363474967e-11,
    -9.075734317776672e-13, 2.9507230081568156e-13, -2.312390305495685e-14, -2.6152161226935082e-15,
    9.567932679631096e-16, -1.0286514854068333e-16, -7.008724212580104e-18, 4.531829171974022e-18,
)
AI_RIGHT = (
    -0.015594695082844804, -0.014792784850104199, 0.0007327177465426715, -6.12595423417825e-05, 6.83476697557269e-06,
    -9.237229735403982e-07, 1.436225340438052e-07, -2.489319422322096e-08, 4.709793440054328e-09,
    -9.583863708112733e-10, 2.0745855483677591e-10, -4.737267332192277e-11, 1.1336099808224236e-11,
    -2.827706782319351e-12, 7.320712095125598e-13, -1.9599793911089723e-13, 5.4101162570683925e-14,
    -1.5356466802223836e-14, 4.472340393300025e-15, -1.3338094674756683e-15, 4.066582046456231e-16,
    -1.265583225645289e-16, 4.015126334015871e-17, -1.2969972135960937e-17, 4.2613499074124e-18,
    -1.422676842293507e-18,
)


def _middle(x: Tensor) -> Tensor:
    """Ai on [-5, 2] (x clamped there)"""
    return chebyshev_series((x.clamp(LEFT, RIGHT) + 1.5) * (2.0 / 7.0), AI_MIDDLE)


def _right(x: Tensor) -> Tensor:
    """Ai for x > 2 (x clamped to >= 2)"""
    r = x.clamp(min=RIGHT)
    zeta = r * r.sqrt() * (2.0 / 3.0)
    correction = chebyshev_series(zeta.reciprocal() * (2.0 * ZETA_RIGHT) - 1.0, AI_RIGHT) + 1.0
    return (-zeta).exp() * correction * (r.sqrt().sqrt() * (2.0 / INV_SQRT_PI)).reciprocal()


def _left(x: Tensor) -> Tensor:
    """Ai for x < -5 (|x| clamped to >= 5)"""
    y = (-x).clamp(min=-LEFT)
    zeta = y * y.sqrt() * (2.0 / 3.0)
    t = zeta.reciprocal() * (2.0 * ZETA_LEFT) - 1.0
    f = chebyshev_series(t, AI_LEFT_F) + 1.0
    g = chebyshev_series(t, AI_LEFT_G) / zeta
    cos, sin = zeta.cos(), zeta.sin()
    return (f * (cos + sin) + g * (sin - cos)) * (SQRT1_2 * INV_SQRT_PI) / y.sqrt().sqrt()


def _airy_ai(x: Tensor) -> Tensor:
    inner = _middle(x).where(x >= LEFT, _left(x))
    value = inner.where(x <= RIGHT, _right(x).where(~(x > UNDERFLOW), x._lift(0.0)))
    return value.where(~x.isinf(), x._lift(math.nan))


def airy_ai(x: Tensor) -> Tensor:  # PyTorch names the argument x here
    """Ai(x), the Airy function of the first kind (nan at +-inf, 0 above 103.892, as PyTorch); integers and bools
    give the default float dtype. No derivative, as PyTorch."""
    return no_derivative("airy_ai", in_float64(_airy_ai), _float_input(x))


SPECIAL = ["airy_ai"]
"""``mt.special``'s names from this module."""
