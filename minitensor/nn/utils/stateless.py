"""``torch.nn.utils.stateless``: the deprecated home of ``functional_call`` (now :func:`minitensor.func.functional_call`)."""

from __future__ import annotations

import warnings
from typing import Any

from ...func.functional_call import functional_call as _functional_call
from ...module import Module
from ...tensor import Tensor

__all__ = ["functional_call"]


def functional_call(module: Module, parameters_and_buffers: dict[str, Tensor], args: Any = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True, strict: bool = False) -> Any:
    """:func:`minitensor.func.functional_call` with one dict, warning (FutureWarning) as torch's deprecated one does."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in a "
                  "future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
