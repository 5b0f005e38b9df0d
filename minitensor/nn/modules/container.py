"""``torch.nn.modules.container``'s names, for code that imports them from there: the module and parameter containers."""

from __future__ import annotations

from ..container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]
