"""Module and Parameter: trees of trainable tensors, as ``torch.nn.Module`` and ``torch.nn.Parameter``.

Assigning a :class:`Parameter`, a :class:`Module` or a :class:`Buffer` to a module attribute registers it by name;
:meth:`Module.register_buffer` registers state that is saved but not trained. Dotted names
(``"0.weight"``) address anything in the tree, as in PyTorch state dicts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from . import dtypes
from .autodiff import RemovableHandle, no_grad
from .checkpoint import load_state_dict
from .creation import empty
from .scalar import Scalar
from .tensor import Tensor


class Parameter(Tensor):
    """A Tensor that a Module trains: a leaf that requires grad by default (``torch.nn.Parameter``).

    ``Parameter(t)`` shares ``t``'s storage. Everything a Tensor does a Parameter does; results of ops on it are
    plain Tensors.
    """

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter takes a Tensor, got {type(data).__name__}")
        super().__init__(data._data, data.backend, requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class _BufferMeta(type):
    """``isinstance(t, Buffer)`` holds for the tensors :class:`Buffer` makes (marked ``_is_buffer``), as in PyTorch."""

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False) is True


class Buffer(Tensor, metaclass=_BufferMeta):
    """``Buffer(t, persistent=True)``: ``t`` detached (sharing storage, keeping ``requires_grad``) and marked so that
    assigning it to a module attribute registers it as a buffer (``torch.nn.Buffer``); the result is a plain Tensor."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Tensor:  # type: ignore[misc]
        data = empty(0) if data is None else data
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent  # type: ignore[attr-defined]
        t._is_buffer = True  # type: ignore[attr-defined]
        return t


_Trainable = (Parameter, Scalar)


class Module:
    """A node in a tree of modules (``torch.nn.Module``): subclasses call ``super().__init__()`` and define ``forward``."""

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name: str, value: Any) -> None:
        if "_modules" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__}.__init__ must call super().__init__() before assigning {name!r}")
        if isinstance(value, Parameter):
            self._forget(name, keep=self._parameters)
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._forget(name, keep=self._modules)
            self._modules[name] = value
        elif name in self._parameters:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} to parameter {name!r} (a Parameter or None is required)")
            self._parameters[name] = None
        elif isinstance(value, Buffer) and name not in self._modules:
            self.register_buffer(name, value, persistent=getattr(value, "persistent", True))
        elif name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign {type(value).__name__} to buffer {name!r} (a Tensor or None is required)")
            self._buffers[name] = value
        elif name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} to child module {name!r} (a Module or None is required)")
            self._modules[name] = None
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: dict | None = None) -> None:
        """Drop ``name`` from every registry but ``keep`` (where a new value replaces the old one in place, so
        ``seq[1] = m`` keeps the child's position, as PyTorch does) and from the instance dict."""
        for registry in (self._modules, self._parameters, self._buffers):
            if registry is not keep:
                registry.pop(name, None)
        self._non_persistent.discard(name)
        self.__dict__.pop(name, None)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails.
        for registry in ("_parameters", "_modules", "_buffers"):
            table = self.__dict__.get(registry)
            if table is not None and name in table:
                return table[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        for registry in (self._modules, self._parameters, self._buffers):
            if name in registry:
                del registry[name]
                self._non_persistent.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._modules) | set(self._buffers))

    # --- registration ---

    def register_parameter(self, name: str, param: Parameter | Scalar | None) -> None:
        """Register ``param`` under ``name`` (None reserves the name). A :class:`Scalar` may be registered too
        (minitensor's scalar autodiff); it is marked as requiring grad."""
        if param is not None and not isinstance(param, _Trainable):
            raise TypeError(f"cannot register {type(param).__name__} as parameter {name!r} (a Parameter or None is required)")
        if isinstance(param, Scalar):
            param.requires_grad = True
        self._forget(name, keep=self._parameters)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register non-trainable state (e.g. BatchNorm running statistics); ``state_dict`` includes it when persistent."""
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot register {type(tensor).__name__} as buffer {name!r} (a Tensor or None is required)")
        self._forget(name, keep=self._buffers)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent.add(name)

    def register_module(self, name: str, module: Module | None) -> None:
        """Register ``module`` as the child ``name`` (``add_module``)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module")
        self._forget(name, keep=self._modules)
        self._modules[name] = module

    add_module = register_module

    def get_submodule(self, target: str) -> Module:
        """The descendant at dotted path ``target`` (``""`` is self)."""
        module = self
        for part in target.split(".") if target else []:
            child = module._modules.get(part)
            if child is None:
                raise AttributeError(f"{type(module).__name__} has no submodule {part!r} (looking up {target!r})")
            module = child
        return module

    def get_parameter(self, target: str) -> Any:
        """The parameter at dotted path ``target``."""
        owner, _, name = target.rpartition(".")
        module = self.get_submodule(owner)
        if name not in module._parameters:
            raise AttributeError(f"{type(module).__name__} has no parameter {name!r} (looking up {target!r})")
        return module._parameters[name]

    # --- traversal ---

    def named_modules(self, memo: set[int] | None = None, prefix: str = "", remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """(dotted name, module) for this module and every descendant, parents first, each module once."""
        memo = set() if memo is None else memo
        if remove_duplicate and id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """This module and every descendant, parents first."""
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, child) for each direct child, each module once."""
        seen: set[int] = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self) -> Iterator[Module]:
        for _, child in self.named_children():
            yield child

    def _named_members(self, registry: str, prefix: str, recurse: bool) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        modules = self.named_modules(prefix=prefix) if recurse else iter([(prefix, self)])
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or id(value) in seen:
                    continue
                seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Any]]:
        """(dotted name, Parameter): this module's own first, then each child's, in registration order; shared
        parameters once."""
        return self._named_members("_parameters", prefix, recurse)

    def parameters(self, recurse: bool = True) -> Iterator[Any]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members("_buffers", prefix, recurse)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every child (recursively), then on self; returns self."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # --- moving and saving ---

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move every parameter and buffer to a backend and/or cast floats to a dtype, in place; returns self.

        Takes what ``Tensor.to`` takes (``"fast"``, ``mt.float64``, both). Parameters stay the same objects (an
        optimizer built earlier still sees them); gradients move with them. Integer buffers keep their dtype.
        """
        return self._convert(lambda t: t.to(*args, **kwargs) if t.is_floating_point() else t.to(*_backends_only(args, kwargs)))

    def cpu(self) -> Module:
        """Move every parameter and buffer to the CPU backend, in place (``to("cpu")``); returns self."""
        return self.to("cpu")

    def cuda(self, device: Any = None) -> Module:
        """``to("cuda")``; ``device`` (an index or ``"cuda:0"``) is accepted: minitensor has one cuda backend."""
        return self.to("cuda")

    def float(self) -> Module:
        """Cast floating-point parameters and buffers to float32."""
        return self._convert(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        """Cast floating-point parameters and buffers to float64."""
        return self._convert(lambda t: t.double() if t.is_floating_point() else t)

    def _convert(self, fn: Callable[[Tensor], Tensor]) -> Module:
        with no_grad():
            for module in self.modules():
                for param in module._parameters.values():
                    if isinstance(param, Tensor):
                        moved = fn(param)
                        if moved is not param:
                            param.data = moved
                            if param.grad is not None:
                                param.grad = fn(param.grad)
                for name, buffer in module._buffers.items():
                    if buffer is not None:
                        module._buffers[name] = fn(buffer)
        return self

    def state_dict(self, prefix: str = "", keep_vars: bool = False) -> dict[str, Any]:
        """Parameters and persistent buffers by dotted name, detached (sharing storage) unless ``keep_vars``."""
        out: dict[str, Any] = {}
        for module_prefix, module in self.named_modules(prefix=prefix.rstrip("."), remove_duplicate=False):
            for registry in (module._parameters, module._buffers):
                for name, value in registry.items():
                    if value is None or (registry is module._buffers and name in module._non_persistent):
                        continue
                    key = f"{module_prefix}.{name}" if module_prefix else name
                    out[key] = value if keep_vars or not isinstance(value, Tensor) else value.detach()
        return out

    def load_state_dict(self, state_dict: Any, strict: bool = True) -> Any:
        """Copy ``state_dict`` into this module's parameters and buffers in place; mismatches raise a CheckpointError
        listing them all. Returns ``(missing_keys, unexpected_keys)``."""
        return load_state_dict(self, state_dict, strict=strict)

    # --- modes and gradients ---

    def train(self, mode: bool = True) -> Module:
        """Set training mode (dropout active, batch statistics used) on self and every descendant."""
        for module in self.modules():
            object.__setattr__(module, "training", bool(mode))
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter (e.g. to freeze a sub-model)."""
        for param in self.parameters():
            if isinstance(param, Tensor):
                param.requires_grad_(requires_grad)
            else:
                param.requires_grad = requires_grad
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop every parameter's gradient (or zero it in place with ``set_to_none=False``)."""
        for param in self.parameters():
            if param.grad is None:
                continue
            if set_to_none or not isinstance(param.grad, Tensor):
                param.grad = None
            else:
                with no_grad():
                    param.grad.zero_()

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook(module, args)`` before each ``forward`` (``hook(module, args, kwargs)`` with ``with_kwargs``);
        a non-None result replaces the arguments (a non-tuple becomes ``(result,)``; with kwargs an ``(args,
        kwargs)`` pair). ``prepend`` runs it before the hooks already registered. ``handle.remove()`` unregisters it."""
        hooks = self.__dict__.setdefault("_forward_pre_hooks", {})
        handle = RemovableHandle(hooks, self.__dict__.setdefault("_forward_pre_hooks_with_kwargs", set()))
        hooks[handle.id] = hook
        if with_kwargs:
            handle.extra.add(handle.id)
        if prepend:
            rest = {key: value for key, value in hooks.items() if key != handle.id}
            hooks.clear()
            hooks.update({handle.id: hook, **rest})
        return handle

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        hooks = self.__dict__.get("_forward_pre_hooks")
        if hooks:
            with_kwargs = self.__dict__["_forward_pre_hooks_with_kwargs"]
            for key, hook in list(hooks.items()):
                if key in with_kwargs:
                    result = hook(self, args, kwargs)
                    if result is not None:
                        if not (isinstance(result, tuple) and len(result) == 2):
                            raise RuntimeError(f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), got {result!r}")
                        args, kwargs = result
                else:
                    result = hook(self, args)
                    if result is not None:
                        args = result if isinstance(result, tuple) else (result,)
        return self.forward(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    # --- display ---

    def extra_repr(self) -> str:
        """One line of settings shown after the class name (override in layers)."""
        return ""

    def __repr__(self) -> str:
        head = f"{type(self).__name__}({self.extra_repr()}"
        children = list(self.named_children())
        if not children:
            return head + ")"
        lines = [head]
        for name, child in children:
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        return "\n".join(lines) + "\n)"


def _backends_only(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The backend targets among ``Module.to``'s arguments (integer buffers move but keep their dtype)."""
    out = [a.backend if isinstance(a, Tensor) else a for a in (*args, kwargs.get("backend"), kwargs.get("device"))]
    return tuple(a for a in out if a is not None and not _is_dtype(a))


def _is_dtype(value: Any) -> bool:
    try:
        dtypes.as_dtype(value)
    except Exception:
        return False
    return True
