"""The optimizer base class (``torch.optim.Optimizer``): parameter groups, the step loop and state dicts.

An optimizer holds ``param_groups`` (dicts of hyperparameters, each with a ``"params"`` list) and ``state``
(a dict keyed by parameter, like PyTorch's). ``step()`` updates every parameter that has a gradient *in place*:
the parameter object and its storage stay the same, so views of it see the update. Updates run raw
element-wise kernels (``backend.zip``/``backend.map``, writing straight into the parameter's or the state's
storage): a few kernel launches per parameter, no autograd bookkeeping, no new Parameter. The kernels are in
:mod:`.kernels`, the constructors' argument checks in :mod:`.checks`, shared update fragments in :mod:`.shared_updates`.
"""

from __future__ import annotations

import functools
import struct
from collections import defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any

import numpy as np

from ..autodiff import enable_grad, no_grad
from ..compiler.capture import add_guard, host_step
from ..errors import BackendError, DTypeError, ShapeError
from ..tensor import Tensor
from ..tensor_data import TensorData
from .kernels import bump, step_tensor

__all__ = ["Optimizer", "required"]


class _Required:
    """Marks a hyperparameter without a default (``torch.optim.optimizer.required``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required: Any = _Required()


class Optimizer:
    """Base class of the optimizers (``torch.optim.Optimizer``).

    ``params``: an iterable of tensors, or of dicts ``{"params": [...], <hyperparameter>: value}`` (parameter
    groups with their own hyperparameters; the rest come from ``defaults``). Subclasses implement
    :meth:`_update` (one parameter's in-place update) and :meth:`_init_state`.
    """

    def __init__(self, params: Any, defaults: dict[str, Any]):
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        self._scalar_buffers: dict[Tensor, tuple[tuple[str, ...], Tensor, dict[str, Tensor], bytes | None]] = {}
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but got Tensor"
            )
        if isinstance(params, (set, dict)) or not isinstance(params, Iterable):
            raise TypeError(f"params argument given to the optimizer should be an ordered iterable of Tensors or dicts, "
                            f"but got {type(params).__name__}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {key}: {group[key]}" for key in sorted(group) if key != "params")
        return "\n".join(lines) + "\n)"

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Append a group ``{"params": tensors, ...}``; missing hyperparameters come from ``defaults``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        group = dict(param_group)
        params = group.get("params")
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        elif params is None:
            raise ValueError("a parameter group needs a 'params' entry")
        params = list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not (p.is_leaf or getattr(p, "retains_grad", False)):
                raise ValueError("can't optimize a non-leaf Tensor")
        group["params"] = params
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's gradient: to None (the default), or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    with no_grad():
                        p.grad = p.grad.detach().zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; ``closure`` (re-evaluates the loss) is called first
        with grad mode on and its result returned."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            work: list[tuple[int, Tensor, Tensor, dict[str, Any]]] = []
            for index, group in enumerate(self.param_groups):
                for p in group["params"]:
                    grad = p.grad
                    if grad is None:
                        continue
                    if grad.shape != p.shape:
                        raise ShapeError(f"gradient of shape {grad.shape} does not match its parameter's {p.shape}")
                    if grad.backend is not p.backend:
                        raise BackendError(f"gradient on backend {grad.backend.name!r}, its parameter on "
                                           f"{p.backend.name!r}")
                    state = self.state.get(p)
                    if state is None:
                        state = {}
                        self._init_state(p, state, group)
                        if self._keeps_state(group):
                            self.state[p] = state
                    work.append((index, p, grad, state))
            if not work:
                return loss
            # Host work (step counts, learning rates, bias corrections) goes into small per-parameter tensors the
            # kernels read; under minitensor.compile it runs again before every replay.
            scalars = host_step(functools.partial(self._prepare, [(index, p, state) for index, p, _, state in work]))
            add_guard(self._structure)
            for (index, p, grad, state), values in zip(work, scalars):
                self._update(p, grad, state, self.param_groups[index], values)
                bump(p)
        return loss

    def _prepare(self, items: list[tuple[int, Tensor, dict[str, Any]]]) -> list[dict[str, Tensor]]:
        """For each (group index, parameter, state): :meth:`_scalars` written into the parameter's scalar tensors."""
        out = []
        for index, p, state in items:
            current = self.state.get(p)
            values = self._scalars(p, state if current is None else current, self.param_groups[index])
            out.append(self._write_scalars(p, values))
        return out

    def _write_scalars(self, p: Tensor, values: dict[str, float]) -> dict[str, Tensor]:
        """``values`` as 0-d tensors of p's dtype on p's backend: views into one small buffer per parameter, refilled
        on every step (the same numbers a lifted Python float would give)."""
        names, numbers = tuple(values), list(values.values())
        cached = self._scalar_buffers.get(p)
        if cached is None or cached[0] != names or cached[1].backend is not p.backend or cached[1].dtype != p.dtype:
            buffer = Tensor(p.backend.from_numpy(np.zeros(len(names), dtype=p.dtype)), p.backend)
            storage = buffer._data.storage
            views = {name: Tensor(TensorData(storage[i:], ()), p.backend) for i, name in enumerate(names)}
            cached = (names, buffer, views, None)
        raw = struct.pack(f"{len(numbers)}d", *numbers)  # float64 bits: equal bits give equal values in p's dtype
        if cached[3] != raw:  # the same numbers as last step (a constant lr) need no write
            p.backend.write_values(cached[1]._data, numbers)
            cached = (*cached[:3], raw)
        self._scalar_buffers[p] = cached
        return cached[2]

    def _scalars(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> dict[str, float]:
        """The numbers one step of ``p`` reads (advancing ``state["step"]`` where the optimizer counts steps)."""
        return {}

    def _structure(self) -> tuple:
        """The host values that choose which kernels a step runs (a guard of compiled steps)."""
        return tuple(self._group_structure(group) for group in self.param_groups)

    def _group_structure(self, group: dict[str, Any]) -> tuple:
        """:meth:`_structure` for one parameter group."""
        return ()

    def _init_state(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        """Fill a parameter's empty state before its first update."""

    def _keeps_state(self, group: dict[str, Any]) -> bool:
        """Whether parameters of ``group`` get an entry in ``state`` (plain SGD keeps none, as in PyTorch)."""
        return True

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                scalars: dict[str, Tensor]) -> None:
        """Update ``p`` in place from ``grad`` (both raw, no autograd), reading and updating ``state``; ``scalars``
        holds :meth:`_scalars`'s numbers as 0-d tensors."""
        raise NotImplementedError

    def _required_state(self, group: dict[str, Any]) -> tuple[str, ...]:
        """State entries a parameter of ``group`` must have once it has any state (checked by load_state_dict)."""
        return ()

    # --- serialization ---

    _host_state: tuple[str, ...] = ()
    """State entries besides ``step`` that are 0-d float32 host tensors (NAdam's ``mu_product``, ASGD's ``eta``)."""

    def _load_state_entry(self, p: Tensor, index: int, name: str, value: Any) -> Any:
        """One loaded state entry of parameter ``p`` (number ``index``): see :func:`_state_value`."""
        return _state_value(p, index, name, value, host=name in self._host_state)

    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {name: value}}, "param_groups": [{hyperparameters..., "params": [indices]}]}``.

        Parameters are numbered in group order, as in PyTorch; state tensors are the live ones (not copies).
        """
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: dict(entry) for p, entry in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a :meth:`state_dict` (its tensors may be minitensor tensors or NumPy arrays, on any backend).

        Every state tensor is checked against its parameter first (shape; a float dtype for float parameters) and
        the error names the parameter and entry; nothing changes when one is wrong. Tensors are copied onto each
        parameter's backend and dtype; ``step`` becomes a 0-d float32 host tensor.
        """
        if not isinstance(state_dict, dict) or "state" not in state_dict or "param_groups" not in state_dict:
            raise ValueError("an optimizer state dict is a dict with 'state' and 'param_groups' entries")
        saved_groups = deepcopy(list(state_dict["param_groups"]))
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"loaded state dict has a different number of parameter groups ({len(saved_groups)}) "
                             f"than the optimizer ({len(self.param_groups)})")
        mine = [len(g["params"]) for g in self.param_groups]
        theirs = [len(g["params"]) for g in saved_groups]
        if mine != theirs:
            raise ValueError(f"loaded state dict contains a parameter group that doesn't match the size of optimizer's "
                             f"group (sizes {theirs} in the state dict, {mine} in the optimizer)")
        owner: dict[int, tuple[Tensor, dict[str, Any]]] = {}
        for saved, group in zip(saved_groups, self.param_groups):
            for old, p in zip(saved["params"], group["params"]):
                owner[int(old)] = (p, {**saved, "params": group["params"]})
        new_state: dict[Tensor, dict[str, Any]] = {}
        for key, entry in state_dict["state"].items():
            try:
                index = int(key)
            except (TypeError, ValueError):
                raise ValueError(f"optimizer state key {key!r} is not a parameter index") from None
            if index not in owner:
                raise ValueError(f"optimizer state has an entry for parameter {index}, which no parameter group lists")
            p, group = owner[index]
            loaded = {name: self._load_state_entry(p, index, name, value) for name, value in dict(entry).items()}
            missing = [name for name in self._required_state(group) if name not in loaded]
            if loaded and missing:
                raise ValueError(f"optimizer state of parameter {index} (shape {p.shape}) lacks {', '.join(missing)}")
            new_state[p] = loaded
        for saved, group in zip(saved_groups, self.param_groups):
            saved["params"] = group["params"]
        self.param_groups = saved_groups
        self.state = defaultdict(dict, new_state)


def _state_value(p: Tensor, index: int, name: str, value: Any, host: bool = False,
                 shape: tuple[int, ...] | None = None) -> Any:
    """A loaded state entry for parameter ``p``: ``step`` (and any ``host`` entry) as a 0-d float32 host tensor,
    tensors checked (against ``shape``, p's shape when None) and copied onto p's backend and dtype."""
    if name == "step" or host:
        try:
            number = float(np.asarray(value.to_numpy() if isinstance(value, Tensor) else value).reshape(()))
        except (TypeError, ValueError):
            raise ValueError(f"optimizer state {name!r} of parameter {index} must be one number, got {value!r}") from None
        return step_tensor(number)
    if not isinstance(value, (Tensor, np.ndarray)):
        return value
    array = value.to_numpy() if isinstance(value, Tensor) else np.asarray(value)
    expected = p.shape if shape is None else shape
    if tuple(array.shape) != expected:
        what = "the parameter has shape" if shape is None else "it must have shape"
        raise ShapeError(f"optimizer state {name!r} of parameter {index} has shape {tuple(array.shape)}, "
                         f"but {what} {expected}")
    if p.dtype.kind == "f" and array.dtype.kind != "f":
        raise DTypeError(f"optimizer state {name!r} of parameter {index} has dtype {array.dtype}, "
                         f"but the parameter is {p.dtype}")
    return Tensor(p.backend.from_numpy(np.array(array, dtype=p.dtype, order="C")), p.backend)
