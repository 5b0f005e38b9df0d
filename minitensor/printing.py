"""How tensors print: ``set_printoptions`` (``torch.set_printoptions``) and the NumPy options ``Tensor.__repr__`` uses.

``repr(tensor)`` formats its values with ``np.array2string``. Until ``set_printoptions`` is called it uses NumPy's
own print options (8 digits); afterwards the options set here, PyTorch's names mapped onto NumPy's. NumPy's global
print options are never changed.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["set_printoptions"]

PROFILES: dict[str, dict[str, int]] = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": sys.maxsize, "edgeitems": 3, "linewidth": 80},
}
"""PyTorch's named profiles."""

_options: dict[str, Any] = {}
"""The options set so far (PyTorch's names); empty: NumPy's defaults."""


def set_printoptions(precision: int | None = None, threshold: float | None = None, edgeitems: int | None = None,
                     linewidth: int | None = None, profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print: digits after the point, the element count from which a summary is shown, items per
    edge of a summary, characters per line, a ``profile`` ('default', 'short', 'full') setting the first four, and
    ``sci_mode`` (True: always scientific, False: never, None: NumPy decides)."""
    if profile is not None:
        if profile not in PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {', '.join(PROFILES)}, got {profile!r}")
        _options.update(PROFILES[profile])
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is None:
            continue
        if name == "threshold" and value == float("inf"):
            value = sys.maxsize
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != int(value):
            raise ValueError(f"set_printoptions: {name} must be a non-negative whole number, got {value!r}")
        _options[name] = int(value)
    if sci_mode is not None and not isinstance(sci_mode, bool):
        raise TypeError(f"set_printoptions: sci_mode must be True, False or None, got {sci_mode!r}")
    _options["sci_mode"] = sci_mode


def array2string_options() -> dict[str, Any]:
    """The keyword arguments of ``np.array2string`` that carry the options set by :func:`set_printoptions`."""
    out: dict[str, Any] = {}
    for name in ("precision", "threshold", "edgeitems"):
        if name in _options:
            out[name] = _options[name]
    if "linewidth" in _options:
        out["max_line_width"] = _options["linewidth"]
    sci_mode = _options.get("sci_mode")
    if sci_mode is not None:
        digits = _options.get("precision", 4)
        style = "e" if sci_mode else "f"
        out["formatter"] = {"float_kind": lambda v: f"{v:.{digits}{style}}"}
    return out
