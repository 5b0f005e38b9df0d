"""The product of Householder reflectors: ``linalg.householder_product`` (LAPACK's orgqr) and ``mt.orgqr``.

The reflectors are stored as ``linalg.qr`` (linalg_decomp.py) and LAPACK's geqrf store them: column i of A below
the diagonal holds v_i's entries after its leading 1 (v_i is zero above row i), and H_i = I - tau_i v_i v_i^T. The
product H_0 H_1 ... H_{k-1} is applied to the first n columns of the identity from the last reflector to the first,
each step a rank-1 update built from matmul and broadcasting, so autodiff differentiates it in A (only the strictly
lower part of its first k columns is read, the rest gets a zero gradient) and in tau.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .errors import DTypeError, ShapeError
from .linalg_solve import check_float, eye_like, is_tensor
from .tensor_inplace import _torch_name

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


LINALG: dict[str, Callable[..., Any]] = {"householder_product": householder_product}
"""The ``mt.linalg`` functions of this module, by their PyTorch names."""

__all__ = ["orgqr"]
