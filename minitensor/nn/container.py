"""Containers: ``nn.Sequential``, ``nn.ModuleList``, ``nn.ModuleDict`` (children named as in PyTorch)."""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..module import Module

__all__ = ["Sequential", "ModuleList", "ModuleDict"]


class ModuleList(Module):
    """A list of modules registered as children ``"0"``, ``"1"``, ...; indexable, sliceable, iterable."""

    def __init__(self, modules: Iterable[Module] | None = None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _index(self, index: Any) -> int:
        i = operator.index(index)
        n = len(self._modules)
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of range for {type(self).__name__} of length {n}")
        return i + n if i < 0 else i

    def __getitem__(self, index: int | slice) -> Any:
        children = list(self._modules.values())
        if isinstance(index, slice):
            return type(self)(children[index])
        return children[self._index(index)]

    def __setitem__(self, index: int, module: Module) -> None:
        setattr(self, str(self._index(index)), module)

    def __delitem__(self, index: int | slice) -> None:
        children = list(self._modules.values())
        if isinstance(index, slice):
            del children[index]
        else:
            del children[self._index(index)]
        self._modules.clear()
        for i, child in enumerate(children):
            self._modules[str(i)] = child

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Any:
        """Add ``module`` at the end; returns self."""
        setattr(self, str(len(self._modules)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Any:
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        children = list(self._modules.values())
        children.insert(index, module)
        self._modules.clear()
        for i, child in enumerate(children):
            setattr(self, str(i), child)


class Sequential(ModuleList):
    """Applies its modules in order: ``Sequential(a, b)(x) == b(a(x))``; also takes one OrderedDict of named modules."""

    def __init__(self, *modules: Any):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], Mapping):
            for name, module in modules[0].items():
                setattr(self, name, module)
        else:
            self.extend(modules)

    def __getitem__(self, index: int | slice) -> Any:
        children = list(self._modules.items())
        if isinstance(index, slice):
            out = Sequential()
            for name, module in children[index]:
                setattr(out, name, module)
            return out
        return children[self._index(index)][1]

    def forward(self, x: Any) -> Any:
        for module in self._modules.values():
            x = module(x)
        return x


class ModuleDict(Module):
    """A dict of modules registered as children under their keys."""

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Any:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        setattr(self, key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        return self._modules.items()

    def values(self) -> Iterable[Any]:
        return self._modules.values()

    def pop(self, key: str) -> Any:
        return self._modules.pop(key)

    def clear(self) -> None:
        self._modules.clear()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for key, module in pairs:
            self[key] = module
