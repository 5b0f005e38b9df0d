"""``torch.amp.GradScaler``: loss scaling with a dynamic scale, inf/NaN checks and skipped optimizer steps.

In float32 and float64 (minitensor's float dtypes) scaling the loss by a power of two changes no gradient bit unless
it overflows; the scaler still does what PyTorch's does, so an overflowing or NaN step is skipped and the scale backs
off. The scale (a 0-d float32 tensor) and the growth tracker (0-d int32) live on the backend of the first tensor
scaled; the inf/NaN check, the unscaling and the scale update are backend kernels, and :meth:`GradScaler.step` reads
one flag per backend back to decide whether to skip.

``minitensor.compile``: :meth:`GradScaler.scale` may run inside a compiled function (the scale tensor is updated in
place, so replays read the current scale); ``unscale_``, ``step`` and ``update`` raise
:class:`~minitensor.errors.CompileError` there, because the skip is decided on a value read back to Python (and the
scaler's per-iteration state is Python state a replay would not repeat). Compile the forward and backward, and call
``scaler.step(optimizer)`` and ``scaler.update()`` after the compiled call.
"""

from __future__ import annotations

import functools
import warnings
from collections import abc, defaultdict
from enum import Enum
from typing import Any

from ..autodiff import no_grad
from ..backends.base import Backend
from ..compiler.capture import active, host_step
from ..creation import full
from ..dtypes import float32, int32
from ..errors import CompileError
from ..tensor import Tensor
from ..tensor_compare import where
from .autocast_state import cuda_available

__all__ = ["OptState", "GradScaler"]


class OptState(Enum):
    """Where an optimizer is in the scaler's iteration: nothing done, gradients unscaled, stepped."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_optimizer_state() -> dict[str, Any]:
    """An optimizer's state at the start of an iteration."""
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def check_and_unscale_(grads: list[Tensor], found_inf: Tensor, inv_scale: Tensor) -> None:
    """``found_inf`` (0-d float32) becomes 1 if any of ``grads`` (one backend, one dtype) holds an inf or NaN, else
    keeps its value; then every grad is multiplied in place by ``inv_scale`` (in the grads' dtype). Backend kernels
    only (``torch._amp_foreach_non_finite_check_and_unscale_``)."""
    finite = grads[0].isfinite().all()
    for grad in grads[1:]:
        finite = finite.logical_and(grad.isfinite().all())
    found_inf.copy_(where(finite, found_inf, 1.0))
    factor = inv_scale.to(dtype=grads[0].dtype)
    for grad in grads:
        grad.mul_(factor)


def update_scale_(scale: Tensor, growth_tracker: Tensor, found_inf: Tensor, growth_factor: float,
                  backoff_factor: float, growth_interval: int) -> None:
    """One scale update in place, with backend kernels (``torch._amp_update_scale_``): after an inf/NaN
    (``found_inf`` > 0) scale *= backoff_factor and the tracker resets; otherwise the tracker counts the clean step,
    and at ``growth_interval`` clean steps scale *= growth_factor (kept when that overflows float32) and the tracker
    resets. Products are taken in float64 and rounded to float32."""
    found = found_inf > 0
    successful = growth_tracker + 1
    grows = found.logical_not().logical_and(successful == growth_interval)
    grown = (scale.double() * growth_factor).float()
    grown = where(grown.isfinite(), grown, scale)
    backed_off = (scale.double() * backoff_factor).float()
    scale.copy_(where(found, backed_off, where(grows, grown, scale)))
    growth_tracker.copy_(where(found.logical_or(grows), successful.new_zeros(()), successful))


class GradScaler:
    """Dynamic loss scaling (``torch.amp.GradScaler(device="cuda", init_scale=2.**16, growth_factor=2.0,
    backoff_factor=0.5, growth_interval=2000, enabled=True)``).

    Per iteration: ``scaler.scale(loss).backward()``, optionally ``scaler.unscale_(optimizer)`` (once per optimizer,
    e.g. before clipping), ``scaler.step(optimizer)`` (unscales if not done, then runs ``optimizer.step()`` unless a
    gradient holds an inf or NaN, returning its result or None when skipped), ``scaler.update()`` (backoff after a
    skip, growth after ``growth_interval`` clean steps). ``device="cuda"`` without a usable cuda backend warns and
    disables the scaler, as PyTorch does; a disabled scaler passes ``scale``/``step`` through and does nothing else.
    The scale lives on the backend of the first tensor scaled. See the module docstring for ``minitensor.compile``.
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not cuda_available():
            warnings.warn("minitensor.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._scale: Tensor | None = None
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker: Tensor | None = None
        self._per_optimizer_states: defaultdict[int, dict[str, Any]] = defaultdict(_fresh_optimizer_state)

    # --- scaling ---

    def _lazy_init_scale_growth_tracker(self, backend: Backend) -> None:
        """Make the scale and growth tracker on ``backend`` if they do not exist yet."""
        if self._scale is None:
            self._scale = full((), self._init_scale, dtype=float32, device=backend)
            self._growth_tracker = full((), self._init_growth_tracker, dtype=int32, device=backend)

    def _scale_for(self, t: Tensor, copies: dict[str, Tensor]) -> Tensor:
        """The scale on ``t``'s backend (made there on first use; copied to other backends once per call)."""
        if self._scale is None:  # a host step: under minitensor.compile the scale is made outside the recording
            host_step(functools.partial(self._lazy_init_scale_growth_tracker, t.backend))
        assert self._scale is not None
        if self._scale.backend is t.backend:
            return self._scale
        name = t.backend.name
        if name not in copies:
            copies[name] = self._scale.to(device=t.backend)
        return copies[name]

    def scale(self, outputs: Any) -> Any:
        """``outputs`` times the current scale: a tensor, or lists/tuples (rebuilt) and other iterables (a ``map``)
        of them, nested. Unchanged when the scaler is disabled; anything else raises ValueError."""
        if not self._enabled:
            return outputs
        copies: dict[str, Tensor] = {}
        if isinstance(outputs, Tensor):
            return outputs * self._scale_for(outputs, copies)

        def apply_scale(value: Any) -> Any:
            if isinstance(value, Tensor):
                return value * self._scale_for(value, copies)
            if isinstance(value, abc.Iterable) and not isinstance(value, (str, bytes)):
                scaled = map(apply_scale, value)
                return type(value)(scaled) if isinstance(value, (list, tuple)) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    # --- unscaling and stepping ---

    def _refuse_compiled(self, method: str) -> None:
        """CompileError when called while minitensor.compile records a function."""
        if active() is not None:
            raise CompileError(
                f"GradScaler.{method}() inside a compiled function: whether the optimizer step is skipped is decided on "
                "an inf/NaN flag read back to Python, and the scaler's per-iteration state is Python state that a replay "
                "would not repeat. Compile the forward and backward (scaler.scale(loss).backward() works inside) and "
                "call scaler.unscale_/step/update after the compiled call."
            )

    def _check_scale_growth_tracker(self, funcname: str) -> tuple[Tensor, Tensor]:
        """The scale and growth tracker; PyTorch's AssertionError when nothing was scaled yet."""
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _unscale_grads_(self, optimizer: Any, inv_scale: Tensor, found_inf: Tensor,
                        allow_fp16: bool = False) -> dict[str, Tensor]:
        """Check and unscale every gradient of ``optimizer`` in place, grouped by backend and dtype; returns each
        backend's found-inf flag (a copy of ``found_inf`` there), keyed by device (only backends with gradients).
        ``allow_fp16`` is PyTorch's switch; minitensor has no float16 gradients to refuse."""
        groups: defaultdict[str, defaultdict[Any, list[Tensor]]] = defaultdict(lambda: defaultdict(list))
        for group in optimizer.param_groups:
            for param in group["params"]:
                if not isinstance(param, Tensor):
                    raise AssertionError(f"expected param to be Tensor, got {type(param).__name__}")
                if param.grad is not None:
                    groups[param.grad.device][param.grad.dtype].append(param.grad)
        flags: dict[str, Tensor] = {}
        with no_grad():
            for device, by_dtype in groups.items():
                flag = found_inf if found_inf.device == device else found_inf.to(device=device)
                scale = inv_scale if inv_scale.device == device else inv_scale.to(device=device)
                for grads in by_dtype.values():
                    check_and_unscale_(grads, flag, scale)
                flags[device] = flag
        return flags

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale in place, recording whether any holds an inf or NaN (once per
        optimizer per iteration; RuntimeError on a second call or after :meth:`step`). No value is read back."""
        if not self._enabled:
            return
        self._refuse_compiled("unscale_")
        scale, _ = self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        with no_grad():
            inv_scale = scale.double().reciprocal().float()  # the reciprocal in float64, rounded once (as PyTorch)
            found_inf = full((), 0.0, dtype=float32, device=scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale ``optimizer``'s gradients (unless :meth:`unscale_` did) and run ``optimizer.step(*args, **kwargs)``
        unless one holds an inf or NaN; returns its result, or None when skipped. A disabled scaler just steps."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._refuse_compiled("step")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = None
        if not sum(flag.item() for flag in state["found_inf_per_device"].values()):  # one read per backend
            result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """End the iteration: set the scale to ``new_scale`` (a float, or a 1-element tensor without grad on this
        scaler's device type) or, when None, back it off / grow it from this iteration's inf checks (backend kernels,
        no read). Forgets the iteration's per-optimizer state."""
        if not self._enabled:
            return
        self._refuse_compiled("update")
        scale, growth_tracker = self._check_scale_growth_tracker("update")
        with no_grad():
            if new_scale is not None:
                self._set_scale(scale, new_scale)
            else:
                found_infs = [flag.to(device=scale.device) for state in self._per_optimizer_states.values()
                              for flag in state["found_inf_per_device"].values()]
                if len(found_infs) == 0:
                    raise AssertionError("No inf checks were recorded prior to update.")
                found_inf = found_infs[0]
                for flag in found_infs[1:]:
                    found_inf = found_inf + flag
                update_scale_(scale, growth_tracker, found_inf, self._growth_factor, self._backoff_factor,
                              self._growth_interval)
        self._per_optimizer_states = defaultdict(_fresh_optimizer_state)

    def _set_scale(self, scale: Tensor, new_scale: float | Tensor) -> None:
        """Write a user-given scale into the scale tensor (PyTorch's AssertionError for a bad tensor)."""
        if isinstance(new_scale, (float, int)) and not isinstance(new_scale, bool):
            scale.fill_(float(new_scale))
            return
        reason = ("new_scale should be a float or a 1-element minitensor float Tensor with requires_grad=False, on the "
                  f"scaler's device type ({self._device!r}).")
        if not isinstance(new_scale, Tensor) or new_scale.device.type != self._device:
            raise AssertionError(reason)
        if new_scale.numel() != 1 or new_scale.requires_grad:
            raise AssertionError(reason)
        scale.copy_(new_scale.reshape(()).to(device=scale.device))

    # --- hyperparameters and state ---

    def _get_scale_async(self) -> Tensor | None:
        """The scale tensor (None before the first :meth:`scale`)."""
        return self._scale

    def get_scale(self) -> float:
        """The current scale as a Python float (``init_scale`` before the first :meth:`scale`); 1.0 when disabled."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        """The factor the scale grows by after ``growth_interval`` clean steps."""
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set :meth:`get_growth_factor`."""
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        """The factor the scale shrinks by after a step with an inf or NaN gradient."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set :meth:`get_backoff_factor`."""
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        """How many consecutive clean steps grow the scale."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set :meth:`get_growth_interval`."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        """Consecutive clean steps since the last growth or backoff (0 when disabled)."""
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker.item())

    def is_enabled(self) -> bool:
        """Whether this scaler scales (False when made disabled, or for "cuda" without a cuda backend)."""
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """``{"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}`` as Python numbers
        (PyTorch's keys); {} when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict` (a no-op when disabled; RuntimeError for an empty one)."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled instance "
                               "of GradScaler.")
        self._init_scale = state_dict["scale"]
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        with no_grad():
            if self._scale is not None:
                self._scale.fill_(float(state_dict["scale"]))
            if self._growth_tracker is not None:
                self._growth_tracker.fill_(int(state_dict["_growth_tracker"]))

    def __getstate__(self) -> dict[str, Any]:
        """Pickle state: the scale and tracker as numbers (PyTorch's rule: only between iterations)."""
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning of an iteration, or at "
                                     "the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer: Any) -> dict[str, Tensor]:
        """Record ``optimizer``'s inf checks without unscaling its gradients; returns the per-device flags."""
        scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        ones = full((), 1.0, dtype=float32, device=scale.device)
        found_inf = full((), 0.0, dtype=float32, device=scale.device)
        flags = self._unscale_grads_(optimizer, ones, found_inf, True)
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = flags
        return flags

    def _found_inf_per_device(self, optimizer: Any) -> dict[str, Tensor]:
        """The per-device flags of ``optimizer``'s inf checks this iteration."""
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
