"""Gradient clipping and norms, flat parameter vectors, weight and spectral normalization, parametrizations,
padded sequences and conv/linear-batchnorm fusion (``torch.nn.utils``).

Submodules as in PyTorch: :mod:`.clip_grad` (the clipping functions), :mod:`.convert_parameters`
(``parameters_to_vector``), :mod:`.parametrize` (``register_parametrization``), :mod:`.parametrizations`
(``weight_norm``, ``spectral_norm`` as parametrizations), :mod:`.prune` (pruning by masks), :mod:`.rnn`
(``pad_sequence``) and :mod:`.stateless` (the deprecated ``functional_call``).
"""

from __future__ import annotations

import inspect
from typing import Any

from ...module import Module
from . import clip_grad, convert_parameters, parametrizations, parametrize, prune, rnn, stateless
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters",
    "get_total_norm", "clip_grads_with_norm_", "weight_norm", "remove_weight_norm", "spectral_norm",
    "remove_spectral_norm", "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights",
    "skip_init", "clip_grad", "convert_parameters", "parametrize", "parametrizations", "prune", "rnn", "stateless",
]  # fmt: skip


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Any:
    """``module_cls(*args, **kwargs)`` whose parameters PyTorch would leave uninitialized; here they hold the default
    initialization (any values are valid). ``module_cls`` must take a ``device`` argument, as in PyTorch."""
    if not isinstance(module_cls, type) or not issubclass(module_cls, Module):
        raise TypeError(f"skip_init: expected a Module class, got {module_cls!r}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)
