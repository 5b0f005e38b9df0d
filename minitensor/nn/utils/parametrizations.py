"""Weight and spectral normalization and orthogonality (:mod:`.orthogonal`) as parametrizations
(``torch.nn.utils.parametrizations``).

``weight_norm(module)`` stores the magnitude and direction as ``parametrizations.weight.original0`` (g) and
``original1`` (v); ``spectral_norm(module)`` keeps the weight as ``parametrizations.weight.original`` and the power
iteration's unit vectors as the buffers ``parametrizations.weight.0._u`` and ``_v`` (15 iterations at registration,
``n_power_iterations`` per access in training mode, none in eval mode). Both compute ``module.weight`` on access
(:mod:`.parametrize`). State-dict keys are PyTorch's.
"""

from __future__ import annotations

from ...autodiff import no_grad
from ...errors import IndexOutOfRangeError
from ...module import Module
from ...tensor import Tensor
from ..norm import normalize
from . import parametrize
from .orthogonal import orthogonal
from .spectral_norm import default_dim, random_unit, weight_matrix
from .weight_norm import norm_except_dim, weight_norm_of

__all__ = ["weight_norm", "spectral_norm", "orthogonal"]


class _WeightNorm(Module):
    """weight = g * v / ||v|| (norm over every dim but ``dim``; -1: the whole tensor)."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_norm_of(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Parametrize ``module.<name>`` as ``g * v / ||v||`` (``original0`` = g, ``original1`` = v); returns module."""
    return parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


class _SpectralNorm(Module):
    """weight / sigma, sigma the largest singular value of the weight as a matrix, by power iteration."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.dims
        if not -ndim <= dim < ndim:
            raise IndexOutOfRangeError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            matrix = weight_matrix(weight.detach(), self.dim)
            h, w = matrix.shape
            self.register_buffer("_u", random_unit(h, weight, eps))
            self.register_buffer("_v", random_unit(w, weight, eps))
            self._power_method(matrix, 15)

    def _power_method(self, matrix: Tensor, n_power_iterations: int) -> None:
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(normalize(matrix @ self._v, dim=0, eps=self.eps))
                self._v.copy_(normalize(matrix.t() @ self._u, dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.dims == 1:
            return normalize(weight, dim=0, eps=self.eps)
        matrix = weight_matrix(weight, self.dim)
        if self.training:
            self._power_method(matrix.detach(), self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = (u * (matrix @ v)).sum()
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Parametrize ``module.<name>`` as the weight divided by its spectral norm (power iteration, see the module
    docstring); ``dim`` is the output dim (default: 1 for transposed convolutions, else 0). Returns module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{type(module).__name__}' has no parameter or buffer with name '{name}'")
    spectral = _SpectralNorm(weight, n_power_iterations, default_dim(module) if dim is None else dim, eps)
    return parametrize.register_parametrization(module, name, spectral)
