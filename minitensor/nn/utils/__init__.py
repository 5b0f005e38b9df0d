"""Gradient clipping and norms, flat parameter vectors, weight and spectral normalization, parametrizations,
padded sequences and conv/linear-batchnorm fusion (``torch.nn.utils``).

Submodules as in PyTorch: :mod:`.parametrize` (``register_parametrization``), :mod:`.parametrizations`
(``weight_norm``, ``spectral_norm`` as parametrizations) and :mod:`.rnn` (``pad_sequence``).
"""

from __future__ import annotations

import functools
import inspect
import math
import operator
from collections.abc import Iterable
from typing import Any

from ...autodiff import no_grad
from ...errors import ShapeError
from ...module import Module
from ...tensor import Tensor
from ...tensor_join import cat, stack

__all__ = [
    "clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters", "get_total_norm",
    "clip_grads_with_norm_", "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm",
    "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "skip_init",
    "parametrize", "parametrizations", "rnn",
]  # fmt: skip


def _tensors(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        return [parameters]
    out = list(parameters)
    for p in out:
        if not isinstance(p, Tensor):
            raise TypeError(f"expected Tensors (model.parameters()), got {type(p).__name__}")
    return out


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    r"""Scale the gradients in place so that their joint norm is at most ``max_norm``; returns the norm before.

    total = \|(\|g_1\|_p, ..., \|g_n\|_p)\|_p (p = ``norm_type``, ``inf`` for the max-abs norm; for p = 2 the sum of
    every g_i . g_i, one dot-product kernel per gradient); every gradient is
    multiplied by min(1, max_norm / (total + 1e-6)), without a host sync. ``error_if_nonfinite``: RuntimeError when
    the total is nan or inf. ``foreach`` is accepted for PyTorch compatibility (the loop is the same).
    """
    grads = [p.grad for p in _tensors(parameters) if p.grad is not None]
    norm_type = float(norm_type)
    if not grads:
        from ...creation import tensor

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


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient into [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _tensors(parameters):
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated into one 1-D tensor (differentiable, like ``torch.cat``)."""
    return cat([p.reshape(-1) for p in _tensors(parameters)])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into the parameters, in place (the inverse of
    :func:`parameters_to_vector`); ``vec`` must have exactly as many elements as the parameters together."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected a Tensor, but got: {type(vec).__name__}")
    params = _tensors(parameters)
    total = sum(p.numel() for p in params)
    if vec.dims != 1 or vec.numel() != total:
        raise ShapeError(f"vector_to_parameters: vec of shape {vec.shape} does not hold the parameters' {total} elements")
    start = 0
    with no_grad():
        for p in params:
            n = p.numel()
            p.copy_(vec[start : start + n].reshape(*p.shape))
            start += n


def get_total_norm(tensors: Tensor | Iterable[Tensor], norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The ``norm_type``-norm of the tensors' norms (their joint norm, as if concatenated), without gradient; 0 for
    no tensors. ``error_if_nonfinite``: RuntimeError for a nan or inf total."""
    items = _tensors(tensors)
    norm_type = float(norm_type)
    if not items:
        from ...creation import tensor

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
    grads = [p.grad for p in _tensors(parameters) if p.grad is not None]
    if not grads:
        return
    if not isinstance(total_norm, Tensor):
        raise TypeError(f"clip_grads_with_norm_: total_norm must be a Tensor, got {type(total_norm).__name__}")
    with no_grad():
        coef = (float(max_norm) / (total_norm.detach() + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef if coef.dtype == g.dtype and coef.backend is g.backend else coef.to(g.backend).cast(g.dtype))


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Any:
    """``module_cls(*args, **kwargs)`` whose parameters PyTorch would leave uninitialized; here they hold the default
    initialization (any values are valid). ``module_cls`` must take a ``device`` argument, as in PyTorch."""
    if not isinstance(module_cls, type) or not issubclass(module_cls, Module):
        raise TypeError(f"skip_init: expected a Module class, got {module_cls!r}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)


from . import parametrizations, parametrize, rnn  # noqa: E402 - the submodules use the functions above
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights  # noqa: E402
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: E402
from .weight_norm import remove_weight_norm, weight_norm  # noqa: E402
