"""``nn.CrossMapLRN2d``: the legacy (Lua Torch) local response normalization across channels of 4-D inputs, with
PyTorch's output values.

out[:, c] = x[:, c] * (k + alpha / size * S[:, c]) ** -beta, where S[:, c] sums x[:, j]^2 over the channels j of
c's window. With h = (size - 1) // 2 + 1, that window holds channels max(0, c - h + 1) .. min(C - 1, c + h - 1) and
channel 0: PyTorch builds the windows as a running sum over the channels (add the channel entering the window, subtract
the one leaving it) whose subtractions start one channel late, so channel 0 never leaves. :func:`cross_map_windows`
replays that running sum on indicator vectors, so the windows here are exactly PyTorch's.

The gradient is autodiff's, the true derivative of these outputs. PyTorch's hand-written backward of this legacy
module uses other windows than its forward (``torch.autograd.gradcheck`` fails on it for 2 or more channels, and
``size=1`` crashes its backward), so gradients differ from PyTorch's there, deliberately.
"""

from __future__ import annotations

import numpy as np

from ..creation import tensor
from ..module import Module
from ..tensor import Tensor

__all__ = ["CrossMapLRN2d"]


def cross_map_windows(channels: int, size: int) -> np.ndarray:
    """(channels, channels) 0/1 matrix: row c marks the channels whose squares PyTorch's running window sum holds
    for channel c (see the module docstring)."""
    half = int((size - 1) / 2 + 1)
    eye = np.eye(channels)
    windows = np.zeros((channels, channels))
    windows[0] = eye[: min(half, channels)].sum(0)
    for c in range(1, channels):
        windows[c] = windows[c - 1]
        if c < channels - half + 1:
            windows[c] += eye[c + half - 1]
        if c > half:
            windows[c] -= eye[c - half]
    return windows


class CrossMapLRN2d(Module):
    """Local response normalization across the channels of an (N, C, H, W) input (see the module docstring)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.dims != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dims}D instead.")
        windows = tensor(cross_map_windows(input.shape[1], self.size).T, dtype=input.dtype, backend=input.backend)
        squares = (input * input).permute(0, 2, 3, 1)  # channels last: one matmul sums every window
        sums = (squares @ windows).permute(0, 3, 1, 2)
        return input * (sums * (self.alpha / self.size) + self.k) ** (-self.beta)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
