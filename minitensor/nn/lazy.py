"""Lazy modules, torch's names and behaviour: ``nn.UninitializedParameter``, ``nn.UninitializedBuffer``,
``LazyLinear``, ``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``, ``LazyBatchNorm1d/2d/3d`` and
``LazyInstanceNorm1d/2d/3d``.

A lazy module is its regular class built with 0 input features and its parameters (and running-stat buffers) left
uninitialized. A forward pre-hook (registered first) infers the input size on the first call, materializes the
tensors in place (same objects, so an optimizer built earlier keeps them), initializes them as the regular class
does, removes itself and turns the module into ``cls_to_become`` (``LazyLinear`` -> ``Linear``). Loading a state dict
into a lazy module materializes its tensors to the stored shapes first (the class changes on the next forward).

An uninitialized tensor keeps only a dtype and a backend: reading its values raises ValueError, its shape
RuntimeError (PyTorch's messages); ``to``/``float``/``double`` change the dtype/backend it will materialize with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..autodiff import no_grad
from ..creation import empty, tensor
from ..module import Module, Parameter
from ..tensor import Tensor
from ..tensor_data import TensorData
from .common import factory
from .conv import Conv1d, Conv2d, Conv3d
from .conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear
from .norm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .norm_instance import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d

__all__ = [
    "UninitializedParameter", "UninitializedBuffer", "LazyLinear", "LazyConv1d", "LazyConv2d",
    "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d",
    "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
]

_USE_ERROR = ("Attempted to use an uninitialized parameter in {}. This error happens when you are using a `LazyModule` "
              "or explicitly manipulating `torch.nn.parameter.UninitializedParameter` objects. When using LazyModules "
              "Call `forward` with a dummy batch to initialize the parameters before calling torch functions")
_SHAPE_ERROR = ("Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
                "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
                "`forward` to initialize the parameters before accessing their attributes.")


class UninitializedTensorMixin:
    """What uninitialized parameters and buffers share: the hidden empty storage (its dtype and backend are what
    :meth:`materialize` uses), the refusals, and ``materialize``."""

    cls_to_become: type = Tensor
    backend: Any
    _requires_grad: bool

    @property
    def _data(self) -> TensorData:
        raise ValueError(_USE_ERROR.format(f"an op on {type(self).__name__}"))

    @_data.setter
    def _data(self, value: TensorData) -> None:
        self.__dict__["_data"] = value

    @property
    def data(self) -> Tensor:
        raise ValueError(_USE_ERROR.format(".data"))

    @data.setter
    def data(self, other: Tensor) -> None:  # Module.to: take the moved (still uninitialized) tensor's dtype/backend
        self.__dict__["_data"], self.backend = other.__dict__["_data"], other.backend

    @property
    def shape(self) -> tuple[int, ...]:
        raise RuntimeError(_SHAPE_ERROR)

    def size(self, dim: int | None = None) -> Any:
        raise RuntimeError(_SHAPE_ERROR)

    @property
    def dtype(self) -> Any:
        return self.__dict__["_data"].dtype

    def is_floating_point(self) -> bool:
        return bool(self.dtype.kind == "f")

    def detach(self) -> Any:
        """Itself: there are no values or history to detach (``state_dict`` lists the uninitialized tensor)."""
        return self

    def to(self, *args: Any, **kwargs: Any) -> Any:
        """A new uninitialized tensor of the same kind that will materialize with the target's dtype/backend."""
        moved = Tensor(self.__dict__["_data"], self.backend).to(*args, **kwargs)
        return type(self)(self._requires_grad, moved.backend, moved.dtype)  # type: ignore[call-arg]

    def float(self) -> Any:
        return self.to("float32")

    def double(self) -> Any:
        return self.to("float64")

    def materialize(self, shape: Sequence[int], device: Any = None, dtype: Any = None) -> None:
        """Become a regular ``cls_to_become`` (Parameter / Tensor) of ``shape``, uninitialized values, in place."""
        hidden = self.__dict__["_data"]
        made = empty(*tuple(shape), dtype=hidden.dtype if dtype is None else dtype,
                     backend=self.backend if device is None else device)
        self.__class__ = self.cls_to_become
        self._data, self.backend = made._data, made.backend  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (``torch.nn.UninitializedParameter``); ``materialize(shape)`` turns
    it into a :class:`Parameter`."""

    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        hidden = empty(0, **factory(device, dtype, None))
        Tensor.__init__(self, hidden._data, hidden.backend)
        self._requires_grad = requires_grad


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (``torch.nn.UninitializedBuffer``); ``materialize(shape)`` turns it
    into a Tensor."""

    cls_to_become = Tensor

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                 persistent: bool = True) -> None:
        hidden = empty(0, **factory(device, dtype, None))
        Tensor.__init__(self, hidden._data, hidden.backend)
        self._requires_grad = requires_grad
        self.persistent = persistent


def _uninitialized(value: Any) -> bool:
    return isinstance(value, UninitializedTensorMixin)


class LazyModuleMixin(Module):
    """The lazy machinery (``torch.nn.modules.lazy.LazyModuleMixin``): subclasses define ``initialize_parameters(
    *inputs)`` and ``cls_to_become``."""

    cls_to_become: type[Module] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, prepend=True, with_kwargs=True)

    def has_uninitialized_params(self) -> bool:
        """Whether any own parameter or buffer is still uninitialized."""
        return any(_uninitialized(t) for t in (*self._parameters.values(), *self._buffers.values()))

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    @staticmethod
    def _infer_parameters(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        module.initialize_parameters(*args, **kwargs)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {type(module).__name__} has not been fully initialized")
        module._initialize_hook.remove()
        del module.__dict__["_initialize_hook"]
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def load_state_dict(self, state_dict: Any, strict: bool = True) -> Any:
        """Materialize uninitialized tensors (of this and any lazy descendant) to the stored shapes, then load."""
        with no_grad():
            for prefix, module in self.named_modules():
                for name, t in (*module._parameters.items(), *module._buffers.items()):
                    key = f"{prefix}.{name}" if prefix else name
                    if _uninitialized(t) and key in state_dict and not _uninitialized(state_dict[key]):
                        t.materialize(tuple(state_dict[key].shape))
        return super().load_state_dict(state_dict, strict)

    def _lazy_reset(self, features: int) -> bool:
        return not self.has_uninitialized_params() and features != 0


class LazyLinear(LazyModuleMixin, Linear):
    """:class:`Linear` with ``in_features`` inferred from the first input's last dim."""

    cls_to_become = Linear
    weight: Any
    bias: Any

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None, *,
                 backend: Any = None) -> None:
        kw = factory(device, dtype, backend)
        super().__init__(0, 0, False, backend=kw["backend"], dtype=kw["dtype"])
        self.weight = UninitializedParameter(device=kw["backend"], dtype=kw["dtype"])
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=kw["backend"], dtype=kw["dtype"])

    def reset_parameters(self) -> None:
        if self._lazy_reset(self.in_features):
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:  # noqa: A002
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvMixin(LazyModuleMixin):
    """What the lazy (transposed) convolutions share: in_channels from dim 1 (batched) or 0 (unbatched)."""

    nd: int
    transposed = False
    in_channels: int
    out_channels: int
    groups: int
    kernel_size: tuple[int, ...]
    weight: Any
    bias: Any

    def _lazy_params(self, out_channels: int, bias: bool, kw: dict[str, Any]) -> None:
        self.weight = UninitializedParameter(device=kw["backend"], dtype=kw["dtype"])
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=kw["backend"], dtype=kw["dtype"])

    def reset_parameters(self) -> None:
        if self._lazy_reset(self.in_channels):
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:  # noqa: A002
        if not self.has_uninitialized_params():
            return
        name, unbatched = type(self).__name__, self.nd + 1
        if input.dims not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to {name}, but "
                               f"got input of size: {input.shape}")
        self.in_channels = input.shape[1] if input.dims == unbatched + 1 else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        with no_grad():
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


class _LazyConv(_LazyConvMixin):
    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
                 *, backend: Any = None) -> None:
        kw = factory(device, dtype, backend)
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, **kw)
        self._lazy_params(out_channels, bias, kw)


class LazyConv1d(_LazyConv, Conv1d):
    """:class:`Conv1d` with ``in_channels`` inferred from the first input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """:class:`Conv2d` with ``in_channels`` inferred from the first input."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """:class:`Conv3d` with ``in_channels`` inferred from the first input."""

    cls_to_become = Conv3d


class _LazyConvTranspose(_LazyConvMixin):
    transposed = True

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None, *, backend: Any = None) -> None:
        kw = factory(device, dtype, backend)
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         **kw)
        self._lazy_params(out_channels, bias, kw)


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """:class:`ConvTranspose1d` with ``in_channels`` inferred from the first input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """:class:`ConvTranspose2d` with ``in_channels`` inferred from the first input."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """:class:`ConvTranspose3d` with ``in_channels`` inferred from the first input."""

    cls_to_become = ConvTranspose3d


class _LazyNorm(LazyModuleMixin):
    """Lazy batch/instance norm: ``num_features`` from the input's dim 1 (PyTorch's rule, unbatched input too)."""

    num_features: int
    affine: bool
    track_running_stats: bool
    weight: Any
    bias: Any
    running_mean: Any
    running_var: Any

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *, bias: bool = True,
                 backend: Any = None) -> None:
        kw = factory(device, dtype, backend)
        super().__init__(0, eps, momentum, False, False, bias=bias, **kw)
        self.affine, self.track_running_stats = affine, track_running_stats
        new = {"device": kw["backend"], "dtype": kw["dtype"]}
        if affine:
            self.weight = UninitializedParameter(**new)
            if bias:
                self.bias = UninitializedParameter(**new)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(**new)
            self.running_var = UninitializedBuffer(**new)
            self.num_batches_tracked = tensor(0, dtype="int64", backend=kw["backend"])

    def reset_parameters(self) -> None:
        if self._lazy_reset(self.num_features):
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:  # noqa: A002
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with no_grad():
                for t in (self.weight, self.bias, self.running_mean, self.running_var):
                    if _uninitialized(t):
                        t.materialize((self.num_features,))
                self.reset_parameters()


class LazyBatchNorm1d(_LazyNorm, BatchNorm1d):
    """:class:`BatchNorm1d` with ``num_features`` inferred from the first input's dim 1."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNorm, BatchNorm2d):
    """:class:`BatchNorm2d` with ``num_features`` inferred from the first input's dim 1."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNorm, BatchNorm3d):
    """:class:`BatchNorm3d` with ``num_features`` inferred from the first input's dim 1."""

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNorm, InstanceNorm1d):
    """:class:`InstanceNorm1d` with ``num_features`` inferred from the first input's dim 1 (affine and
    track_running_stats default to True here, as PyTorch's lazy form)."""

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNorm, InstanceNorm2d):
    """:class:`InstanceNorm2d` with ``num_features`` inferred from the first input's dim 1."""

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNorm, InstanceNorm3d):
    """:class:`InstanceNorm3d` with ``num_features`` inferred from the first input's dim 1."""

    cls_to_become = InstanceNorm3d
