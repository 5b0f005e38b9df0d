"""Small Tensor conveniences PyTorch users reach for (the ``ExtraMethods`` mixin) and the matching ``mt.`` names:
dtype shortcuts ``byte char short`` (minitensor has no uint8/int8/int16: they raise DTypeError), device and layout
queries (``is_cpu is_cuda get_device() is_signed() is_sparse is_quantized is_meta layout``, ``mt.strided``), the
top-level queries ``isreal is_signed is_inference typename``,
``sum_to_size``, ``new_empty_strided``, ``register_post_accumulate_grad_hook`` and the bit shifts
``bitwise_left_shift``/``bitwise_right_shift`` (methods, in-place forms, ``<< >> <<= >>=`` and ``mt.`` functions).

The shifts compose existing kernels, exactly for every int64 value: ``a << b`` is ``a * 2**b`` wrapped to a's
integer dtype (the bits shifted past the top are lost), computed as (a & (2**(w-1-b) - 1)) * 2**b plus the bit that
lands on the sign bit, so no intermediate leaves the dtype's range; ``a >> b`` is ``a // 2**b`` (floor division: the
arithmetic shift of a signed value), taken of a's high and low halves apart so that no quotient has more significant
bits than a float64 holds (the fast backend's integer floor division rounds its results through float64). The masks
and powers of two come from a small table. As PyTorch, a shift by a negative count or by the width of the dtype
or more gives 0 (left) or the sign fill, 0 or -1 (right); operands promote as PyTorch's, and float or all-bool
operands raise DTypeError.

Post-accumulate-grad hooks are kept per leaf; :func:`minitensor.backward.run_backward` calls
``_run_post_accumulate_grad_hooks`` after it added a gradient into the leaf's ``.grad``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from .autodiff import RemovableHandle, add_hook, new_hook_dict
from .backends import get_backend
from .errors import DTypeError, GradientError, ShapeError
from .tensor_compare import where
from .tensor_data import TensorData, size_arg, strided_extent
from .tensor_inplace import _inplace, _torch_name
from .tensor_math import _operands

if TYPE_CHECKING:
    from .tensor import Tensor


class Layout:
    """A tensor's memory layout (``torch.layout``). minitensor's tensors are all dense and strided: :data:`strided`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"minitensor.{self.name}"


layout = Layout  # PyTorch's name of the type
strided = Layout("strided")
"""``torch.strided``: the layout of every minitensor tensor."""

MISSING_DTYPES = {"byte": ("uint8", "torch.uint8"), "char": ("int8", "torch.int8"), "short": ("int16", "torch.int16")}


def _missing_dtype(self: Tensor, method: str) -> DTypeError:
    name, torch_name = MISSING_DTYPES[method]
    return DTypeError(f"{method}() converts to {name} ({torch_name}), which minitensor does not have (tensor of shape "
                      f"{self.shape}); its dtypes are float32, float64, int32, int64 and bool: use int() or long()")


# --- bit shifts ---


def _shift_operands(input: Any, other: Any, name: str) -> tuple[Tensor, Tensor, np.dtype]:  # noqa: A002
    """Both operands in their promoted integer dtype, and that dtype (DTypeError for float or all-bool operands)."""
    a, b = _operands(input, other)
    dtype = dtypes.result_type(input, other)
    if dtype.kind not in "iu":
        raise DTypeError(f"{name}: not implemented for {dtype} operands (shapes {a.shape} and {b.shape}); "
                         "shifts take integer tensors")
    return a.cast(dtype), b.cast(dtype), dtype


def _bit_table(like: Tensor, dtype: np.dtype, minus_one: bool = False) -> Tensor:
    """[2**j for j < width] in ``dtype``, the bit masks (2**(width-1) wraps to the dtype's minimum, the sign bit),
    or with ``minus_one`` [2**j - 1] (the masks of the bits below bit j)."""
    unsigned = np.dtype(f"u{dtype.itemsize}")
    bits = 8 * dtype.itemsize
    table = np.left_shift(np.ones(bits, unsigned), np.arange(bits, dtype=unsigned))
    return like._lift((table - unsigned.type(minus_one)).view(dtype), dtype)


def _pick(table: Tensor, index: Tensor, low: int, high: int) -> Tensor:
    """table[index clamped to [low, high]] (element-wise, index's shape)."""
    return table[index.clamp(low, high).cast(dtypes.int64)]


def bitwise_left_shift(input: Any, other: Any) -> Tensor:  # noqa: A002 - PyTorch's names
    """input << other, element-wise (broadcast) in the promoted integer dtype; bits shifted past the top are lost, a
    count < 0 or >= the width gives 0. Either operand may be a Python int."""
    a, b, dtype = _shift_operands(input, other, "bitwise_left_shift")
    bits = 8 * dtype.itemsize
    masks, lows = _bit_table(a, dtype), _bit_table(a, dtype, minus_one=True)
    top = bits - 1 - b  # the bit of a that lands on the sign bit
    moved = (a & _pick(lows, top, 0, bits - 1)) * _pick(masks, b, 0, bits - 1)  # the bits below it, < 2**(width-1)
    sign = ((a & _pick(masks, top, 0, bits - 1)) != 0).cast(dtype) * masks[bits - 1]
    return where((b >= 0) & (b < bits), moved + sign, 0)


def bitwise_right_shift(input: Any, other: Any) -> Tensor:  # noqa: A002
    """input >> other, element-wise (broadcast) in the promoted integer dtype: floor(input / 2**other), the sign
    fill (0 or -1) for a count < 0 or >= the width - 1. Either operand may be a Python int."""
    a, b, dtype = _shift_operands(input, other, "bitwise_right_shift")
    bits, half = 8 * dtype.itemsize, 4 * dtype.itemsize
    masks, lows = _bit_table(a, dtype), _bit_table(a, dtype, minus_one=True)
    power = _pick(masks, b, 0, bits - 2)
    # a = high + low, high a multiple of 2**half: each quotient has at most half + 1 significant bits
    quotient = (a & -masks[half]).floor_divide(power) + (a & lows[half]).floor_divide(power)
    fill = where(a < 0, a._lift(-1, dtype), a._lift(0, dtype))
    return where((b >= 0) & (b < bits - 1), quotient, fill)


# --- queries with a top-level form ---


def isreal(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """A bool tensor of input's shape, True everywhere (minitensor's dtypes are real)."""
    return input._lift(np.ones(input.shape, dtype=np.bool_), dtypes.bool_)


def is_signed(input: Tensor) -> bool:  # noqa: A002
    """Whether input's dtype holds negative values (every dtype but bool)."""
    return input.is_signed()  # type: ignore[no-any-return]


def is_inference(input: Tensor) -> bool:  # noqa: A002
    """False: tensors made under ``inference_mode`` are ordinary tensors in minitensor."""
    return input.is_inference()  # type: ignore[no-any-return]


def typename(obj: Any, /) -> str:
    """A tensor's type name in PyTorch's style (``"minitensor.FloatTensor"``, ``"minitensor.cuda.LongTensor"``);
    for anything else its class's module and name (``"minitensor.nn.linear.Linear"``, ``"int"``)."""
    if isinstance(obj, ExtraMethods):
        place = "cuda." if obj.is_cuda else ""
        return f"minitensor.{place}{_torch_name(obj.dtype)}Tensor"  # type: ignore[attr-defined]
    module = getattr(obj, "__module__", None)
    prefix = f"{module}." if module not in (None, "builtins") else ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    return f"{prefix}{name}"


class ExtraMethods:
    """dtype shortcuts, device and layout queries, sum_to_size, new_empty_strided, post-accumulate-grad hooks and bit
    shifts of Tensor."""

    _post_accumulate_grad_hooks: dict[int, Any] | None = None

    # --- dtypes ---

    def byte(self: Any) -> Tensor:
        """``to(uint8)`` in PyTorch: minitensor has no uint8, so DTypeError."""
        raise _missing_dtype(self, "byte")

    def char(self: Any) -> Tensor:
        """``to(int8)`` in PyTorch: minitensor has no int8, so DTypeError."""
        raise _missing_dtype(self, "char")

    def short(self: Any) -> Tensor:
        """``to(int16)`` in PyTorch: minitensor has no int16, so DTypeError."""
        raise _missing_dtype(self, "short")

    def is_signed(self: Any) -> bool:
        """Whether the dtype holds negative values (every dtype but bool)."""
        return bool(self.dtype.kind in "if")

    def isreal(self: Any) -> Tensor:
        """True everywhere (see :func:`isreal`)."""
        return isreal(self)

    # --- device and layout ---

    @property
    def is_cuda(self: Any) -> bool:
        """Whether the tensor is on the cuda backend."""
        return bool(self.backend.name == "cuda")

    @property
    def is_cpu(self: Any) -> bool:
        """Whether the tensor is on a CPU backend (simple, fast)."""
        return bool(self.backend.name != "cuda")

    def get_device(self: Any) -> int:
        """The device index: 0 on cuda (minitensor has one device), -1 on the CPU, as PyTorch."""
        return 0 if self.backend.name == "cuda" else -1

    @property
    def is_sparse(self: Any) -> bool:
        """False: minitensor's tensors are dense."""
        return False

    @property
    def is_quantized(self: Any) -> bool:
        """False: minitensor has no quantized dtypes."""
        return False

    @property
    def is_meta(self: Any) -> bool:
        """False: every minitensor tensor has storage."""
        return False

    @property
    def layout(self: Any) -> Layout:
        """The memory layout: always :data:`strided`."""
        return strided

    # --- shapes and factories ---

    def sum_to_size(self: Any, *size: Any) -> Tensor:
        """This tensor summed down to ``size`` (ints or one sequence), which must expand to this tensor's shape:
        leading dims are summed away and dims of size 1 in ``size`` summed with keepdim (differentiable; integer and
        bool tensors sum to int64 as ``sum``). Itself when ``size`` is its shape."""
        if not size:
            raise TypeError("sum_to_size() missing 1 required positional argument: 'size'")
        shape = size_arg(size)
        lead = self.dims - len(shape)
        if lead < 0 or any(s not in (1, n) for s, n in zip(shape, self.shape[lead:])):
            raise ShapeError(f"sum_to_size: size {shape} is not expandable to size {self.shape}")
        if shape == self.shape:
            return self  # type: ignore[no-any-return]
        dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and self.shape[lead + i] != 1)
        out = self.sum(dims, keepdim=True) if dims else self
        return out.reshape(*shape)  # type: ignore[no-any-return]

    def new_empty_strided(self: Any, size: Sequence[int], stride: Sequence[int], *, dtype: Any = None, layout: Any = None,
                          device: Any = None, pin_memory: bool = False, requires_grad: bool = False,
                          backend: Any = None) -> Tensor:
        """A tensor of ``size`` with exactly the element strides ``stride`` over new storage, contents unspecified,
        of this tensor's dtype and backend unless given (``device=`` is PyTorch's spelling of ``backend=``)."""
        if layout is not None and layout is not strided:
            raise ValueError(f"new_empty_strided(): minitensor has only the strided layout, got {layout!r}")
        shape, strides, extent = strided_extent(size, stride)
        chosen = self.backend if backend is None and device is None else get_backend(backend if backend is not None else device)
        storage = chosen.empty((extent,), self.dtype if dtype is None else dtypes.as_dtype(dtype)).storage
        return type(self)(TensorData(storage, shape, strides), chosen, requires_grad=requires_grad)  # type: ignore[no-any-return]

    # --- autograd ---

    def register_post_accumulate_grad_hook(self: Any, hook: Callable[[Tensor], None]) -> RemovableHandle:
        """Call ``hook(tensor)`` each time backward has added a gradient into this leaf's ``.grad`` (after the
        gradient hooks of ``register_hook``; not for ``autograd.grad``). The hook returns None; the handle's
        ``remove()`` unregisters it."""
        if not self.requires_grad:
            raise GradientError(f"cannot register a hook on a tensor of shape {self.shape} that doesn't require gradient")
        if self.history is not None:
            raise GradientError(f"post accumulate grad hooks cannot be registered on non-leaf tensors (shape {self.shape})")
        if self._post_accumulate_grad_hooks is None:
            self._post_accumulate_grad_hooks = new_hook_dict()
        return add_hook(self._post_accumulate_grad_hooks, hook)

    def _run_post_accumulate_grad_hooks(self: Any) -> None:
        """Call the post-accumulate-grad hooks in registration order (backward.py, after ``accumulate_grad``)."""
        for hook in list(self._post_accumulate_grad_hooks.values()):
            if hook(self) is not None:
                raise GradientError(f"post accumulate grad hooks should return None, {hook!r} returned a value")

    # --- bit shifts ---

    def bitwise_left_shift(self: Any, other: Any) -> Tensor:
        """self << other (see :func:`bitwise_left_shift`)."""
        return bitwise_left_shift(self, other)

    def bitwise_right_shift(self: Any, other: Any) -> Tensor:
        """self >> other (see :func:`bitwise_right_shift`)."""
        return bitwise_right_shift(self, other)

    def bitwise_left_shift_(self: Any, other: Any) -> Tensor:
        """self = self << other, in self's dtype (DTypeError if the promoted result cannot be stored in it)."""
        return _inplace(self, lambda x: bitwise_left_shift(x, other))

    def bitwise_right_shift_(self: Any, other: Any) -> Tensor:
        """self = self >> other, in self's dtype."""
        return _inplace(self, lambda x: bitwise_right_shift(x, other))

    def __lshift__(self: Any, other: Any) -> Tensor:
        return bitwise_left_shift(self, other)

    def __rlshift__(self: Any, other: Any) -> Tensor:
        return bitwise_left_shift(other, self)

    def __rshift__(self: Any, other: Any) -> Tensor:
        return bitwise_right_shift(self, other)

    def __rrshift__(self: Any, other: Any) -> Tensor:
        return bitwise_right_shift(other, self)

    def __ilshift__(self: Any, other: Any) -> Tensor:
        return self.bitwise_left_shift_(other)  # type: ignore[no-any-return]

    def __irshift__(self: Any, other: Any) -> Tensor:
        return self.bitwise_right_shift_(other)  # type: ignore[no-any-return]


__all__ = ["bitwise_left_shift", "bitwise_right_shift", "is_inference", "is_signed", "isreal", "layout", "strided",
           "typename"]
