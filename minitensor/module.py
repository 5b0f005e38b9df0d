"""Module and Parameter: trees of trainable values, in the PyTorch/Minitorch style."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


class Parameter:
    """A trainable value (Scalar or Tensor) held by a Module. ``update`` swaps in a new value."""

    def __init__(self, value: Any, name: str | None = None):
        self.name = name
        self.value = value
        self._mark()

    def _mark(self) -> None:
        if hasattr(self.value, "requires_grad_"):
            self.value.requires_grad_(True)
        elif hasattr(self.value, "requires_grad"):
            self.value.requires_grad = True

    def update(self, value: Any) -> None:
        """Replace the held value (it becomes a trainable leaf)."""
        self.value = value
        self._mark()

    @property
    def grad(self) -> Any:
        return getattr(self.value, "grad", None)

    def __repr__(self) -> str:
        return f"Parameter({self.value!r})"


class Module:
    """A node in a tree of modules. Assigning a Module or Parameter attribute registers it by name."""

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name: str, value: Any) -> None:
        if "_modules" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__}.__init__ must call super().__init__() before assigning {name!r}")
        for registry in (self._modules, self._parameters, self._buffers):
            registry.pop(name, None)
        if isinstance(value, Parameter):
            if value.name is None:
                value.name = name
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        else:
            object.__setattr__(self, name, value)

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
                return
        object.__delattr__(self, name)

    def add_parameter(self, name: str, value: Any) -> Parameter:
        """Register ``value`` as a Parameter called ``name`` and return it."""
        param = Parameter(value, name)
        self.__setattr__(name, param)
        return param

    def register_buffer(self, name: str, value: Any) -> None:
        """Register non-trainable state (e.g. BatchNorm running statistics) that checkpoints and ``to`` include."""
        self._buffers.pop(name, None)
        self.__dict__.pop(name, None)
        self._buffers[name] = value

    def set_buffer(self, name: str, value: Any) -> None:
        """Replace the value of the existing buffer ``name``."""
        if name not in self._buffers:
            raise KeyError(f"{type(self).__name__} has no buffer {name!r}")
        self._buffers[name] = value

    # --- traversal ---

    def children(self) -> list[Module]:
        return list(self._modules.values())

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """(dotted name, module) for this module and every descendant, parents first."""
        yield prefix, self
        for name, child in self._modules.items():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def modules(self) -> list[Module]:
        """All descendant modules (not including self), in definition order."""
        return [m for _, m in self.named_modules()][1:]

    def named_parameters(self) -> list[tuple[str, Parameter]]:
        """(dotted name, Parameter) pairs: sub-modules' first, in definition order, then this module's own."""
        out: list[tuple[str, Parameter]] = []
        for name, child in self._modules.items():
            out.extend((f"{name}.{n}", p) for n, p in child.named_parameters())
        out.extend(self._parameters.items())
        return out

    def parameters(self) -> list[Parameter]:
        return [p for _, p in self.named_parameters()]

    def named_buffers(self) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        for name, child in self._modules.items():
            out.extend((f"{name}.{n}", b) for n, b in child.named_buffers())
        out.extend(self._buffers.items())
        return out

    # --- moving and saving ---

    def to(self, target: Any) -> Module:
        """Move every parameter and buffer to a backend (name or Backend) or cast to a dtype; returns self.

        Parameters stay the same Parameter objects (optimizers built earlier still see them) and become
        fresh leaves; a gradient is dropped when its value actually moves.
        """
        from .autodiff import no_grad

        with no_grad():
            for _, m in self.named_modules():
                for param in m._parameters.values():
                    if hasattr(param.value, "to"):
                        moved = param.value.to(target)
                        if moved is not param.value:
                            param.update(moved.detach())
                for name, buffer in list(m._buffers.items()):
                    if hasattr(buffer, "to"):
                        m._buffers[name] = buffer.to(target).detach()
        return self

    def state_dict(self) -> dict[str, Any]:
        """Parameters and buffers by dotted name (see :mod:`minitensor.checkpoint`)."""
        from .checkpoint import state_dict

        return state_dict(self)

    def load_state_dict(self, state: Any, strict: bool = True) -> Any:
        """Copy ``state`` into this module's parameters and buffers; mismatches raise a CheckpointError listing them all."""
        from .checkpoint import load_state_dict

        return load_state_dict(self, state, strict=strict)

    # --- modes and gradients ---

    def train(self, mode: bool = True) -> Module:
        for _, m in self.named_modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def zero_grad(self) -> None:
        for p in self.parameters():
            if hasattr(p.value, "grad"):
                p.value.grad = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    # --- display ---

    def extra_repr(self) -> str:
        """One line of settings shown after the class name (override in layers)."""
        return ""

    def __repr__(self) -> str:
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not self._modules:
            return head + ")"
        lines = [head]
        for name, child in self._modules.items():
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        return "\n".join(lines) + "\n)"
