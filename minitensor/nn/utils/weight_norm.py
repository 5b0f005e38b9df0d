"""Weight normalization by a forward pre-hook (``torch.nn.utils.weight_norm``/``remove_weight_norm``).

``weight_norm(module, "weight", dim)`` replaces the parameter ``weight`` by two parameters, the magnitude
``weight_g`` and the direction ``weight_v``, and recomputes ``module.weight = weight_v * (weight_g /
norm_except_dim(weight_v, 2, dim))`` before every forward (a plain tensor attribute, differentiable in both).
"""

from __future__ import annotations

from typing import Any

from ...module import Module, Parameter
from ...tensor import Tensor
from ...tensor_data import normalize_dim

__all__ = ["weight_norm", "remove_weight_norm", "norm_except_dim"]


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:  # noqa: A002 - PyTorch's names
    """The ``pow``-norm of ``v`` over every dim but ``dim``, shaped to broadcast against ``v`` (size 1 elsewhere);
    ``dim=-1`` is the norm of the whole tensor (PyTorch's convention)."""
    if dim == -1:
        return v.norm(pow)
    if v.dims == 0:
        raise ValueError(f"norm_except_dim: dim {dim} is out of range for a 0-d tensor")
    d = normalize_dim(dim, v.dims)
    if d == 0:
        return v.reshape(v.shape[0], -1).norm(pow, dim=1).reshape(v.shape[0], *([1] * (v.dims - 1)))
    if d == v.dims - 1:
        return v.reshape(-1, v.shape[-1]).norm(pow, dim=0).reshape(*([1] * (v.dims - 1)), v.shape[-1])
    return norm_except_dim(v.transpose(0, d), pow, 0).transpose(0, d)


def weight_norm_of(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """``v * (g / norm_except_dim(v, 2, dim))`` (``torch._weight_norm``)."""
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def compute_weight(self, module: Module) -> Tensor:
        return weight_norm_of(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        for hook in module.__dict__.get("_forward_pre_hooks", {}).values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        weight = module._parameters.get(name)
        if not isinstance(weight, Parameter):
            raise ValueError(f"weight_norm: {type(module).__name__} has no parameter named {name!r}")
        fn = WeightNorm(name, -1 if dim is None else dim)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` with the norm over every dim but ``dim`` (None: over the
    whole tensor): parameters ``<name>_g`` and ``<name>_v``, the weight recomputed before each forward. Returns
    ``module``."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`weight_norm`: ``<name>`` becomes one parameter again, holding the current weight."""
    return remove_hook(module, WeightNorm, name, "weight_norm")


def remove_hook(module: Module, kind: type[Any], name: str, what: str) -> Module:
    """Unregister ``module``'s forward pre-hook of class ``kind`` for parameter ``name`` after its ``remove(module)``
    restores the plain parameter; ValueError naming ``what`` when there is none."""
    hooks = module.__dict__.get("_forward_pre_hooks", {})
    for key, hook in list(hooks.items()):
        if isinstance(hook, kind) and hook.name == name:
            hook.remove(module)
            del hooks[key]
            return module
    raise ValueError(f"{what} of '{name}' not found in {module}")
