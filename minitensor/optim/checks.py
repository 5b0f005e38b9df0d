"""Argument checks of the optimizers' constructors, with PyTorch's messages (``Invalid learning rate: -1``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["check_number", "check_betas"]


def check_number(name: str, value: Any, low: float | None = 0.0, high: float | None = None, *, open_high: bool = False) -> None:
    """ValueError ``Invalid <name>: <value>`` unless ``low <= value`` (and ``value < high`` or ``<= high``); TypeError
    for a non-number."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    bad = math.isnan(value) or (low is not None and value < low)
    if high is not None:
        bad = bad or (value >= high if open_high else value > high)
    if bad:
        raise ValueError(f"Invalid {name}: {value}")


def check_betas(betas: Any) -> None:
    """ValueError unless ``betas`` is a pair of numbers in [0, 1) (``Invalid beta parameter at index i: <value>``)."""
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise ValueError(f"betas must be a pair (beta1, beta2), got {betas!r}")
    check_number("beta parameter at index 0", betas[0], 0.0, 1.0, open_high=True)
    check_number("beta parameter at index 1", betas[1], 0.0, 1.0, open_high=True)
