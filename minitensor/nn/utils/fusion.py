"""Folding an eval-mode BatchNorm into the convolution or linear layer before it (``torch.nn.utils.fusion``)."""

from __future__ import annotations

import copy
from typing import Any, TypeVar

from ...creation import ones_like, zeros_like
from ...module import Module, Parameter
from ...tensor import Tensor

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]

_M = TypeVar("_M", bound=Module)


def _check_eval(layer: Module, bn: Module) -> None:
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if getattr(bn, "running_mean", None) is None or getattr(bn, "running_var", None) is None:
        raise AssertionError("Fusion needs a BatchNorm with running statistics (track_running_stats=True)")


def fuse_conv_bn_eval(conv: _M, bn: Module, transpose: bool = False) -> _M:
    """A copy of ``conv`` whose output equals ``bn(conv(x))`` for the eval-mode ``bn``."""
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps,
                                                    bn.weight, bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                         bn_w: Tensor | None, bn_b: Tensor | None, transpose: bool = False) -> tuple[Parameter, Parameter]:
    """(weight, bias) of the convolution followed by batch norm: the weight scaled per output channel (dim 0; dim 1
    with ``transpose``) by bn_w / sqrt(bn_rv + eps), the bias (conv_b - bn_rm) * that scale + bn_b."""
    bias_dtype = conv_b.dtype if conv_b is not None else conv_w.dtype
    conv_b = zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
    rsqrt = (bn_rv + bn_eps).rsqrt()
    shape: list[Any] = [1, -1] if transpose else [-1, 1]
    shape += [1] * (conv_w.dims - 2)
    weight = (conv_w * (bn_w * rsqrt).reshape(*shape)).cast(conv_w.dtype)
    bias = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).cast(bias_dtype)
    return Parameter(weight.detach(), conv_w.requires_grad), Parameter(bias.detach(), conv_b.requires_grad)


def fuse_linear_bn_eval(linear: _M, bn: Module) -> _M:
    """A copy of ``linear`` whose output equals ``bn(linear(x))`` for the eval-mode ``bn`` (its num_features is
    linear's out_features, or 1)."""
    _check_eval(linear, bn)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
                             f"out_features={linear.out_features} and num_features={bn.num_features}")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps,
                                                      bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                           bn_w: Tensor, bn_b: Tensor) -> tuple[Parameter, Parameter]:
    """(weight, bias) of the linear layer followed by batch norm: rows scaled by bn_w / sqrt(bn_rv + eps)."""
    bias_dtype = linear_b.dtype if linear_b is not None else linear_w.dtype
    linear_b = zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    weight = linear_w * scale.unsqueeze(-1).cast(linear_w.dtype)
    bias = ((linear_b - bn_rm) * scale + bn_b).cast(bias_dtype)
    return Parameter(weight.detach(), linear_w.requires_grad), Parameter(bias.detach(), linear_b.requires_grad)
