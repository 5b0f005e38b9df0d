"""Containers: ``nn.Sequential``, ``nn.ModuleList``, ``nn.ModuleDict`` (children named as in PyTorch) and
``nn.ParameterList``, ``nn.ParameterDict`` (parameters registered as ``"0"``, ``"1"``, ... resp. under their keys, so
state dicts match PyTorch's)."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..module import Module, Parameter
from ..tensor import Tensor

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


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


def _as_parameter(value: Any) -> Any:
    """A Tensor becomes a Parameter (sharing its storage, requiring grad); anything else is kept as it is."""
    return Parameter(value) if isinstance(value, Tensor) and not isinstance(value, Parameter) else value


def _entry_repr(key: Any, value: Any) -> str:
    """PyTorch's line for one entry: ``  (0): Parameter containing: [float32 of size 2x3]`` (minitensor's dtype
    name; the backend is named for cuda, as torch names the device)."""
    if isinstance(value, Tensor):
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        where = f" ({value.backend.name})" if value.backend.name == "cuda" else ""
        return f"  ({key}): {kind} containing: [{value.dtype} of size {'x'.join(map(str, value.shape))}{where}]"
    return f"  ({key}): Object of type: {type(value).__name__}"


class _ParameterContainer(Module):
    """PyTorch's repr for a multi-line extra_repr (one line: inline; more: one per line, indented)."""

    def __repr__(self) -> str:
        lines = self.extra_repr().split("\n") if self.extra_repr() else []
        if len(lines) <= 1:
            return f"{type(self).__name__}({''.join(lines)})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"

    def _store(self, name: str, value: Any) -> None:
        """Register ``value`` as attribute ``name``: a Parameter as a parameter (KeyError for names that PyTorch's
        ``register_parameter`` refuses), anything else as a plain attribute."""
        if isinstance(value, Parameter):
            if "." in name or name == "":
                raise KeyError(f"{type(self).__name__}: parameter name {name!r} must be non-empty and contain no '.'")
            if name not in self._parameters and (hasattr(type(self), name) or name in self.__dict__
                                                 or name in self._buffers or name in self._modules):
                raise KeyError(f"{type(self).__name__}: attribute {name!r} already exists")
        setattr(self, name, value)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{type(self).__name__} should not be called.")


class ParameterList(_ParameterContainer):
    """A list of parameters registered as ``"0"``, ``"1"``, ...; Tensors added become Parameters, other objects are
    kept as plain attributes. Indexable (a slice gives a new ParameterList), iterable, ``append``/``extend``/``+=``."""

    def __init__(self, values: Iterable[Any] | None = None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def _key(self, index: Any) -> str:
        i = operator.index(index)
        if not -self._size <= i < self._size:
            raise IndexError(f"index {i} is out of range for ParameterList of length {self._size}")
        return str(i + self._size if i < 0 else i)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return ParameterList(self[i] for i in range(*index.indices(self._size)))
        return getattr(self, self._key(index))

    def __setitem__(self, index: int, value: Any) -> None:
        self._store(self._key(index), _as_parameter(value))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(self._size))

    def __iadd__(self, values: Iterable[Any]) -> ParameterList:
        return self.extend(values)

    def __dir__(self) -> list[str]:
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` at the end (a Tensor becomes a Parameter); returns self."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append each of ``values`` (an iterable, not a Tensor); returns self."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but got {type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_entry_repr(i, value) for i, value in enumerate(self))


class ParameterDict(_ParameterContainer):
    """An ordered dict of parameters registered under their (string) keys; Tensors become Parameters. Built or
    ``update``d from a mapping (a plain dict in sorted key order, an OrderedDict/ParameterDict in its order) or an
    iterable of (key, value) pairs."""

    def __init__(self, parameters: Any = None):
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _check_key(key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError(f"Index given to ParameterDict cannot be used as a key as it is not a string "
                            f"(type is '{type(key).__name__}')")
        return key

    def __getitem__(self, key: str) -> Any:
        if self._check_key(key) not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        self._store(self._check_key(key), _as_parameter(value))
        self._keys[key] = None

    def __delitem__(self, key: str) -> None:
        if self._check_key(key) not in self._keys:
            raise KeyError(key)
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters in the same order."""
        return ParameterDict(OrderedDict(self.items()))

    def setdefault(self, key: str, default: Any = None) -> Any:
        """``self[key]``, after inserting ``default`` under it if the key is missing."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def pop(self, key: str) -> Any:
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last inserted (key, value) pair."""
        if not self._keys:
            raise KeyError("popitem(): ParameterDict is empty")
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        """A new ParameterDict with ``default`` under each of ``keys``."""
        return ParameterDict((key, default) for key in keys)

    def keys(self) -> Any:
        return self._keys.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        return ((key, self[key]) for key in self._keys)

    def values(self) -> Iterable[Any]:
        return (self[key] for key in self._keys)

    def update(self, parameters: Any) -> None:
        """Add or overwrite entries from a mapping (plain dicts in sorted key order) or (key, value) pairs."""
        if not isinstance(parameters, Iterable):
            raise TypeError(f"ParameterDict.update should be called with an iterable of key/value pairs, but got "
                            f"{type(parameters).__name__}")
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs: Iterable[Any] = list(parameters.items())
        elif isinstance(parameters, Mapping):
            pairs = sorted(parameters.items())
        else:
            pairs = list(parameters)
            for j, pair in enumerate(pairs):
                if not isinstance(pair, Iterable):
                    raise TypeError(f"ParameterDict update sequence element #{j} should be Iterable; is "
                                    f"{type(pair).__name__}")
                if len(pair) != 2:  # type: ignore[arg-type]
                    raise ValueError(f"ParameterDict update sequence element #{j} has length {len(pair)}; "  # type: ignore[arg-type]
                                     "2 is required")
        for key, value in pairs:
            self[key] = value

    def __or__(self, other: ParameterDict) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        out = other.copy()
        out.update(self)
        return out

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_entry_repr(key, value) for key, value in self.items())
