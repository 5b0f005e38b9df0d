"""The Cholesky factorization and what it solves (the ``CholeskyMethods`` mixin: ``cholesky cholesky_solve
cholesky_inverse triangular_solve renorm renorm_``) and the matching ``mt.`` and ``mt.linalg`` functions; ``renorm``,
the other norm-bounded matrix op, is here too.

As in :mod:`minitensor.linalg_solve`, no new kernels: the factorization is n steps of batched tensor ops under
``no_grad`` (the square root of the pivot, the column below it divided by it, a rank-1 update of the trailing
block), reading only one triangle of the input, as LAPACK's potrf. Its backward is Murray's (2016) formula, as
PyTorch's: gA = L^-T Phi(L^T gL) L^-1, Phi taking the lower triangle with the diagonal halved, made symmetric,
applied with two triangular solves. ``renorm`` is a composition of ``norm`` and ``where`` (gradients from autodiff).

The legacy solves run the column-update substitution of linalg_solve.py: ``cholesky_solve`` X = (L L^T)^-1 B as two
triangular solves (LAPACK's potrs), ``cholesky_inverse`` (L L^T)^-1 = M^T M with M = L^-1 (potri; exactly symmetric),
``triangular_solve`` A X = b or A^T X = b. Their gradients are PyTorch's: the two Cholesky ones treat the factor as
the full matrix of A = L L^T (so L's unread triangle gets a gradient too, as in torch): with G = A^-1 g,
gB = G and gL = -(G X^T + X G^T) L; for the inverse gL = -A^-1 (g + g^T) A^-1 L (``upper``: the factor U multiplies
from the left). triangular_solve's gradient keeps to A's triangle (the strict one when ``unitriangular``), and its copy of A
passes its own gradient back to A.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from . import tensor_functions as F
from .autodiff import Context, no_grad
from .errors import DTypeError, LinAlgError, ShapeError
from .linalg_solve import (
    as_shape,
    batch_prefix,
    broadcast_batch,
    check_float,
    check_square,
    eye_like,
    first_failure,
    is_tensor,
    substitute_,
)
from .tensor_compare import where
from .tensor_data import normalize_dim
from .tensor_inplace import _inplace, _torch_name

if TYPE_CHECKING:
    from .tensor import Tensor


class TriangularSolveResult(NamedTuple):
    """(solution, cloned_coefficient), as ``torch.return_types.triangular_solve``."""

    solution: Tensor
    cloned_coefficient: Tensor


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


# --- the legacy solves: cholesky_solve, cholesky_inverse, triangular_solve ---


def flat(x: Tensor, count: int) -> Tensor:
    """x (*, r, c) seen as (count, r, c) (a copy when its strides allow no view)."""
    return x.reshape(count, *x.shape[-2:])


def lower_factor(factor: Tensor, upper: bool) -> Tensor:
    """The lower triangular L with A = L L^T from a Cholesky factor of A: the factor itself, or U^T when ``upper``."""
    return factor.mT if upper else factor


def solve_factored(lower: Tensor, b: Tensor) -> Tensor:
    """(L L^T)^-1 b for L (B, n, n) (only its lower triangle read) and b (B, n, k), without history (LAPACK's potrs);
    b is not changed."""
    y = substitute_(lower, b.clone(), lower=True, unit=False)
    return substitute_(lower.mT, y, lower=False, unit=False)


class TriangularSubstitution(F.TensorFunction):
    """X = A^-1 B for triangular A (*, n, n) (only its ``upper`` or lower triangle read; ``unit``: ones on the
    diagonal) and B (*, n, k) with one batch shape; dB = A^-T g, dA = -dB X^T on A's (strict, when ``unit``) triangle."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor, upper: bool, unit: bool) -> Tensor:
        count = math.prod(b.shape[:-2])
        with no_grad():
            t = flat(a, count)
            out = as_shape(substitute_(t, flat(b, count).clone(), lower=not upper, unit=unit), b.shape)
        ctx.save_for_backward(t, out, upper, unit)
        return out

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor | None, Tensor, None, None]:
        t, out, upper, unit = ctx.saved_values
        grad_b = substitute_(t.mT, flat(g, t.shape[0]).clone(), lower=upper, unit=unit).view(*g.shape)
        if not ctx.needs_input_grad[0]:
            return None, grad_b, None, None
        grad_a = -(grad_b @ out.mT)
        grad_a = grad_a.triu(1 if unit else 0) if upper else grad_a.tril(-1 if unit else 0)
        return grad_a, grad_b, None, None


class CholeskySolve(F.TensorFunction):
    """X = (L L^T)^-1 B for a Cholesky factor L (*, n, n) (``upper``: U, A = U^T U) and B (*, n, k) with one batch
    shape; with G = A^-1 g: gB = G, gL = -(G X^T + X G^T) L (``upper``: gU = -U (G X^T + X G^T))."""

    @staticmethod
    def forward(ctx: Context, b: Tensor, factor: Tensor, upper: bool) -> Tensor:
        count = math.prod(b.shape[:-2])
        with no_grad():
            out = as_shape(solve_factored(lower_factor(flat(factor, count), upper), flat(b, count)), b.shape)
        ctx.save_for_backward(factor, out, upper)
        return out

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, Tensor | None, None]:
        factor, out, upper = ctx.saved_values
        count = math.prod(g.shape[:-2])
        grad_b = solve_factored(lower_factor(flat(factor, count), upper), flat(g, count)).view(*g.shape)
        if not ctx.needs_input_grad[1]:
            return grad_b, None, None
        both = grad_b @ out.mT
        both = both + both.mT
        return grad_b, -(factor @ both if upper else both @ factor), None


class CholeskyInverse(F.TensorFunction):
    """A^-1 = M^T M, M = L^-1, for a Cholesky factor L (*, n, n) of A (``upper``: U, A = U^T U);
    gL = -A^-1 (g + g^T) A^-1 L (``upper``: gU = -U A^-1 (g + g^T) A^-1)."""

    @staticmethod
    def forward(ctx: Context, factor: Tensor, upper: bool) -> Tensor:
        n = factor.shape[-1]
        count = math.prod(factor.shape[:-2])
        with no_grad():
            lower = lower_factor(flat(factor, count), upper)
            m = substitute_(lower, eye_like(factor, n).expand(count, n, n).clone(), lower=True, unit=False)
            out = as_shape((m.mT @ m).contiguous(), factor.shape)
        ctx.save_for_backward(factor, out, upper)
        return out

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None]:
        factor, out, upper = ctx.saved_values
        both = out @ (g + g.mT) @ out
        return -(factor @ both if upper else both @ factor), None


def require_tensor(name: str, arg: str, x: Any) -> None:
    """PyTorch's TypeError for a non-tensor second argument."""
    if not is_tensor(x):
        raise TypeError(f"{name}(): argument '{arg}' (position 2) must be Tensor, not {type(x).__name__}")


def legacy_operands(name: str, b: Tensor, a: Tensor) -> tuple[int, ...]:
    """PyTorch's checks of a legacy solve's b (*, n, k) and A (*, n, n), in its order, once both have 2 dims: one dtype,
    A square, as many rows in b as in A, a float dtype, batch dims that broadcast; the broadcast batch shape."""
    a._check_backend(b)
    if b.dtype != a.dtype:
        raise DTypeError(f"{name}: Expected b and A to have the same dtype, but found b of type {_torch_name(b.dtype)} "
                         f"and A of type {_torch_name(a.dtype)} instead. (shapes {b.shape} and {a.shape})")
    n = a.shape[-1]
    if a.shape[-2] != n:
        raise ShapeError(f"{name}: A must be batches of square matrices, but they are {a.shape[-2]} by {n} matrices")
    if b.shape[-2] != n:
        raise ShapeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} but each b matrix is "
                         f"{b.shape[-2]} by {b.shape[-1]}")
    check_float(name, a)
    return broadcast_batch(name, a, b, a, b)


def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Tensor:  # noqa: A002 - PyTorch's names
    """X with A X = input (*, n, k) for A = L L^T given its Cholesky factor input2 = L (*, n, n) (``upper``: U with
    A = U^T U), reading only that triangle; batch dims broadcast. A zero on the factor's diagonal gives inf or nan."""
    name = "cholesky_solve"
    require_tensor(name, "input2", input2)
    for x, what in ((input, "b"), (input2, "u")):
        if x.dims < 2:
            raise ShapeError(f"{name}: {what} should have at least 2 dimensions, but has {x.dims} dimensions instead "
                             f"(shape {x.shape})")
    batch = legacy_operands(name, input, input2)
    n, k = input.shape[-2:]
    return CholeskySolve.apply(input.expand(*batch, n, k), input2.expand(*batch, n, n), upper)


def cholesky_inverse(input: Tensor, upper: bool = False) -> Tensor:  # noqa: A002
    """A^-1 (*, n, n) for A = L L^T given its Cholesky factor input = L (``upper``: U with A = U^T U), reading only
    that triangle; LinAlgError naming the batch element and the first zero on the factor's diagonal."""
    name = "cholesky_inverse"
    check_square(name, input)
    n = input.shape[-1]
    failure = first_failure(input.diagonal(0, -2, -1).reshape(math.prod(input.shape[:-2]), n) == 0)
    if failure is not None:
        element, k = failure
        raise LinAlgError(f"{name}: {batch_prefix(input, element)}The diagonal element {k} is zero, the inversion could "
                          "not be completed because the input matrix is singular.")
    return CholeskyInverse.apply(input, upper)


def triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,  # noqa: A002, N803
                     unitriangular: bool = False) -> TriangularSolveResult:
    """(X, a copy of A) with A X = input (``transpose``: A^T X = input) for triangular A (*, n, n), reading only its
    upper (``upper``) or lower triangle (``unitriangular``: its diagonal taken as ones), and input (*, n, k); batch
    dims broadcast (the copy too). ``torch.triangular_solve`` (deprecated there, without a warning here)."""
    name = "triangular_solve"
    require_tensor(name, "A", A)
    for x, what in ((input, "b"), (A, "A")):
        if x.dims < 2:
            raise ShapeError(f"torch.{name}: Expected {what} to have at least 2 dimensions, but it has {x.dims} dimensions "
                             f"instead (shape {x.shape})")
    batch = legacy_operands(name, input, A)
    n, k = input.shape[-2:]
    a = A.expand(*batch, n, n)
    x = TriangularSubstitution.apply(a.mT if transpose else a, input.expand(*batch, n, k), upper != transpose, unitriangular)
    return TriangularSolveResult(x, a.clone())


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
    """The Cholesky factor, the legacy solves with it and renorm (methods of Tensor)."""

    cholesky = cholesky
    cholesky_solve = cholesky_solve
    cholesky_inverse = cholesky_inverse
    triangular_solve = triangular_solve
    renorm = renorm
    renorm_ = renorm_


LINALG: dict[str, Callable[..., Any]] = {"cholesky": linalg_cholesky}
"""The ``mt.linalg`` functions of this module, by their PyTorch names."""

__all__ = ["cholesky", "cholesky_solve", "cholesky_inverse", "triangular_solve", "renorm"]
