"""``assert_close`` (and the deprecated ``assert_allclose``), as ``torch.testing``'s.

Inputs are matched up first: sequences (not strings) item by item, mappings key by key, and every other pair of
values by the first rule that takes it: None, bools, numbers (Python's and NumPy's scalars), then tensor-likes
(tensors, and two values of directly related types that ``as_tensor`` accepts, e.g. NumPy arrays). Each pair is then
compared: equal attributes (shape; layout, stride, device and dtype as the ``check_*`` flags say), then values with
``|actual - expected| <= atol + rtol * |expected|`` (inf only equal to itself, NaN equal to NaN under ``equal_nan``).
The first failure raises, with PyTorch's message: the mismatched-element count and the greatest absolute and
relative differences with their indices.
"""

from __future__ import annotations

import cmath
import collections.abc
import contextlib
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..creation import as_tensor, tensor
from ..dtypes import float32, float64, get_default_dtype
from ..size import Size
from ..tensor import Tensor
from ..type_info import promote_types

__all__ = ["assert_allclose", "assert_close"]

Msg = str | Callable[[str], str] | None
Path = tuple[Any, ...]

DTYPE_TOLERANCES = {float32: (1.3e-6, 1e-5), float64: (1e-7, 1e-7)}
"""(rtol, atol) per dtype when neither is given; every other dtype compares exactly."""
_NUMBER_DTYPES = {int: np.dtype(np.int64), float: float64, complex: float64}


class Mismatch(Exception):
    """A failed check: the exception type to raise, its message and the path of the item in nested inputs."""

    def __init__(self, kind: type[Exception], message: str, path: Path = ()) -> None:
        super().__init__(message)
        self.kind, self.message, self.path = kind, message, path

    def to_error(self, msg: Msg = None) -> Exception:
        """The user-facing error: ``msg`` replaces the message (a str) or rewrites it (a callable)."""
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.message
        if self.path:
            text += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.path)}"
        return self.kind(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    """This rule does not take these inputs; try the next."""


def tolerances(dtypes: list[Any], rtol: float | None, atol: float | None, path: Path) -> tuple[float, float]:
    """The given (rtol, atol), or the loosest defaults of ``dtypes``; ValueError if only one is given."""
    if (rtol is None) != (atol is None):
        raise Mismatch(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                                   f"{'rtol' if rtol is None else 'atol'}.", path)
    if rtol is not None and atol is not None:
        return rtol, atol
    defaults = [DTYPE_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes]
    return max(r for r, _ in defaults), max(a for _, a in defaults)


# --- mismatch messages ---

def mismatch_message(identifier: str, extra: str, abs_diff: Any, rel_diff: Any, rtol: float, atol: float,
                     abs_idx: tuple[int, ...] | None = None, rel_idx: tuple[int, ...] | None = None) -> str:
    """PyTorch's text: "<identifier> are not close!", ``extra``, then the absolute and relative differences."""
    equality = rtol == 0 and atol == 0

    def line(kind: str, diff: Any, idx: tuple[int, ...] | None, tol: float) -> str:
        text = f"{kind.title()} difference: {diff}" if idx is None else f"Greatest {kind} difference: {diff} at index {idx}"
        return text + ("" if equality else f" (up to {tol} allowed)") + "\n"

    text = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    return (text + line("absolute", abs_diff, abs_idx, atol) + line("relative", rel_diff, rel_idx, rtol)).strip()


def scalar_message(actual: Any, expected: Any, rtol: float, atol: float) -> str:
    """The message for two numbers (or one-element tensors) that differ."""
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return mismatch_message("Scalars", f"Expected {expected} but got {actual}.", abs_diff, rel_diff, rtol, atol)


def _greatest(diff: np.ndarray, shape: tuple[int, ...]) -> tuple[Any, tuple[int, ...]]:
    """The largest entry of flat ``diff`` (NaN wins) and its index in ``shape``."""
    flat = int(np.argmax(diff))
    return diff[flat].item(), tuple(int(i) for i in np.unravel_index(flat, shape))


def tensor_message(actual: np.ndarray, expected: np.ndarray, matches: np.ndarray, rtol: float, atol: float) -> str:
    """The message for two arrays of one shape and dtype that differ where ``matches`` is False."""
    total, wrong = matches.size, int(matches.size - matches.sum())
    extra = f"Mismatched elements: {wrong} / {total} ({wrong / total:.1%})"
    a, b = actual.reshape(-1), expected.reshape(-1)
    if a.dtype.kind in "biu":
        a, b = a.astype(np.int64), b.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a - b)
        abs_diff[matches.reshape(-1)] = 0
        if abs_diff.dtype.kind == "f":
            rel_diff = abs_diff / np.abs(b)
        else:  # integers divide in the default float dtype, as PyTorch's true division
            floating = get_default_dtype()
            rel_diff = abs_diff.astype(floating) / np.abs(b).astype(floating)
    rel_diff[matches.reshape(-1)] = 0
    (abs_max, abs_idx), (rel_max, rel_idx) = _greatest(abs_diff, matches.shape), _greatest(rel_diff, matches.shape)
    return mismatch_message("Tensor-likes", extra, abs_max, rel_max, rtol, atol, abs_idx, rel_idx)


def isclose(actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> np.ndarray:
    """``|actual - expected| <= atol + rtol * |expected|`` element-wise in the arrays' dtype, or equal."""
    close = actual == expected
    if actual.dtype.kind == "f" and equal_nan:
        close |= np.isnan(actual) & np.isnan(expected)
    if rtol == 0 and atol == 0:
        return close
    if actual.dtype.kind == "b":
        actual, expected = actual.astype(np.int64), expected.astype(np.int64)
    with np.errstate(all="ignore"):
        error = np.abs(actual - expected)
        return close | (np.isfinite(error) & (error <= atol + np.abs(rtol * expected)))


# --- the rules that pair up values ---

def _none_pair(actual: Any, expected: Any, path: Path, options: dict[str, Any]) -> Callable[[], None]:
    if actual is not None and expected is not None:
        raise _Unsupported

    def compare() -> None:
        if not (actual is None and expected is None):
            raise Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}", path)

    return compare


def _bool_pair(actual: Any, expected: Any, path: Path, options: dict[str, Any]) -> Callable[[], None]:
    if not all(isinstance(v, (bool, np.bool_)) for v in (actual, expected)):
        raise _Unsupported
    a, b = bool(actual), bool(expected)

    def compare() -> None:
        if a is not b:
            raise Mismatch(AssertionError, f"Booleans mismatch: {a} is not {b}", path)

    return compare


def _number_pair(actual: Any, expected: Any, path: Path, options: dict[str, Any]) -> Callable[[], None]:
    if not all(isinstance(v, (int, float, complex, np.number)) for v in (actual, expected)):
        raise _Unsupported
    a, b = (v.item() if isinstance(v, np.number) else v for v in (actual, expected))
    if isinstance(a, bool) or isinstance(b, bool):  # a RuntimeError, as PyTorch's (an unexpected pairing there)
        at = f" at item {''.join(str([item]) for item in path)}" if path else ""
        raise RuntimeError(f"cannot compare a bool with a number ({a!r} and {b!r}{at}); compare bools with bools")
    rtol, atol = tolerances([_NUMBER_DTYPES[type(a)], _NUMBER_DTYPES[type(b)]], options["rtol"], options["atol"], path)

    def compare() -> None:
        if options["check_dtype"] and type(a) is not type(b):
            raise Mismatch(AssertionError, f"The (d)types do not match: {type(a)} != {type(b)}.", path)
        if a == b or (options["equal_nan"] and cmath.isnan(a) and cmath.isnan(b)):
            return
        diff = abs(a - b)
        if cmath.isfinite(diff) and diff <= atol + rtol * abs(b):
            return
        raise Mismatch(AssertionError, scalar_message(a, b, rtol, atol), path)

    return compare


def _as_tensor(value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value
    try:
        return as_tensor(value)
    except Exception:  # noqa: BLE001 - anything as_tensor rejects is simply not a tensor-like
        raise _Unsupported from None


def _tensor_pair(actual: Any, expected: Any, path: Path, options: dict[str, Any]) -> Callable[[], None]:
    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        raise _Unsupported
    if not options["allow_subclasses"] and type(actual) is not type(expected):
        raise _Unsupported
    a, b = _as_tensor(actual), _as_tensor(expected)
    rtol, atol = tolerances([a.dtype, b.dtype], options["rtol"], options["atol"], path)

    def compare() -> None:
        _compare_attributes(a, b, path, options)
        x, y = _equalize(a, b)
        _compare_values(x.to_numpy(), y.to_numpy(), rtol, atol, options["equal_nan"], path)

    return compare


def _compare_attributes(a: Tensor, b: Tensor, path: Path, options: dict[str, Any]) -> None:
    """Shape always; layout, stride, device and dtype as the flags say (AssertionError naming the attribute)."""

    def differ(name: str, x: Any, y: Any) -> Mismatch:
        return Mismatch(AssertionError, f"The values for attribute '{name}' do not match: {x} != {y}.", path)

    if a.shape != b.shape:
        raise differ("shape", Size(a.shape), Size(b.shape))
    if a.layout != b.layout:
        if options["check_layout"]:
            raise differ("layout", a.layout, b.layout)
    elif options["check_stride"] and a.stride() != b.stride():
        raise differ("stride()", a.stride(), b.stride())
    if options["check_device"] and a.device != b.device:
        raise differ("device", a.device, b.device)
    if options["check_dtype"] and a.dtype != b.dtype:
        raise differ("dtype", a.dtype, b.dtype)


def _equalize(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """Both on the CPU if their devices differ, both in the promoted dtype if their dtypes differ."""
    if a.device != b.device:
        a, b = a.cpu(), b.cpu()
    if a.dtype != b.dtype:
        common = promote_types(a.dtype, b.dtype)
        a, b = a.to(common), b.to(common)
    return a, b


def _compare_values(a: np.ndarray, b: np.ndarray, rtol: float, atol: float, equal_nan: bool, path: Path) -> None:
    matches = isclose(a, b, rtol, atol, equal_nan)
    if matches.all():
        return
    if a.ndim == 0:
        raise Mismatch(AssertionError, scalar_message(a.item(), b.item(), rtol, atol), path)
    raise Mismatch(AssertionError, tensor_message(a, b, matches, rtol, atol), path)


_RULES = (_none_pair, _bool_pair, _number_pair, _tensor_pair)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, collections.abc.Sequence) and not isinstance(value, str)


def pair_up(actual: Any, expected: Any, path: Path, options: dict[str, Any]) -> list[Callable[[], None]]:
    """One comparison per leaf pair of the (nested) inputs; Mismatch where their structures differ."""
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise Mismatch(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                           path)
        return [c for i in range(len(actual)) for c in pair_up(actual[i], expected[i], (*path, i), options)]
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        return _pair_mappings(actual, expected, path, options)
    for rule in _RULES:
        try:
            return [rule(actual, expected, path, options)]
        except _Unsupported:
            continue
    raise Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                              f"{type(expected)}.", path)


def _pair_mappings(actual: Any, expected: Any, path: Path, options: dict[str, Any]) -> list[Callable[[], None]]:
    keys_a, keys_b = set(actual.keys()), set(expected.keys())
    if keys_a != keys_b:
        raise Mismatch(AssertionError, f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                                       f"{sorted(keys_b - keys_a)}\nAdditional keys in the actual mapping: "
                                       f"{sorted(keys_a - keys_b)}", path)
    keys: Any = keys_a
    with contextlib.suppress(Exception):  # a deterministic order where the keys sort
        keys = sorted(keys)
    return [c for key in keys for c in pair_up(actual[key], expected[key], (*path, key), options)]


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: Msg = None) -> None:
    """Raise AssertionError unless ``actual`` and ``expected`` (tensors, numbers, NumPy arrays, or sequences and
    mappings of them) are close: ``|actual - expected| <= atol + rtol * |expected|`` with per-dtype defaults
    (float32: rtol 1.3e-6, atol 1e-5; float64: 1e-7, 1e-7; others exact) and equal attributes."""
    __tracebackhide__ = True
    options = {"allow_subclasses": allow_subclasses, "rtol": rtol, "atol": atol, "equal_nan": equal_nan,
               "check_device": check_device, "check_dtype": check_dtype, "check_layout": check_layout,
               "check_stride": check_stride}
    try:
        comparisons = pair_up(actual, expected, (), options)
    except Mismatch as mismatch:
        raise mismatch.to_error() from None
    for compare in comparisons:
        try:
            compare()
        except Mismatch as mismatch:
            raise mismatch.to_error(msg) from None


_ALLCLOSE_TOLERANCES = {float32: (1e-4, 1e-5), float64: (1e-5, 1e-8)}


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated (FutureWarning): :func:`assert_close` with ``check_dtype=False``, ``equal_nan=True`` and looser
    defaults (float32: rtol 1e-4, atol 1e-5; float64: 1e-5, 1e-8)."""
    warnings.warn("`minitensor.testing.assert_allclose()` is deprecated (as torch's is since 1.12) and will be "
                  "removed; use `minitensor.testing.assert_close()` instead.", FutureWarning, stacklevel=2)
    actual = actual if isinstance(actual, Tensor) else tensor(actual)
    expected = expected if isinstance(expected, Tensor) else tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        defaults = [_ALLCLOSE_TOLERANCES.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(r for r, _ in defaults), max(a for _, a in defaults)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)
