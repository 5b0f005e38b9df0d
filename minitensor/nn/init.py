"""Weight initializers with ``torch.nn.init``'s in-place names and formulas.

Each ``name_(tensor, ...)`` overwrites ``tensor`` in place (under no_grad, keeping its identity, backend and dtype)
with a draw from :func:`minitensor.generator` (seed it with ``manual_seed``) and returns it. Fans follow PyTorch:
for a weight of shape (out, in, *kernel), fan_in = in * prod(kernel) and fan_out = out * prod(kernel).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..autodiff import no_grad
from ..creation import generator
from ..errors import ShapeError
from ..random_state import rng_for
from ..tensor import Tensor
from ..tensor_random import GeneratorLike

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_", "dirac_",
    "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_",
    "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform",
    "kaiming_normal", "orthogonal", "sparse",
]


def _fill(tensor: Tensor, values: np.ndarray) -> Tensor:
    """Write host ``values`` into ``tensor`` in place; returns ``tensor``."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"nn.init functions take a Tensor, got {type(tensor).__name__}")
    source = Tensor(tensor.backend.from_numpy(np.asarray(values, dtype=tensor.dtype).reshape(tensor.shape)), tensor.backend)
    with no_grad():
        tensor.copy_(source)
    return tensor


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight with at least 2 dims."""
    shape = tensor.shape
    if len(shape) < 2:
        raise ShapeError(f"fan in and fan out need a tensor with at least 2 dims, got shape {shape}")
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """PyTorch's recommended gain for ``nonlinearity`` (linear, conv*, sigmoid, tanh, relu, leaky_relu, selu)."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "sigmoid", "identity"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3.0
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1.0 + slope * slope))
    if nonlinearity == "selu":
        return 3.0 / 4.0
    raise ValueError(f"unsupported nonlinearity {nonlinearity!r}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fill with samples from U(a, b)."""
    return _fill(tensor, generator().uniform(a, b, tensor.shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fill with samples from N(mean, std^2)."""
    return _fill(tensor, generator().normal(mean, std, tensor.shape))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0) -> Tensor:
    """Fill with samples from N(mean, std^2) conditioned on [a, b] (rejection sampling; ``a < b``)."""
    if not a < b:
        raise ValueError(f"trunc_normal_ needs a < b, got a={a}, b={b}")
    out = np.empty(math.prod(tensor.shape))
    filled, rng = 0, generator()
    while filled < out.size:
        draw = rng.normal(mean, std, max(16, 2 * (out.size - filled)))
        keep = draw[(draw >= a) & (draw <= b)][: out.size - filled]
        out[filled : filled + keep.size] = keep
        filled += keep.size
    return _fill(tensor, out)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    return _fill(tensor, np.full(tensor.shape, val))


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity (ones on the main diagonal)."""
    if tensor.dims != 2:
        raise ShapeError(f"eye_ needs a 2-D tensor, got shape {tensor.shape}")
    rows, cols = tensor.shape
    return _fill(tensor, np.eye(rows, cols))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight (out, in, *kernel) so the convolution is the identity: zeros, and
    in each of ``groups`` groups of out channels a 1 at [group start + d, d, kernel centre] for d < min(out / groups,
    in), so each input channel passes through once per group."""
    if tensor.dims not in (3, 4, 5):
        raise ShapeError(f"dirac_ needs a tensor with 3, 4 or 5 dims, got shape {tensor.shape}")
    if groups <= 0 or tensor.shape[0] % groups:
        raise ShapeError(f"dirac_: dim 0 ({tensor.shape[0]}) of shape {tensor.shape} must be divisible by groups ({groups})")
    per_group = tensor.shape[0] // groups
    values = np.zeros(tensor.shape)
    centre = tuple(k // 2 for k in tensor.shape[2:])
    for g in range(groups):
        for d in range(min(per_group, tensor.shape[1])):
            values[(g * per_group + d, d, *centre)] = 1.0
    return _fill(tensor, values)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)) (Glorot)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out)) if fan_in + fan_out else 0.0
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)) if fan_in + fan_out else 0.0)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    if tensor.numel() == 0:
        return 0.0  # nothing to draw (PyTorch warns and does nothing)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    if fan == 0:
        raise ShapeError(f"cannot initialize a tensor of shape {tensor.shape}: its {mode} is 0")
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Tensor:
    """U(-b, b) with b = gain * sqrt(3 / fan) (He); ``a`` is the leaky-ReLU slope used in the gain."""
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan) (He)."""
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity))


def orthogonal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """A (semi-)orthogonal matrix (rows or columns orthonormal) times ``gain``, from the QR of a Gaussian draw;
    dims after the first are flattened."""
    if tensor.dims < 2:
        raise ShapeError(f"orthogonal_ needs a tensor with at least 2 dims, got shape {tensor.shape}")
    rows = tensor.shape[0]
    cols = math.prod(tensor.shape[1:])
    flat = generator().normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: GeneratorLike = None) -> Tensor:
    """A 2-D tensor of N(0, std^2) draws with ceil(sparsity * rows) entries of every column set to zero (rows chosen
    at random per column; Martens 2010)."""
    if tensor.dims != 2:
        raise ShapeError(f"sparse_ needs a 2-D tensor, got shape {tensor.shape}")
    rows, cols = tensor.shape
    rng = rng_for(generator)
    values = rng.normal(0.0, std, (rows, cols))
    zeros_per_column = math.ceil(sparsity * rows)
    for col in range(cols):
        values[rng.permutation(rows)[:zeros_per_column], col] = 0.0
    return _fill(tensor, values)


def _deprecated(initializer: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``initializer`` under its old name without the trailing underscore, warning (FutureWarning) as torch's do."""
    new_name = initializer.__name__
    old_name = new_name[:-1]

    def deprecated(*args: Any, **kwargs: Any) -> Tensor:
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.", FutureWarning,
                      stacklevel=2)
        return initializer(*args, **kwargs)

    deprecated.__name__ = deprecated.__qualname__ = old_name
    deprecated.__doc__ = f"Deprecated alias of :func:`{new_name}` (warns)."
    return deprecated


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
