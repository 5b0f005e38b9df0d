"""``mt.special``: torch.special's names for the element-wise special functions (re-exports and short compositions).

``gammaln`` is ``lgamma``, ``psi`` is ``digamma``, ``expit`` is ``sigmoid``, ``multigammaln`` is ``mvlgamma``; the
modified Bessel functions ``i0``, ``i0e``, ``i1``, ``i1e`` are tensor_numeric.py's, ``gammainc`` and ``gammaincc``
tensor_igamma.py's igamma and igammac; ``ndtr`` is Phi(x) = erfc(-x / sqrt 2) / 2
(no cancellation in the left tail), ``log_ndtr`` its log (Phi's asymptotic series below x = -20, where Phi
underflows in float64 near x = -38).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .operators import SQRT1_2
from .operators_special import HALF_LOG_2PI
from .tensor_arith import xlogy
from .tensor_igamma import igamma, igammac
from .tensor_math import _float_input, digamma, erf, erfc, erfinv, exp2, expm1, lgamma, log1p, polygamma, sigmoid
from .tensor_numeric import i0, mvlgamma, special_i0e, special_i1, special_i1e
from .tensor_pointwise import logit

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


__all__ = ["erf", "erfc", "erfinv", "gammaln", "digamma", "psi", "polygamma", "expit", "logit", "xlogy", "log1p",
           "expm1", "exp2", "ndtr", "log_ndtr", "i0", "i0e", "i1", "i1e", "multigammaln",
           "gammainc", "gammaincc"]
