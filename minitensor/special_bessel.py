"""``mt.special``'s Bessel functions of the first and second kinds, J_0, J_1, Y_0, Y_1, and the spherical j_0.

Chebyshev expansions fitted here (the coefficients are Chebyshev-node interpolants of 50-digit values of each
function, truncated where they fall below 1e-18), evaluated by tensor ops (special_series.py) in float64:

- |x| <= 8, in t = x^2 / 32 - 1: J_0(x) = A(t), J_1(x) = x B(t), and the regular parts of the second kind,
  Y_0(x) = (2/pi) log(x/2) J_0(x) + C(t), Y_1(x) = (2/pi) (log(x/2) J_1(x) - 1/x) + x D(t).
- |x| > 8, Hankel's modulus form in t = 128 / x^2 - 1: with chi = x - (2 nu + 1) pi / 4,
  J_nu = sqrt(2 / (pi x)) (P cos chi - Q sin chi), Y_nu = sqrt(2 / (pi x)) (P sin chi + Q cos chi),
  P = 1 + E(t), Q = F(t) / x; cos chi and sin chi are expanded into cos x and sin x (no rounded x - pi/4).

Absolute error ~1e-16 of the functions' envelope (relative near their zeros, as PyTorch's Cephes-based ones). Edges
as PyTorch: J_0 even, J_1 odd, nan at +-inf; Y_0, Y_1 are nan for x < 0 and -inf at 0. The spherical
j_0(x) = sin(x) / x is 1 at 0 and 0 at +-inf. PyTorch has no derivatives for these (``no_derivative``).
Deliberate difference: for x above ~1e8 PyTorch's x - pi/4 rounds (its values lose digits there, all of them
by 1e16); here the phase is x itself, so the values stay accurate.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .special_series import chebyshev_series, in_float64, no_derivative
from .tensor_math import _float_input

if TYPE_CHECKING:
    from .tensor import Tensor

SPLIT = 8.0
TWO_OVER_PI = 2.0 / math.pi
LN2 = math.log(2.0)

J0_SMALL = (
    0.15772797147489012, -0.008723442352852221, 0.2651786132033368, -0.37009499387264977, 0.15806710233209725,
    -0.034893769411408884, 0.004819180069467605, -0.00046062616620627504, 3.246032882100508e-05,
    -1.7619469077621507e-06, 7.608163592418782e-08, -2.679253530557673e-09, 7.848696314479465e-11,
    -1.9438346867370164e-12, 4.125320595634374e-14, -7.588508125447546e-16, 1.2218515873961411e-17,
)
J1_SMALL = (
    0.08104484632565812, -0.1489751450676521, 0.1609992623572097, -0.08268049176681791, 0.022213639654966037,
    -0.003646940600769276, 0.0004050337728354822, -3.255554866857259e-05, 1.9858774049915165e-06,
    -9.521984756750436e-08, 3.687133759097148e-09, -1.178026622695885e-10, 3.160154580348003e-12,
    -7.221755239651773e-14, 1.4232144003513942e-15, -2.4441972916190464e-17,
)
Y0_SMALL = (
    0.03645469809116044, -0.2783237094075825, 0.2960499990207148, 0.09825508408187864, -0.10755155280627783,
    0.031799074084414514, -0.005161397105810715, 0.0005498525320039012, -4.1996983149420134e-05,
    2.4290361107923793e-06, -1.1049969793472957e-07, 4.06651736597911e-09, -1.2374148898289854e-10,
    3.1685725528945945e-12, -6.926956032431002e-14, 1.3086308625876684e-15, -2.1586201986914482e-17,
)
Y1_SMALL = (
    0.038300769852423776, -0.08182561412732826, -0.0248677076121964, 0.047967452752746984, -0.01852588451089802,
    0.003680607687823511, -0.0004627254060293369, 4.06940026958087e-05, -2.6617695125295625e-06,
    1.350602691325434e-07, -5.483524110336276e-09, 1.8245086841229007e-10, -5.070666636591129e-12,
    1.1956162517587948e-13, -2.423162442712473e-15, 4.268126513072962e-17,
)
P0_LARGE = (
    -0.0005396506524813346, -0.0005365220468132117, 3.0751847875194745e-06, -5.1705945376060975e-08,
    1.6306464635151382e-09, -7.86409137723707e-11, 5.168262387349193e-12, -4.3045788699253914e-13,
    4.3265957431549404e-14, -5.069034095935236e-15, 6.748072215733873e-16, -1.0011513723467786e-16,
    1.6305919233744186e-17, -2.880866169482871e-18,
)
Q0_LARGE = (
    -0.12444683684269607, 0.0005470815954089319, -5.9315987288485175e-06, 1.4377965798375193e-07,
    -5.817532749493056e-09, 3.376097523734991e-10, -2.565397936797308e-11, 2.404916100281365e-12,
    -2.6690625482579414e-13, 3.4041800321963686e-14, -4.87994410531204e-15, 7.729703176242605e-16,
    -1.3348852171502517e-16, 2.4865952389390515e-17, -4.952892629886516e-18, 1.0473158973776097e-18,
)
P1_LARGE = (
    0.0009030408600136999, 0.0008989898330859408, -3.987284300488908e-06, 6.177633960644299e-08,
    -1.8718907491063067e-09, 8.816898659582339e-11, -5.704863640395645e-12, 4.699195515230542e-13,
    -4.6842237839904895e-14, 5.452674896044717e-15, -7.221180842274018e-16, 1.0667689114335412e-16,
    -1.7312313216116335e-17, 3.0492991197665872e-18,
)
Q1_LARGE = (
    0.3742222965562826, -0.0007702178839325664, 7.3108922063643636e-06, -1.676782510726674e-07, 6.583354662120443e-09,
    -3.749090950541556e-10, 2.8121750359748866e-11, -2.61145253946232e-12, 2.8774212663332235e-13,
    -3.649001916061838e-14, 5.206626366226707e-15, -8.215318025458595e-16, 1.4141084390211833e-16,
    -2.626761589838529e-17, 5.2192649196714085e-18, -1.101261718787959e-18,
)


def _small_t(x: Tensor) -> Tensor:
    """t = x^2 / 32 - 1 for |x| clamped to [0, 8]"""
    s = x.clamp(-SPLIT, SPLIT)
    return s * s * (1.0 / 32.0) - 1.0


class _Hankel:
    """The pieces of Hankel's form at |x| (clamped to >= 8): 1 / sqrt(pi |x|), cos |x| +- sin |x| and t."""

    def __init__(self, x: Tensor) -> None:
        ax = x.abs().clamp(min=SPLIT)
        self.x = ax
        self.t = (ax * ax).reciprocal() * (SPLIT * SPLIT * 2.0) - 1.0
        self.scale = (ax * math.pi).rsqrt()
        cos, sin = ax.cos(), ax.sin()
        self.plus, self.minus = sin + cos, sin - cos

    def pq(self, p: tuple[float, ...], q: tuple[float, ...]) -> tuple[Tensor, Tensor]:
        """P = 1 + E(t) and Q = F(t) / x for the tables E = p, F = q"""
        return chebyshev_series(self.t, p) + 1.0, chebyshev_series(self.t, q) / self.x


def _j0_small(x: Tensor) -> Tensor:
    """J_0 for |x| <= 8 (x clamped there)"""
    return chebyshev_series(_small_t(x), J0_SMALL)


def _j1_small(x: Tensor) -> Tensor:
    """J_1 for |x| <= 8 (x clamped there)"""
    return chebyshev_series(_small_t(x), J1_SMALL) * x.clamp(-SPLIT, SPLIT)


def _j0(x: Tensor) -> Tensor:
    h = _Hankel(x)
    p, q = h.pq(P0_LARGE, Q0_LARGE)
    large = (p * h.plus - q * h.minus) * h.scale
    return _j0_small(x).where(x.abs() <= SPLIT, large)


def _j1(x: Tensor) -> Tensor:
    h = _Hankel(x)
    p, q = h.pq(P1_LARGE, Q1_LARGE)
    large = (p * h.minus + q * h.plus) * h.scale
    return _j1_small(x).where(x.abs() <= SPLIT, large.where(x > 0, -large))


def _log_half(x: Tensor) -> Tensor:
    """(2/pi) log(x/2) for x in (0, 8] (log x - log 2: x/2 would round for subnormal x)"""
    return (x.clamp(max=SPLIT).log() - LN2) * TWO_OVER_PI


def _second_kind_edges(x: Tensor, y: Tensor) -> Tensor:
    """y, with -inf at +-0 and nan below 0 (PyTorch's Y_0 and Y_1)"""
    return y.where(x != 0, x._lift(-math.inf)).where(~(x < 0), x._lift(math.nan))


def _y0(x: Tensor) -> Tensor:
    h = _Hankel(x)
    p, q = h.pq(P0_LARGE, Q0_LARGE)
    large = (p * h.minus + q * h.plus) * h.scale
    small = _log_half(x) * _j0_small(x) + chebyshev_series(_small_t(x), Y0_SMALL)
    return _second_kind_edges(x, small.where(x <= SPLIT, large))


def _y1(x: Tensor) -> Tensor:
    h = _Hankel(x)
    p, q = h.pq(P1_LARGE, Q1_LARGE)
    large = (q * h.minus - p * h.plus) * h.scale
    s = x.clamp(max=SPLIT)
    small = _log_half(x) * _j1_small(s) - s.reciprocal() * TWO_OVER_PI + chebyshev_series(_small_t(x), Y1_SMALL) * s
    return _second_kind_edges(x, small.where(x <= SPLIT, large))


def _spherical_j0(x: Tensor) -> Tensor:
    nonzero = x.where(x != 0, x._lift(1.0))
    return (nonzero.sin() / nonzero).where(x != 0, x._lift(1.0)).where(~x.isinf(), x._lift(0.0))


def bessel_j0(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """J_0(x), the Bessel function of the first kind of order 0 (even; nan at +-inf); integers and bools give the
    default float dtype. No derivative, as PyTorch."""
    return no_derivative("bessel_j0", in_float64(_j0), _float_input(input))


def bessel_j1(input: Tensor) -> Tensor:  # noqa: A002
    """J_1(x), the Bessel function of the first kind of order 1 (odd; nan at +-inf)"""
    return no_derivative("bessel_j1", in_float64(_j1), _float_input(input))


def bessel_y0(input: Tensor) -> Tensor:  # noqa: A002
    """Y_0(x), the Bessel function of the second kind of order 0 (-inf at 0, nan for x < 0)"""
    return no_derivative("bessel_y0", in_float64(_y0), _float_input(input))


def bessel_y1(input: Tensor) -> Tensor:  # noqa: A002
    """Y_1(x), the Bessel function of the second kind of order 1 (-inf at 0, nan for x < 0)"""
    return no_derivative("bessel_y1", in_float64(_y1), _float_input(input))


def spherical_bessel_j0(x: Tensor) -> Tensor:  # PyTorch names the argument x here
    """j_0(x) = sin(x) / x, the spherical Bessel function of the first kind of order 0 (1 at 0, 0 at +-inf)"""
    return no_derivative("spherical_bessel_j0", in_float64(_spherical_j0), _float_input(x))


SPECIAL = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "spherical_bessel_j0"]
"""``mt.special``'s names from this module."""
