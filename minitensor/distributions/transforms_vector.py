"""Transforms that couple the entries of a vector or a matrix (``torch.distributions.transforms``): softmax and
stick-breaking onto the simplex, and the maps of square matrices onto lower-Cholesky factors and positive-definite
matrices."""

from __future__ import annotations

from collections.abc import Sequence

from .. import creation
from ..linalg_cholesky import linalg_cholesky
from ..tensor import Tensor
from ..tensor_join import cat
from ..type_info import finfo
from . import constraints
from .distribution import _size, full_like, softplus
from .transform_base import Shape, _Stateless
from .transforms_elementwise import _clipped_sigmoid


def _vector_shape(shape: Sequence[int], change: int = 0) -> Shape:
    shape = _size(shape)
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input: a transform of vectors needs at least one dim")
    return shape[:-1] + (shape[-1] + change,)


class SoftmaxTransform(_Stateless):
    """y = exp(x) / sum(exp(x)) over the last dim, not bijective: ``inv`` is log (one of the preimages)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    _inverse = staticmethod(Tensor.log)  # type: ignore[assignment]
    forward_shape = inverse_shape = staticmethod(_vector_shape)  # type: ignore[assignment]

    def _call(self, x: Tensor) -> Tensor:
        e = (x - x.amax(-1, keepdim=True)).exp()
        return e / e.sum(-1, keepdim=True)


def _stick_offsets(k: int, like: Tensor) -> Tensor:
    """log(k), log(k - 1), ..., log(1): the shifts that make x = 0 map to the simplex's centre."""
    return creation.arange(k, 0, -1, dtype=like.dtype, backend=like.backend).log()


class StickBreakingTransform(_Stateless):
    """R^K -> the simplex in R^(K+1): z_i = sigmoid(x_i - log(K + 1 - i)) is the fraction broken off the stick
    left after the first i - 1 pieces, y_i = z_i prod_{j<i} (1 - z_j), and y_{K+1} is what remains."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def _call(self, x: Tensor) -> Tensor:
        z = _clipped_sigmoid(x - _stick_offsets(x.shape[-1], x))
        one = full_like(z, 1.0, tuple(z.shape[:-1]) + (1,))
        return cat([z, one], -1) * cat([one, (1 - z).cumprod(-1)], -1)

    def _inverse(self, y: Tensor) -> Tensor:
        head = y[..., :-1]
        left = (1 - head.cumsum(-1)).clamp(min=finfo(y.dtype).tiny)  # the stick left after each piece
        return head.log() - left.log() + _stick_offsets(head.shape[-1], y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """sum_i log(y_i (1 - z_i)) with log(1 - z) = -u - softplus(-u) for u = x - offset."""
        u = x - _stick_offsets(x.shape[-1], x)
        return (-u - softplus(-u) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape: Sequence[int]) -> Shape:
        return _vector_shape(shape, +1)

    def inverse_shape(self, shape: Sequence[int]) -> Shape:
        return _vector_shape(shape, -1)


class LowerCholeskyTransform(_Stateless):
    """Square matrices -> lower-triangular ones with positive diagonal: strict lower part kept, diagonal exponentiated."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x: Tensor) -> Tensor:
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(_Stateless):
    """Square matrices -> positive-definite ones: L L^T for L the LowerCholeskyTransform of x."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x: Tensor) -> Tensor:
        lower = LowerCholeskyTransform()(x)
        return lower @ lower.mT

    def _inverse(self, y: Tensor) -> Tensor:
        return LowerCholeskyTransform().inv(linalg_cholesky(y))


__all__ = ["LowerCholeskyTransform", "PositiveDefiniteTransform", "SoftmaxTransform", "StickBreakingTransform"]
