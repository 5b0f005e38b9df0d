"""Transforms that couple the entries of a vector or a matrix (``torch.distributions.transforms``): softmax and
stick-breaking onto the simplex, the maps of square matrices onto lower-Cholesky factors and positive-definite
matrices, and of vectors onto Cholesky factors of correlation matrices (with ``torch.distributions.utils``'
``vec_to_tril_matrix`` and ``tril_matrix_to_vec``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

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


def _tril_mask(n: int, diag: int) -> np.ndarray:
    """The (n, n) mask of the entries on or below diagonal ``diag`` (0 the main one, -1 the first below it)."""
    rows, cols = np.indices((n, n))
    return cols <= rows + diag


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The entries of (*, n, n) ``mat`` on or below diagonal ``diag``, in row order: (*, N)."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    flat = np.flatnonzero(_tril_mask(n, diag))
    index = creation.tensor(flat, dtype="int64", backend=mat.backend)
    return mat.reshape(tuple(mat.shape[:-2]) + (n * n,)).index_select(-1, index)


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The (*, n, n) matrix, zero above diagonal ``diag``, whose entries on or below it are ``vec`` (*, N) in row
    order; ValueError when N is no such count."""
    size = vec.shape[-1]
    root = (-(1 + 2 * diag) + math.sqrt((1 + 2 * diag) ** 2 + 8 * size + 4 * abs(diag) * (diag + 1))) / 2
    n = round(root)
    if abs(n - root) > finfo(vec.dtype).eps or int(_tril_mask(n, diag).sum()) != size:
        raise ValueError(f"The size of last dimension is {size} which cannot be expressed as the lower triangular part "
                         "of a square D x D matrix.")
    slots = np.zeros(n * n, dtype=np.int64)  # slot 0 holds a zero, slot k + 1 the k-th entry of vec
    slots[np.flatnonzero(_tril_mask(n, diag))] = np.arange(1, size + 1)
    padded = cat([full_like(vec, 0.0, tuple(vec.shape[:-1]) + (1,)), vec], -1)
    index = creation.tensor(slots, dtype="int64", backend=vec.backend)
    return padded.index_select(-1, index).reshape(tuple(vec.shape[:-1]) + (n, n))


def _shift_right(x: Tensor) -> Tensor:
    """1 followed by x[..., :-1] along the last dim."""
    return cat([full_like(x, 1.0, tuple(x.shape[:-1]) + (1,)), x[..., :-1]], -1)


class CorrCholeskyTransform(_Stateless):
    """Real vectors of length n (n - 1) / 2 -> Cholesky factors of n x n correlation matrices: tanh maps each entry
    into (-1, 1), and row i of the factor breaks the unit stick of its squared norm into its entries, the k-th taking
    the fraction z_ik^2 of what is left (so y_ik = z_ik sqrt(1 - sum_{j<k} y_ij^2), y_ii the rest)."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x: Tensor) -> Tensor:
        eps = finfo(x.dtype).eps
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        left = (1 - r.square()).sqrt().cumprod(-1)  # sqrt of the stick left after each piece
        eye = creation.eye(r.shape[-1], dtype=r.dtype, backend=r.backend)
        return (r + eye) * _shift_right(left)

    def _inverse(self, y: Tensor) -> Tensor:
        left = _shift_right(1 - y.square().cumsum(-1))
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left, diag=-1).sqrt()
        return (t.log1p() - (-t).log1p()) / 2  # atanh

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """Of x and the strictly lower entries of y: 1/2 sum log(1 - sum_{j<k} y_ij^2) (stick-breaking) plus
        sum log(1 - tanh(x)^2) = -2 sum (x + softplus(-2x) - log 2)."""
        stick = 0.5 * tril_matrix_to_vec(1 - y.square().cumsum(-1), diag=-2).log().sum(-1)
        tanh = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick + tanh

    def forward_shape(self, shape: Sequence[int]) -> Shape:
        """(*, N) -> (*, n, n) for N = n (n - 1) / 2."""
        shape = _size(shape)
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        size = shape[-1]
        n = round((0.25 + 2 * size) ** 0.5 + 0.5)
        if n * (n - 1) // 2 != size:
            raise ValueError(f"Input is not a flattened lower-diagonal number: {size}")
        return shape[:-1] + (n, n)

    def inverse_shape(self, shape: Sequence[int]) -> Shape:
        """(*, n, n) -> (*, n (n - 1) / 2)."""
        shape = _size(shape)
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError(f"Input is not square: {shape[-2:]}")
        return shape[:-2] + (shape[-1] * (shape[-1] - 1) // 2,)


__all__ = ["CorrCholeskyTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform", "SoftmaxTransform",
           "StickBreakingTransform", "tril_matrix_to_vec", "vec_to_tril_matrix"]
