"""Gradient clipping and norms (``torch.nn.utils.clip_grad``)."""

from __future__ import annotations

import functools
import math
import operator
import warnings
from collections.abc import Iterable

from ...autodiff import no_grad
from ...creation import tensor
from ...tensor import Tensor
from ...tensor_join import stack
from .convert_parameters import tensor_list

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    r"""Scale the gradients in place so that their joint norm is at most ``max_norm``; returns the norm before.

    total = \|(\|g_1\|_p, ..., \|g_n\|_p)\|_p (p = ``norm_type``, ``inf`` for the max-abs norm; for p = 2 the sum of
    every g_i . g_i, one dot-product kernel per gradient); every gradient is
    multiplied by min(1, max_norm / (total + 1e-6)), without a host sync. ``error_if_nonfinite``: RuntimeError when
    the total is nan or inf. ``foreach`` is accepted for PyTorch compatibility (the loop is the same).
    """
    grads = [p.grad for p in tensor_list(parameters) if p.grad is not None]
    norm_type = float(norm_type)
    if not grads:
        return tensor(0.0)
    with no_grad():
        if norm_type == 2.0:  # the sum of squares as one dot product (one matmul kernel) per gradient
            squares = [flat.view(1, -1) @ flat.view(-1, 1) for flat in (g.detach().reshape(-1) for g in grads)]
            total = functools.reduce(operator.add, squares).view(()).sqrt()
        else:
            total = stack([g.detach().norm(norm_type) for g in grads]).norm(norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                               "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                               "norm anyway, set `error_if_nonfinite=False`")
        coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
        coefs = {coef.dtype: coef}
        for g in grads:
            if g.dtype not in coefs:
                coefs[g.dtype] = coef.cast(g.dtype)
            g.mul_(coefs[g.dtype])
    return total


def clip_grad_norm(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated alias of :func:`clip_grad_norm_` (warns with a FutureWarning, as torch's does)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient into [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with no_grad():
        for p in tensor_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)


def get_total_norm(tensors: Tensor | Iterable[Tensor], norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The ``norm_type``-norm of the tensors' norms (their joint norm, as if concatenated), without gradient; 0 for
    no tensors. ``error_if_nonfinite``: RuntimeError for a nan or inf total."""
    items = tensor_list(tensors)
    norm_type = float(norm_type)
    if not items:
        return tensor(0.0)
    with no_grad():
        total = stack([t.detach().norm(norm_type) for t in items]).norm(norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                               "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                               "norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Multiply every gradient in place by min(1, max_norm / (total_norm + 1e-6)) (``total_norm`` from
    :func:`get_total_norm`)."""
    grads = [p.grad for p in tensor_list(parameters) if p.grad is not None]
    if not grads:
        return
    if not isinstance(total_norm, Tensor):
        raise TypeError(f"clip_grads_with_norm_: total_norm must be a Tensor, got {type(total_norm).__name__}")
    with no_grad():
        coef = (float(max_norm) / (total_norm.detach() + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef if coef.dtype == g.dtype and coef.backend is g.backend else coef.to(g.backend).cast(g.dtype))
