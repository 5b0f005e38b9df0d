"""Differentiable tensor ops as Function classes.

``forward`` computes with the raw, history-free kernel calls on Tensor (``_map``, ``_zip``,
``_reduce``, ``_matmul``, ``_view_of``). ``backward`` normally runs with autodiff off; under
``create_graph=True`` it runs with grad mode on, and every Function here marked ``higher_order`` then
builds its gradient from differentiable ops (a raw fast formula is kept for the ordinary path where
the two differ), so second derivatives work. Neither knows which backend executes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import autodiff, dtypes
from .autodiff import Context, Function, History, is_grad_enabled
from .tensor_data import shape_broadcast

if TYPE_CHECKING:
    from .tensor import Tensor


_new = object.__new__

_AUDITED_MODULES = frozenset(
    f"minitensor.{name}"
    for name in ("tensor_functions", "tensor_math", "tensor_arith", "tensor_reduce", "tensor_shape", "tensor_join",
                 "tensor_index", "linalg")
)  # fmt: skip


class TensorFunction(Function):
    """Function over Tensors. Gradients are summed back to each input's shape and cast to its dtype."""

    higher_order = False

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


# --- element-wise unary ---


class UnaryFunction(TensorFunction):
    """out = op(a); grad = back_op(a, d). Subclasses name the two kernel ops."""

    op = "id"
    back_op = ""

    @classmethod
    def forward(cls, ctx: Context, a: Tensor) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(a)
        return a._map(cls.op)

    @classmethod
    def backward(cls, ctx: Context, d: Tensor) -> Tensor:  # type: ignore[override]
        (a,) = ctx.saved_values
        if is_grad_enabled():  # create_graph: the same formula from differentiable ops
            return cls.differentiable(a, d)
        return a._zip(cls.back_op, d)

    @staticmethod
    def differentiable(a: Tensor, d: Tensor) -> Tensor:
        raise NotImplementedError


class Neg(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        return a._map("neg")

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        return Neg.apply(d) if is_grad_enabled() else d._map("neg")


class Inv(UnaryFunction):
    """1 / a; d/da = -1 / a^2."""

    op, back_op = "inv", "inv_back"
    differentiable = staticmethod(lambda a, d: -d / (a * a))


class Log(UnaryFunction):
    """log a; d/da = 1 / a."""

    op, back_op = "log", "log_back"
    differentiable = staticmethod(lambda a, d: d / a)


class Abs(UnaryFunction):
    """|a|; d/da = sign(a) (0 at 0)."""

    op, back_op = "abs", "abs_back"
    differentiable = staticmethod(lambda a, d: d * a.sign())


class Exp(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        out = a._map("exp")
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        return d * ctx.saved_values[0]


class Sqrt(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        out = a._map("sqrt")
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        return d / (ctx.saved_values[0] * 2.0)


class Sigmoid(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        out = a._map("sigmoid")
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        s = ctx.saved_values[0]
        return d * s * (1.0 - s)


class Tanh(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        out = a._map("tanh")
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        t = ctx.saved_values[0]
        return d * (1.0 - t * t)


# --- element-wise binary (broadcasting) ---


class Add(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        return a._zip("add", b)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, Tensor]:
        return d, d


class Sub(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        return a._zip("sub", b)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, Tensor]:
        return d, -d


class Mul(TensorFunction):
    """a * b; d/da = b, d/db = a (each saved only when the other's gradient is needed, as in PyTorch)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        need_a, need_b = ctx.needs_input_grad
        ctx.save_for_backward(a if need_b else None, b if need_a else None)
        return a._zip("mul", b)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = ctx.saved_values
        need_a, need_b = ctx.needs_input_grad
        if not is_grad_enabled():  # the ordinary backward: raw kernels, no graph bookkeeping
            return (d._zip("mul", b) if need_a else None), (d._zip("mul", a) if need_b else None)
        return (d * b if need_a else None), (d * a if need_b else None)


class Div(TensorFunction):
    """a / b; d/da = 1 / b, d/db = -a / b^2 (a saved only when b's gradient is needed)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b)
        same = a.dtype == b.dtype and a.dtype.kind == "f"
        return a._zip("div", b, dtype=a.dtype if same else dtypes.float_result(dtypes.result_type(a, b)))

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = ctx.saved_values
        need_a, need_b = ctx.needs_input_grad
        if not is_grad_enabled() and b.dtype == d.dtype and (a is None or a.dtype == d.dtype):  # raw kernels
            grad_a = d._zip("div", b) if need_a else None
            grad_b = d._map("neg")._zip("mul", a)._zip("div", b._zip("mul", b)) if need_b else None
            return grad_a, grad_b
        return (d / b if need_a else None), (-d * a / (b * b) if need_b else None)


class Compare(TensorFunction):
    """Comparisons: a bool tensor with no gradient. Subclasses name the op."""

    op = "eq"

    @classmethod
    def forward(cls, ctx: Context, a: Tensor, b: Tensor) -> Tensor:  # type: ignore[override]
        return a._zip(cls.op, b, dtype=dtypes.bool_)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[None, None]:
        return None, None


class LT(Compare):
    op = "lt"


class GT(Compare):
    op = "gt"


class EQ(Compare):
    op = "eq"


class LE(Compare):
    op = "le"


class GE(Compare):
    op = "ge"


class NE(Compare):
    op = "ne"


# --- reductions ---


class Sum(TensorFunction):
    """sum along ``dim`` (keepdim)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, dim: int) -> Tensor:
        ctx.save_for_backward(a.shape)
        return a._reduce("sum", dim)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        shape = ctx.saved_values[0]
        return d.expand(*shape) if is_grad_enabled() else d._view_of(d._data.expand(shape))


class Max(TensorFunction):
    """max along ``dim`` (keepdim); the gradient is shared evenly among tied maxima. Subclasses set ``op`` ("min")."""

    op = "max"

    @classmethod
    def forward(cls, ctx: Context, a: Tensor, dim: int) -> Tensor:  # type: ignore[override]
        out = a._reduce(cls.op, dim)
        ctx.save_for_backward(a, out, dim)
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        a, out, dim = ctx.saved_values
        mask = a._zip("eq", out)
        return d * mask / mask._reduce("sum", dim)


# --- shape and layout: forward returns a view sharing storage ---


class Permute(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor, order: tuple[int, ...]) -> Tensor:
        ctx.save_for_backward(order)
        return a._alias(a._data.permute(*order))

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        order = ctx.saved_values[0]
        inverse = sorted(range(len(order)), key=lambda i: order[i])
        return d.permute(*inverse) if is_grad_enabled() else d._view_of(d._data.permute(*inverse))


class Expand(TensorFunction):
    """Broadcast to a larger shape with stride 0; the gradient sums back."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, shape: tuple[int, ...]) -> Tensor:
        return a._alias(a._data.expand(shape))

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        return d  # chain_rule sums it back to the input shape


class Slice(TensorFunction):
    """Basic indexing (ints and slices); the gradient is written into zeros through the same slice."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, key: tuple[Any, ...]) -> Tensor:
        ctx.save_for_backward(a.shape, key)
        return a._alias(a._data.slice(key))

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        shape, key = ctx.saved_values
        return PutView.apply(d, shape, _SliceOf(key))


class _SliceOf:
    """The view ``data.slice(key)`` of any TensorData (a picklable, comparable view function)."""

    def __init__(self, key: tuple[Any, ...]) -> None:
        self.key = key

    def __call__(self, data: Any) -> Any:
        return data.slice(self.key)


class TakeView(TensorFunction):
    """``view(a)`` for a function ``view`` from TensorData to a view of it (diagonal, slice); the gradient is
    written into zeros through the same view (PutView), so both are differentiable any number of times."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, view: Any) -> Tensor:
        ctx.save_for_backward(a.shape, view)
        return a._alias(view(a._data))

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, None]:
        shape, view = ctx.saved_values
        return PutView.apply(d, shape, view), None


class PutView(TensorFunction):
    """Zeros of ``shape`` with ``d`` written through ``view``; the gradient is that view of the incoming one."""

    @staticmethod
    def forward(ctx: Context, d: Tensor, shape: tuple[int, ...], view: Any) -> Tensor:
        ctx.save_for_backward(view)
        grad = d._zeros(shape)
        d.backend.map("id", d._data, view(grad._data))
        return grad

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None, None]:
        return TakeView.apply(g, ctx.saved_values[0]), None, None


class Contiguous(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        return a._map("id")

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        return d


class Cast(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor, dtype: Any) -> Tensor:
        return a._map("id", dtype=dtype)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        return d  # chain_rule casts back to the input dtype


class ToBackend(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor, backend: Any) -> Tensor:
        ctx.save_for_backward(a.backend)
        return a._to_backend(backend)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, None]:
        return ToBackend.apply(d, ctx.saved_values[0]), None


class MatMul(TensorFunction):
    """Batched a @ b with broadcast batch dims; grads are d @ b^T and a^T @ d."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        need_a, need_b = ctx.needs_input_grad
        transposed = False
        if need_b and not b._data.is_contiguous():
            order = list(range(b.dims))
            order[-2], order[-1] = order[-1], order[-2]
            transposed = b._data.permute(*order).is_contiguous()
        ctx.save_for_backward(a if need_b else None, b if need_a else None, transposed)
        return a._matmul(b)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b, transposed = ctx.saved_values
        need_a, need_b = ctx.needs_input_grad
        if not is_grad_enabled() and d.dims >= 2:  # the ordinary backward: raw kernels and views, no graph
            grad_a = d._matmul(_transposed(b)) if need_a else None
            grad_b = None
            if need_b:
                grad_b = _transposed(_transposed(d)._matmul(a)) if transposed else _transposed(a)._matmul(d)
            return grad_a, grad_b
        mm = MatMul.apply  # under create_graph differentiable
        grad_a = mm(d, b.transpose(-1, -2)) if need_a else None
        grad_b = None
        if need_b:
            if transposed:
                # b is a transposed view (e.g. Linear's weight.T): a gradient in the same layout
                # becomes contiguous once the transpose's backward undoes it, saving a copy later.
                grad_b = mm(d.transpose(-1, -2), a).transpose(-1, -2)
            else:
                grad_b = mm(a.transpose(-1, -2), d)
        return grad_a, grad_b


def _transposed(x: Tensor) -> Tensor:
    """A view of ``x`` with its last two dims swapped, without history (for raw backward formulas)."""
    order = list(range(x.dims))
    order[-2], order[-1] = order[-1], order[-2]
    return x._view_of(x._data.permute(*order))


# --- selection: kernels beyond the four ---


class Where(TensorFunction):
    """cond ? a : b with broadcasting; the gradient flows to a where cond holds and to b elsewhere."""

    @staticmethod
    def forward(ctx: Context, cond: Tensor, a: Tensor, b: Tensor) -> Tensor:
        ctx.save_for_backward(cond)
        shape = shape_broadcast(shape_broadcast(cond.shape, a.shape), b.shape)
        out = a.backend.empty(shape, dtypes.result_type(a, b))
        a.backend.where(cond._data, a._data, b._data, out)
        return a._view_of(out)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[None, Tensor | None, Tensor | None]:
        (cond,) = ctx.saved_values
        _, need_a, need_b = ctx.needs_input_grad
        zero = d._lift(0.0)
        pick = Where.apply if is_grad_enabled() else _where
        return None, (pick(cond, d, zero) if need_a else None), (pick(cond, zero, d) if need_b else None)


def _where(cond: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """Where's forward as a raw kernel call, without history (for the ordinary backward)."""
    out = a.backend.empty(shape_broadcast(shape_broadcast(cond.shape, a.shape), b.shape), dtypes.result_type(a, b))
    a.backend.where(cond._data, a._data, b._data, out)
    return a._view_of(out)


class Gather(TensorFunction):
    """out[..., j, ...] = a[..., index[..., j, ...], ...] along ``dim``; the gradient scatter-adds back.

    ``index`` is an int64 tensor with every index in range (callers check); its shape is the output's.
    """

    @staticmethod
    def forward(ctx: Context, a: Tensor, dim: int, index: Tensor) -> Tensor:
        ctx.save_for_backward(a.shape, dim, index)
        out = a.backend.empty(index.shape, a.dtype)
        a.backend.gather(a._data, dim, index._data, out)
        return a._view_of(out)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, None, None]:
        shape, dim, index = ctx.saved_values
        return ScatterAddInto.apply(d, shape, dim, index), None, None


class ScatterAddInto(TensorFunction):
    """Zeros of ``shape`` with ``d`` added at ``index`` along ``dim`` (Gather's gradient); its gradient is a gather."""

    @staticmethod
    def forward(ctx: Context, d: Tensor, shape: tuple[int, ...], dim: int, index: Tensor) -> Tensor:
        ctx.save_for_backward(dim, index)
        grad = d._zeros(shape)
        d.backend.scatter_add(d._data, dim, index._data, grad._data)
        return grad

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None, None, None]:
        dim, index = ctx.saved_values
        return Gather.apply(g, dim, index), None, None, None
