"""The base class of minitensor's differentiable tensor ops: ``TensorFunction``, with the inlined ``apply`` every op
runs through and the ``chain_rule`` that sums each input's gradient back to its shape and dtype.

``forward`` computes with the raw, history-free kernel calls on Tensor (``_map``, ``_zip``,
``_reduce``, ``_matmul``, ``_view_of``). ``backward`` normally runs with autodiff off; under
``create_graph=True`` it runs with grad mode on, and every Function of the modules in ``_AUDITED_MODULES`` is
``higher_order`` unless it says otherwise: it then builds its gradient from differentiable ops (a raw fast formula
is kept for the ordinary path where the two differ), so second derivatives work. Neither knows which backend
executes it. The ops themselves are in the modules :mod:`minitensor.tensor_functions` gathers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import autodiff
from .autodiff import Context, Function, History

if TYPE_CHECKING:
    from .tensor import Tensor


_new = object.__new__

_AUDITED_MODULES = frozenset(
    f"minitensor.{name}"
    for name in ("tensor_functions", "functions_elementwise", "functions_reduce", "functions_views", "tensor_math",
                 "tensor_arith", "tensor_compare", "tensor_reduce", "tensor_shape", "tensor_join", "tensor_index", "linalg")
)  # fmt: skip


class TensorFunction(Function):
    """Function over Tensors. Gradients are summed back to each input's shape and cast to its dtype."""

    higher_order = False
    is_view = False
    """True for Functions whose output is a view of their first input's storage: a write through the output is
    recorded into the input's history too (``tensor_inplace._rebase_base``)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Functions of the audited core modules have differentiable backwards (``higher_order``) unless they say
        otherwise; any other Function must opt in, so create_graph never silently passes a raw-kernel backward."""
        super().__init_subclass__(**kwargs)
        if "higher_order" not in cls.__dict__ and cls.__module__ in _AUDITED_MODULES:
            cls.higher_order = True

    @classmethod
    def _finish(cls, raw: Tensor, history: History | None, inputs: tuple[Any, ...]) -> Tensor:
        if history is not None and raw._data.dtype.kind == "f":  # integer and bool results never carry gradients
            raw.history = history
            raw._requires_grad = True
        return raw

    @classmethod
    def apply(cls, *inputs: Any) -> Any:
        """``Function.apply`` for tensors, inlined (it runs for every op): the inputs' ``requires_grad`` flags
        (all False when this thread's grad mode is off), ``forward``, and a History on a float result when an
        input requires grad."""
        if autodiff._threads_without_grad == 0 or autodiff._state.enabled:
            needs = tuple([getattr(v, "_requires_grad", False) for v in inputs])
            record = True in needs
        else:
            needs, record = (False,) * len(inputs), False
        ctx = _new(Context)
        ctx.needs_input_grad = needs
        raw = cls.forward(ctx, *inputs)
        if record and raw._data.dtype.kind == "f":  # integer and bool results never carry gradients
            history = _new(History)
            history.last_fn, history.ctx, history.inputs = cls, ctx, inputs
            history.input_histories = tuple([getattr(v, "history", None) for v in inputs])
            raw.history = history
            raw._requires_grad = True
        return raw

    @classmethod
    def chain_rule(cls, ctx: Context, inputs: tuple[Any, ...], grad: Any) -> list[tuple[Any, Any]]:
        """(input, its gradient) for every input that needs one, summed back to the input's shape and cast to its
        dtype."""
        grads = cls.backward(ctx, grad)
        if type(grads) is not tuple:
            grads = (grads,)
        out = []
        for v, g, need in zip(inputs, grads, ctx.needs_input_grad):
            if not need or g is None:
                continue
            g_data, v_data = g._data, v._data
            if g_data.shape != v_data.shape:
                g = g.sum_to_shape(v_data.shape)
            if g_data.dtype != v_data.dtype:
                g = g.cast(v_data.dtype)
            out.append((v, g))
        return out
