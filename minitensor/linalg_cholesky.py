"""The Cholesky factorization (the ``CholeskyMethods`` mixin: ``cholesky renorm renorm_``) and the matching ``mt.``
and ``mt.linalg`` functions; ``renorm``, the other norm-bounded matrix op, is here too.

As in :mod:`minitensor.linalg_solve`, no new kernels: the factorization is n steps of batched tensor ops under
``no_grad`` (the square root of the pivot, the column below it divided by it, a rank-1 update of the trailing
block), reading only one triangle of the input, as LAPACK's potrf. Its backward is Murray's (2016) formula, as
PyTorch's: gA = L^-T Phi(L^T gL) L^-1, Phi taking the lower triangle with the diagonal halved, made symmetric,
applied with two triangular solves. ``renorm`` is a composition of ``norm`` and ``where`` (gradients from autodiff).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import tensor_functions as F
from .autodiff import Context, no_grad
from .errors import DTypeError, LinAlgError, ShapeError
from .linalg_solve import as_shape, batch_prefix, check_square, first_failure, substitute_
from .tensor_compare import where
from .tensor_data import normalize_dim
from .tensor_inplace import _inplace

if TYPE_CHECKING:
    from .tensor import Tensor


def cholesky_factor(a: Tensor, upper: bool) -> Tensor:
    """L (B, n, n) lower triangular with L L^T = each matrix of ``a`` (*, n, n), without history: only a's lower
    triangle is read (``upper``: its upper one, as the lower triangle of a^T). Where a matrix is not
    positive-definite, L's diagonal has a value that is not > 0 (0 or nan) from that column on."""
    n = a.shape[-1]
    with no_grad():
        m = (a.mT if upper else a).detach().clone().view(math.prod(a.shape[:-2]), n, n)
        for k in range(n if m.numel() else 0):
            top = m[:, k : k + 1, k : k + 1]
            top.copy_(top.sqrt())  # nan below 0
            below = m[:, k + 1 :, k : k + 1]
            below.div_(top)
            m[:, k + 1 :, k + 1 :].sub_(below * below.mT)
        return m.tril()


class Cholesky(F.TensorFunction):
    """L (lower) or U = L^T (``upper``) with L L^T = A; the gradient is Murray's symmetric gA = L^-T Phi L^-1."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, factor: Tensor, upper: bool) -> Tensor:
        ctx.save_for_backward(factor, upper, a.shape)
        with no_grad():
            return as_shape((factor.mT if upper else factor).clone(), a.shape)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None, None]:
        factor, upper, shape = ctx.saved_values
        gl = g.reshape(*factor.shape)
        if upper:
            gl = gl.mT
        lt = factor.mT  # upper triangular
        phi = (lt @ gl).tril()
        phi = (phi + phi.tril(-1).mT) * 0.5  # symmetric, the diagonal halved
        y = substitute_(lt, phi, lower=False, unit=False)  # L^-T Phi
        grad = substitute_(lt, y.mT.contiguous(), lower=False, unit=False).mT  # (L^-T (L^-T Phi)^T)^T = L^-T Phi L^-1
        return grad.reshape(*shape), None, None


def linalg_cholesky(A: Tensor, *, upper: bool = False) -> Tensor:  # noqa: N803 - PyTorch's names
    """L with L L^T = A for each symmetric positive-definite matrix of A (*, n, n), reading A's lower triangle
    (``upper=True``: U = L^T with U^T U = A, reading the upper one); LinAlgError naming the batch element and the
    order of the leading minor that is not positive-definite."""
    check_square("linalg.cholesky", A)
    factor = cholesky_factor(A, upper)
    failure = first_failure(~(factor.diagonal(0, -2, -1) > 0))
    if failure is not None:
        element, order = failure
        raise LinAlgError(f"linalg.cholesky: {batch_prefix(A, element)}The factorization could not be completed because "
                          f"the input is not positive-definite (the leading minor of order {order} is not positive-definite).")
    return Cholesky.apply(A, factor, upper)


def cholesky(input: Tensor, upper: bool = False) -> Tensor:  # noqa: A002 - PyTorch's names
    """``torch.cholesky`` (deprecated there, without a warning here): :func:`linalg_cholesky`."""
    return linalg_cholesky(input, upper=upper)


def renorm(input: Tensor, p: Any, dim: int, maxnorm: Any) -> Tensor:  # noqa: A002
    """input with each sub-tensor along ``dim`` (input.select(dim, i)) whose p-norm exceeds ``maxnorm`` scaled by
    maxnorm / (norm + 1e-7), as ``torch.renorm``; float input with at least 2 dims, p > 0 (inf too); differentiable."""
    if input.dtype.kind != "f":
        raise DTypeError(f"renorm: Expected a floating point tensor as input. Got {input.dtype} (shape {input.shape})")
    if input.dims < 2:
        raise ShapeError(f"renorm: input needs at least 2 dimensions, got {input.dims} dimensions (shape {input.shape})")
    if not p > 0:
        raise ValueError(f"renorm: non-positive-norm not supported (p={p})")
    if not maxnorm >= 0:
        raise ValueError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = normalize_dim(dim, input.dims)
    norm = input.norm(p, [i for i in range(input.dims) if i != d], keepdim=True)
    return input * where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)


def renorm_(self: Tensor, p: Any, dim: int, maxnorm: Any) -> Tensor:
    """In-place :func:`renorm`."""
    return _inplace(self, lambda x: renorm(x, p, dim, maxnorm))


class CholeskyMethods:
    """The Cholesky factor and renorm (methods of Tensor)."""

    cholesky = cholesky
    renorm = renorm
    renorm_ = renorm_


LINALG: dict[str, Callable[..., Any]] = {"cholesky": linalg_cholesky}
"""The ``mt.linalg`` functions of this module, by their PyTorch names."""

__all__ = ["cholesky", "renorm"]
