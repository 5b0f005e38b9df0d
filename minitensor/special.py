"""``mt.special``: torch.special's names for the element-wise special functions (re-exports and short compositions).

``gammaln`` is ``lgamma``, ``psi`` is ``digamma``, ``expit`` is ``sigmoid``, ``multigammaln`` is ``mvlgamma``; the
modified Bessel functions ``i0``, ``i0e``, ``i1``, ``i1e`` are tensor_numeric.py's, ``gammainc`` and ``gammaincc``
tensor_igamma.py's igamma and igammac; ``ndtr`` is Phi(x) = erfc(-x / sqrt 2) / 2
(no cancellation in the left tail), ``log_ndtr`` its log (Phi's asymptotic series below x = -20, where Phi
underflows in float64 near x = -38). ``sinc``, ``round``, ``logsumexp``, ``softmax`` and ``log_softmax`` are the
top-level functions with torch.special's signatures (``dim`` required, ``dtype`` keyword-only).

The rest live by family: special_bessel.py (J_0, J_1, Y_0, Y_1, spherical j_0), special_bessel_modified.py (I_0,
I_1, K_0, K_1, scaled K), special_airy.py (Ai), special_normal.py (erfcx, ndtri), special_entropy.py (entr,
xlog1py), special_zeta.py (Hurwitz zeta), special_polynomials.py and special_chebyshev.py (the orthogonal
polynomials); special_series.py holds what they share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .operators import SQRT1_2
from .operators_special import HALF_LOG_2PI
from .special_airy import airy_ai
from .special_bessel import bessel_j0, bessel_j1, bessel_y0, bessel_y1, spherical_bessel_j0
from .special_bessel_modified import (
    modified_bessel_i0,
    modified_bessel_i1,
    modified_bessel_k0,
    modified_bessel_k1,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
)
from .special_chebyshev import (
    chebyshev_polynomial_t,
    chebyshev_polynomial_u,
    chebyshev_polynomial_v,
    chebyshev_polynomial_w,
    shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
)
from .special_entropy import entr, xlog1py
from .special_normal import erfcx, ndtri
from .special_polynomials import hermite_polynomial_h, hermite_polynomial_he, laguerre_polynomial_l, legendre_polynomial_p
from .special_zeta import zeta
from .tensor_arith import xlogy
from .tensor_igamma import igamma, igammac
from .tensor_math import _float_input, digamma, erf, erfc, erfinv, exp2, expm1, lgamma, log1p, polygamma, sigmoid
from .tensor_math import round as _round
from .tensor_numeric import i0, mvlgamma, special_i0e, special_i1, special_i1e
from .tensor_pointwise import logit, sinc
from .tensor_reduce import Dim
from .tensor_reduce import logsumexp as _logsumexp
from .tensor_softmax import log_softmax as _log_softmax
from .tensor_softmax import softmax as _softmax

if TYPE_CHECKING:
    from .tensor import Tensor

LOG_NDTR_SPLIT = -20.0

gammaln, psi, expit = lgamma, digamma, sigmoid
i0e, i1, i1e, multigammaln = special_i0e, special_i1, special_i1e, mvlgamma
gammainc, gammaincc = igamma, igammac


def ndtr(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """Phi(x), the standard normal CDF, as erfc(-x / sqrt 2) / 2 (accurate in both tails)"""
    return erfc(input * -SQRT1_2) * 0.5


def log_ndtr(input: Tensor) -> Tensor:  # noqa: A002
    """log Phi(x): log(ndtr(x)) on [-20, 0], log1p(-ndtr(-x)) above 0, below -20
    -x^2/2 - log(-x) - log(2 pi)/2 + log(1 - 1/x^2 + 3/x^4 - ...)
    (five terms: relative error below 1e-12)"""
    x = _float_input(input)
    mid = x.clamp(min=LOG_NDTR_SPLIT)
    near = (-ndtr(-mid)).log1p().where(mid > 0, ndtr(mid).log())  # log1p(-Phi(-x)): the right tail keeps its digits
    far_x = x.clamp(max=LOG_NDTR_SPLIT)
    z = (far_x * far_x).reciprocal()
    series = 1.0 - z * (1.0 - z * (3.0 - z * (15.0 - z * (105.0 - z * 945.0))))
    far = far_x * far_x * -0.5 - (-far_x).log() - HALF_LOG_2PI + series.log()
    return far.where(x < LOG_NDTR_SPLIT, near)


def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001, A002
    """``mt.round``: x rounded to ``decimals`` decimal places, ties to even"""
    return _round(input, decimals=decimals)


def logsumexp(input: Tensor, dim: Dim, keepdim: bool = False) -> Tensor:  # noqa: A002
    """``mt.logsumexp``: log(sum(exp(x))) over ``dim``, without overflow"""
    return _logsumexp(input, dim, keepdim)


def softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """``mt.softmax`` along ``dim`` (required here, as torch.special's), cast to ``dtype`` first"""
    return _softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """``mt.log_softmax`` along ``dim`` (required here, as torch.special's), cast to ``dtype`` first"""
    return _log_softmax(input, dim, dtype)


__all__ = ["erf", "erfc", "erfinv", "gammaln", "digamma", "psi", "polygamma", "expit", "logit", "xlogy", "log1p",
           "expm1", "exp2", "ndtr", "log_ndtr", "i0", "i0e", "i1", "i1e", "multigammaln",
           "gammainc", "gammaincc",
           "sinc", "round", "logsumexp", "softmax", "log_softmax", "entr", "erfcx", "ndtri", "xlog1py", "zeta",
           "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "spherical_bessel_j0",
           "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p"]
