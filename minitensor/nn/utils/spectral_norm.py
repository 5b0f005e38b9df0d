"""Spectral normalization by a forward pre-hook (``torch.nn.utils.spectral_norm``/``remove_spectral_norm``).

``spectral_norm(module, "weight")`` keeps the parameter as ``weight_orig`` and two buffers ``weight_u`` and
``weight_v``, unit vectors of the power iteration on the weight viewed as a matrix (dim ``dim`` first, the rest
flattened). Before every forward in training mode, ``n_power_iterations`` steps ``v = normalize(W^T u)``, ``u =
normalize(W v)`` update the buffers in place; in eval mode they are used as they are. Then ``module.weight =
weight_orig / sigma`` with ``sigma = u . (W v)``, u and v treated as constants by autodiff (as in PyTorch).
"""

from __future__ import annotations

from typing import Any

from ...autodiff import no_grad
from ...creation import randn
from ...module import Module, Parameter
from ...tensor import Tensor
from ..conv_transpose import ConvTranspose1d, ConvTranspose2d
from ..norm import normalize
from .weight_norm import remove_hook

__all__ = ["spectral_norm", "remove_spectral_norm", "weight_matrix", "default_dim"]


def weight_matrix(weight: Tensor, dim: int) -> Tensor:
    """``weight`` as a matrix: dim ``dim`` first (rows), every other dim flattened into the columns."""
    if dim != 0:
        weight = weight.permute(dim, *[d for d in range(weight.dims) if d != dim])
    return weight.reshape(weight.shape[0], -1)


def default_dim(module: Module) -> int:
    """The output-channel dim of ``module``'s weight: 1 for transposed convolutions, else 0."""
    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d)) else 0


def random_unit(n: int, like: Tensor, eps: float) -> Tensor:
    """A random unit vector of ``n`` elements, of ``like``'s dtype and backend."""
    return normalize(randn(n, dtype=like.dtype, backend=like.backend), dim=0, eps=eps)


class SpectralNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_orig``, ``<name>_u`` and ``<name>_v``."""

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got n_power_iterations={n_power_iterations}")
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        matrix = weight_matrix(weight, self.dim)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(normalize(matrix.t() @ u, dim=0, eps=self.eps))
                    u.copy_(normalize(matrix @ v, dim=0, eps=self.eps))
                u, v = u.clone(), v.clone()
        sigma = (u * (matrix @ v)).sum()
        return weight / sigma

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int, eps: float) -> SpectralNorm:
        for hook in module.__dict__.get("_forward_pre_hooks", {}).values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        weight = module._parameters.get(name)
        if not isinstance(weight, Parameter):
            raise ValueError(f"spectral_norm: {type(module).__name__} has no parameter named {name!r}")
        if weight.dims < 2:
            raise ValueError(f"spectral_norm: {name} must have at least 2 dims, got shape {weight.shape}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        with no_grad():
            h, w = weight_matrix(weight, dim).shape
            u, v = random_unit(h, weight, eps), random_unit(w, weight, eps)
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its largest singular value, estimated by power iteration before each forward
    (see the module docstring); ``dim`` is the output dim (default: 1 for transposed convolutions, else 0)."""
    SpectralNorm.apply(module, name, n_power_iterations, default_dim(module) if dim is None else dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`spectral_norm`: ``<name>`` becomes one parameter again, holding the normalized weight."""
    return remove_hook(module, SpectralNorm, name, "spectral_norm")
