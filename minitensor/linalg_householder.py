"""Householder reflectors: ``mt.geqrf`` (LAPACK's compact QR), their product ``linalg.householder_product``
(LAPACK's orgqr, also ``mt.orgqr``) and ``mt.ormqr`` (LAPACK's ormqr: that product applied to a matrix).

The reflectors are stored as ``linalg.qr`` (linalg_decomp.py) and LAPACK's geqrf store them: column i of A below
the diagonal holds v_i's entries after its leading 1 (v_i is zero above row i), and H_i = I - tau_i v_i v_i^T. The
product H_0 H_1 ... H_{k-1} is applied to the first n columns of the identity from the last reflector to the first,
each step a rank-1 update built from matmul and broadcasting, so autodiff differentiates it in A (only the strictly
lower part of its first k columns is read, the rest gets a zero gradient) and in tau. ormqr applies the reflectors
to the other matrix the same way (no m x m Q is formed), so it is differentiable in all three arguments.
geqrf runs ``linalg.qr``'s Householder QR (linalg_decomp.py) and packs its R and reflectors, so
``householder_product(*geqrf(A))`` is ``linalg.qr(A).Q`` (m >= n); like PyTorch's, it has no derivative.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from . import tensor_functions as F
from .autodiff import Context, no_grad
from .errors import DTypeError, NoDerivativeError, ShapeError
from .linalg_decomp import check_matrix, flat_copy, householder, power_of_two
from .linalg_solve import as_shape, check_float, eye_like, is_tensor
from .tensor_inplace import _torch_name
from .tensor_join import cat

if TYPE_CHECKING:
    from .tensor import Tensor


def householder_product(input: Tensor, tau: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """The first n columns of H_0 ... H_{k-1} (*, m, n) for the reflectors stored in ``input`` (*, m, n), m >= n, and
    tau (*, k), k <= n, with input's batch shape."""
    A = input  # noqa: N806 - the matrix
    name = "torch.linalg.householder_product"
    for arg, position, x in (("input", 1, A), ("tau", 2, tau)):
        if not is_tensor(x):
            raise TypeError(f"linalg.householder_product(): argument '{arg}' (position {position}) must be Tensor, "
                            f"not {type(x).__name__}")
    A._check_backend(tau)
    if A.dims < 2:
        raise ShapeError(f"{name}: input must have at least 2 dimensions. (shape {A.shape})")
    m, n = A.shape[-2:]
    if m < n:
        raise ShapeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1] (shape {A.shape})")
    if tau.dims != A.dims - 1:
        raise ShapeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                         f"{tau.dims} and input.ndim is equal to {A.dims}")
    k = tau.shape[-1]
    if k > n:
        raise ShapeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1] (shapes {A.shape} "
                         f"and {tau.shape})")
    if tau.shape[:-1] != A.shape[:-2]:
        raise ShapeError(f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                         f"{list(tau.shape[:-1])} (input shape {A.shape})")
    check_float(name, A)
    if tau.dtype != A.dtype:
        raise DTypeError(f"{name}: tau dtype {_torch_name(tau.dtype)} does not match input dtype {_torch_name(A.dtype)}")
    eye = eye_like(A, m)[:, :n]
    q = eye.expand(*A.shape)
    if k == 0:  # the identity, still a function of input (zero gradient), as PyTorch's
        return q + A[..., :0] @ A[..., :0, :]
    vs = A[..., :k].tril(-1) + eye[:, :k]  # (*, m, k): v_i in column i
    taus = tau.unsqueeze(-2)  # (*, 1, k)
    for i in reversed(range(k)):
        v = vs[..., i : i + 1]
        q = q - v @ (taus[..., i : i + 1] * (v.mT @ q))
    return q


def orgqr(input: Tensor, input2: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """``torch.orgqr``: :func:`householder_product` (tau named ``input2``, as PyTorch names it)."""
    return householder_product(input, input2)


class GeqrfResult(NamedTuple):
    """(a, tau), as ``torch.return_types.geqrf``."""

    a: Tensor
    tau: Tensor


class _Geqrf(F.TensorFunction):
    """geqrf's packed matrix or tau (``out``) recorded as computed from ``a``: PyTorch has no derivative for it."""

    higher_order = True

    @staticmethod
    def forward(ctx: Context, a: Tensor, out: Tensor) -> Tensor:
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, None]:
        raise NoDerivativeError("the derivative for 'geqrf' is not implemented (as in PyTorch); use linalg.qr, which "
                                "is differentiable")


def geqrf(input: Tensor) -> GeqrfResult:  # noqa: A002 - PyTorch's name
    """LAPACK's geqrf of each matrix of ``input`` (*, m, n): ``a`` holds R on and above the diagonal and, below it in
    column i, reflector v_i's entries after its leading 1; tau (*, min(m, n)), so Q = H_0 ... H_{k-1} with
    H_i = I - tau_i v_i v_i^T (:func:`householder_product`) and A = QR. No derivative, as PyTorch's."""
    check_matrix("torch.geqrf", input, "input")
    m, n = input.shape[-2:]
    k = min(m, n)
    with no_grad():
        if input.numel() == 0:
            packed, tau = input.detach().clone(), input._zeros((*input.shape[:-2], k))
        else:
            x = flat_copy(input)
            r, vs, taus = householder(x / power_of_two(x))
            zero = x._zeros((x.shape[0], 1, 1))
            columns = [cat([zero.expand(x.shape[0], j + 1, 1), vs[j][:, 1:]], 1) for j in range(k)]
            lower = cat([*columns, x._zeros((x.shape[0], m, n - k))], 2) if columns else x._zeros(x.shape)
            packed = as_shape(r * power_of_two(x) + lower, input.shape)
            tau = as_shape(cat(taus, 2) if taus else x._zeros((x.shape[0], 1, 0)), (*input.shape[:-2], k))
    return GeqrfResult(_Geqrf.apply(input, packed), _Geqrf.apply(input, tau))


def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left: bool = True, transpose: bool = False) -> Tensor:  # noqa: A002
    """Q C, Q^T C (``transpose``), C Q or C Q^T (``left=False``) for C = ``input3`` (*, m, n) and Q = H_0 ... H_{k-1},
    the product of the reflectors stored in ``input`` (*, mn, k) and ``input2`` (tau, (*, k)) as :func:`geqrf`
    stores them, mn = m (left) or n; each reflector applied as a rank-1 update, so it differentiates in all three."""
    name = "torch.ormqr"
    for arg, position, x in (("input", 1, input), ("input2", 2, input2), ("input3", 3, input3)):
        if not is_tensor(x):
            raise TypeError(f"ormqr(): argument '{arg}' (position {position}) must be Tensor, not {type(x).__name__}")
    A, tau, C = input, input2, input3  # noqa: N806 - the matrices
    A._check_backend(tau)
    A._check_backend(C)
    for what, x in (("input", A), ("other", C)):
        if x.dims < 2:
            raise ShapeError(f"{name}: {what} must have at least 2 dimensions. (shape {x.shape})")
    if tau.dims != A.dims - 1:
        raise ShapeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                         f"{tau.dims} and input.ndim is equal to {A.dims}")
    if C.dims != A.dims:
        raise ShapeError(f"{name}: Expected other to have the same number of dimensions as input, but got other.ndim "
                         f"equal to {C.dims} and input.ndim is equal to {A.dims}")
    side = -2 if left else -1
    if C.shape[side] != A.shape[-2]:
        raise ShapeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2] (shapes {C.shape} and {A.shape})")
    k = tau.shape[-1]
    if k != min(C.shape[side], A.shape[-1]):
        raise ShapeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[{side}], input.shape[-1]) (shapes "
                         f"{tau.shape}, {C.shape} and {A.shape})")
    for what, got in (("tau", tau.shape[:-1]), ("other", C.shape[:-2])):
        if got != A.shape[:-2]:
            raise ShapeError(f"{name}: Expected batch dimensions of {what} to be equal to input.shape[:-2], but got "
                             f"{list(got)} (input shape {A.shape})")
    check_float(name, A)
    for what, x in (("tau", tau), ("other", C)):
        if x.dtype != A.dtype:
            raise DTypeError(f"{name}: Expected input and {what} to have the same dtype, but input has dtype "
                             f"{_torch_name(A.dtype)} and {what} has dtype {_torch_name(x.dtype)}")
    if k == 0 or C.numel() == 0:
        return C.clone()
    vs = A[..., :k].tril(-1) + eye_like(A, A.shape[-2])[:, :k]  # (*, mn, k): v_i in column i
    taus = tau.unsqueeze(-2)  # (*, 1, k)
    forward_order = transpose == left  # Q^T C and C Q apply H_0 first
    out = C
    for i in range(k) if forward_order else reversed(range(k)):
        v, t = vs[..., i : i + 1], taus[..., i : i + 1]
        out = out - v @ (t * (v.mT @ out)) if left else out - ((out @ v) * t) @ v.mT
    return out


LINALG: dict[str, Callable[..., Any]] = {"householder_product": householder_product}
"""The ``mt.linalg`` functions of this module, by their PyTorch names."""

__all__ = ["orgqr", "geqrf", "ormqr"]
