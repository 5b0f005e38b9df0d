"""Linear algebra of Tensor (the ``LinalgMethods`` mixin) and the matching ``mt.`` functions.

Names, signatures, shape rules and error messages follow PyTorch. Every contraction runs on the
backend's matmul kernel: ``einsum`` and ``tensordot`` permute each pair of operands and reshape them to
(batch, m, k) and (batch, k, n); they never form a broadcast product. Unlike PyTorch, operands of
different dtypes are promoted (float32 @ float64 gives float64) instead of rejected.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import tensor_functions as F
from .autodiff import Context
from .errors import DTypeError, ShapeError
from .tensor_data import TensorData, normalize_dim, shape_broadcast

if TYPE_CHECKING:
    from .tensor import Tensor


def _x(shape: Sequence[int]) -> str:
    """A shape as PyTorch prints it in matmul errors: 2x3."""
    return "x".join(map(str, shape))


def _numeric(name: str, *xs: Tensor) -> None:
    """Raise DTypeError for bool operands: like PyTorch, there are no bool matrix products."""
    for x in xs:
        if x.dtype.kind == "b":
            raise DTypeError(f"\"{name}\" not implemented for 'Bool' (shape {x.shape}); cast with .long() or .float() first")


def _row(v: Tensor) -> Tensor:
    """A 1-D tensor as a (1, n) view (no copy, whatever its strides)."""
    return v.expand(1, v.shape[0])


def _column(v: Tensor) -> Tensor:
    """A 1-D tensor as an (n, 1) view (no copy, whatever its strides)."""
    return v.expand(1, v.shape[0]).permute(1, 0)


# --- matrix products ---


def dot(self: Tensor, other: Tensor) -> Tensor:
    """Inner product of two 1-D tensors of the same length (a 0-d tensor)."""
    a, b = self, self._operand(other)
    _numeric("dot", a, b)
    if a.dims != 1 or b.dims != 1:
        raise ShapeError(f"1D tensors expected, but got {a.dims}D and {b.dims}D tensors (shapes {a.shape} and {b.shape})")
    if a.shape != b.shape:
        n, m = a.shape[0], b.shape[0]
        raise ShapeError(
            f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same number of elements, "
            f"but got {n} and {m} elements respectively"
        )
    return F.MatMul.apply(_row(a), _column(b)).view(())


def vdot(self: Tensor, other: Tensor) -> Tensor:
    """``dot`` with the first operand conjugated: the same as ``dot`` for real tensors."""
    return dot(self, other)


def mm(self: Tensor, mat2: Tensor) -> Tensor:
    """Product of two 2-D tensors, (n, k) @ (k, m) -> (n, m); no broadcasting."""
    a, b = self, self._operand(mat2)
    _numeric("mm", a, b)
    for name, t in (("self", a), ("mat2", b)):
        if t.dims != 2:
            raise ShapeError(f"{name} must be a matrix, got a {t.dims}-D tensor of shape {t.shape}")
    if a.shape[1] != b.shape[0]:
        raise ShapeError(f"mat1 and mat2 shapes cannot be multiplied ({_x(a.shape)} and {_x(b.shape)})")
    return F.MatMul.apply(a, b)


def bmm(self: Tensor, mat2: Tensor) -> Tensor:
    """Batched product of 3-D tensors with equal batch sizes, (b, n, k) @ (b, k, m) -> (b, n, m); no broadcasting."""
    a, b = self, self._operand(mat2)
    _numeric("bmm", a, b)
    for name, t in (("batch1", a), ("batch2", b)):
        if t.dims != 3:
            raise ShapeError(f"{name} must be a 3D tensor, got a {t.dims}-D tensor of shape {t.shape}")
    if b.shape[:2] != (a.shape[0], a.shape[2]):
        raise ShapeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, {a.shape[2]}] "
            f"but got: [{b.shape[0]}, {b.shape[1]}] (bmm of shapes {a.shape} and {b.shape})"
        )
    return F.MatMul.apply(a, b)


def mv(self: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector product, (n, m) @ (m,) -> (n,)."""
    a, v = self, self._operand(vec)
    _numeric("mv", a, v)
    if a.dims != 2 or v.dims != 1:
        raise ShapeError(f"vector + matrix @ vector expected, got 1, {a.dims}, {v.dims} (shapes {a.shape} and {v.shape})")
    if a.shape[1] != v.shape[0]:
        raise ShapeError(f"size mismatch, got input ({a.shape[0]}), mat ({_x(a.shape)}), vec ({v.shape[0]})")
    return F.MatMul.apply(a, _column(v)).view(a.shape[0])


def matmul(self: Tensor, other: Tensor) -> Tensor:
    """``torch.matmul``: a 1-D operand acts as a row (left) or column (right) dropped after; batch dims broadcast."""
    a, b = self, self._operand(other)
    _numeric("matmul", a, b)
    if a.dims == 0 or b.dims == 0:
        raise ShapeError(f"both arguments to matmul need to be at least 1D, but they are {a.dims}D and {b.dims}D")
    if a.dims == 1 and b.dims == 1:
        return dot(a, b)
    if a.dims >= 2 and b.dims == 1:
        if a.shape[-1] != b.shape[0]:
            n = math.prod(a.shape[:-1])
            raise ShapeError(f"size mismatch, got input ({n}), mat ({_x(a.shape)}), vec ({b.shape[0]})")
        return F.MatMul.apply(a, _column(b)).view(*a.shape[:-1])
    left = _row(a) if a.dims == 1 else a
    if left.shape[-1] != b.shape[-2]:
        raise ShapeError(f"mat1 and mat2 shapes cannot be multiplied ({_x(left.shape)} and {_x(b.shape)})")
    try:
        shape_broadcast(left.shape[:-2], b.shape[:-2])
    except ShapeError:
        raise ShapeError(f"matmul batch dims do not broadcast: shapes {a.shape} and {b.shape}") from None
    if a.dims >= 3 and b.dims == 2:  # fold the batch into rows: one matrix product each way, not one per batch entry
        rows = math.prod(a.shape[:-1])
        return F.MatMul.apply(a.reshape(rows, a.shape[-1]), b).view(*a.shape[:-1], b.shape[-1])
    out = F.MatMul.apply(left, b)
    return out.view(*out.shape[:-2], out.shape[-1]) if a.dims == 1 else out


def outer(self: Tensor, vec2: Tensor) -> Tensor:
    """Outer product of two 1-D tensors, (n,) x (m,) -> (n, m)."""
    a, b = self, self._operand(vec2)
    for name, t in (("self", a), ("vec2", b)):
        if t.dims != 1:
            raise ShapeError(f"outer: Expected 1-D argument {name}, but got {t.dims}-D (shape {t.shape})")
    return _column(a) * b


ger = outer


# --- einsum ---


def _merged_view(data: TensorData, groups: tuple[tuple[int, ...], ...]) -> TensorData:
    """View of ``data`` whose dim i walks the diagonal of the input dims ``groups[i]`` (strides summed)."""
    shape = [data.shape[g[0]] for g in groups]
    strides = [sum(data.strides[d] for d in g) for g in groups]
    return TensorData(data.storage, shape, strides)


class Diagonal(F.TensorFunction):
    """Diagonal view over groups of equal-sized dims (``'ii->i'``); backward writes into zeros through the same view."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, groups: tuple[tuple[int, ...], ...]) -> Tensor:
        ctx.save_for_backward(a.shape, groups)
        return a._alias(_merged_view(a._data, groups))

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        shape, groups = ctx.saved_values
        return F.PutView.apply(d, shape, functools.partial(_merged_view, groups=groups))


def _letter_name(label: str) -> str:
    """How errors name a label: the letter, or the position inside the ellipsis."""
    return label if label.isalpha() else f"'...' dim {label}"


def _parse_subscripts(spec: str, where: str, start: int) -> tuple[list[str], bool]:
    """Letters of one operand's (or the output's) subscripts and whether it has an ellipsis ('.' kept as '...')."""
    letters: list[str] = []
    ellipsis = False
    i = 0
    while i < len(spec):
        c = spec[i]
        if c == ".":
            if spec[i : i + 3] != "...":
                raise ShapeError(f"einsum(): found '.' for {where} that is not part of any ellipsis")
            if ellipsis:
                raise ShapeError(f"einsum(): found '.' for {where} for which an ellipsis was already found")
            ellipsis = True
            letters.append("...")
            i += 3
            continue
        if not (c.isascii() and c.isalpha()):
            raise ShapeError(
                f"einsum(): invalid subscript given at index {start + i} in the equation string, subscripts must be in [a-zA-Z]"
            )
        letters.append(c)
        i += 1
    return letters, ellipsis


def _parse(equation: str, shapes: list[tuple[int, ...]]) -> tuple[list[list[str]], list[str]]:
    """Each operand's labels (one per dim) and the output's; ellipsis dims get the labels '0', '1', ... right-aligned."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    specs = lhs.split(",")
    if len(specs) > len(shapes):
        raise ShapeError(f"einsum(): fewer operands were provided than specified in the equation {equation!r} ({len(shapes)} given)")
    if len(specs) < len(shapes):
        raise ShapeError(f"einsum(): more operands were provided than specified in the equation {equation!r} ({len(shapes)} given)")
    parsed = []
    start = 0
    for i, (spec, shape) in enumerate(zip(specs, shapes)):
        letters, ellipsis = _parse_subscripts(spec, f"operand {i}", start)
        start += len(spec) + 1
        count = len(letters) - ellipsis
        if not ellipsis and count != len(shape):
            raise ShapeError(
                f"einsum(): the number of subscripts in the equation ({count}) does not match the number of dimensions "
                f"({len(shape)}) for operand {i} and no ellipsis was given (subscripts {spec!r}, shape {shape})"
            )
        if count > len(shape):
            raise ShapeError(
                f"einsum(): the number of subscripts in the equation ({count}) is more than the number of dimensions "
                f"({len(shape)}) for operand {i} (subscripts {spec!r}, shape {shape})"
            )
        parsed.append((letters, len(shape) - count))
    n_ellipsis = max((e for _, e in parsed), default=0)
    labels = []
    for letters, e in parsed:
        at = letters.index("...") if "..." in letters else len(letters)
        dots = [str(n_ellipsis - e + t) for t in range(e)]
        labels.append(letters[:at] + dots + letters[at + 1 :])
    dots = [str(t) for t in range(n_ellipsis)]
    if not arrow:
        counts: dict[str, int] = {}
        for letters, _ in parsed:
            for c in letters:
                counts[c] = counts.get(c, 0) + 1
        return labels, dots + sorted(c for c, n in counts.items() if n == 1 and c != "...")
    out_letters, _ = _parse_subscripts(rhs, "the output", len(lhs) + 2)
    seen = {c for letters, _ in parsed for c in letters}
    for j, c in enumerate(out_letters):
        if c in out_letters[:j]:
            raise ShapeError(f"einsum(): output subscript {c} appears more than once in the output ({equation!r})")
        if c != "..." and c not in seen:
            raise ShapeError(f"einsum(): output subscript {c} does not appear in the equation for any input operand ({equation!r})")
    if "..." not in out_letters:
        return labels, out_letters
    where = out_letters.index("...")
    return labels, out_letters[:where] + dots + out_letters[where + 1 :]


def _diagonal(x: Tensor, labels: list[str], i: int) -> tuple[Tensor, list[str]]:
    """Take the diagonal over each label repeated in one operand (a view), leaving unique labels."""
    unique = list(dict.fromkeys(labels))
    if len(unique) == len(labels):
        return x, labels
    groups = tuple(tuple(d for d, lab in enumerate(labels) if lab == u) for u in unique)
    for u, g in zip(unique, groups):
        sizes = [x.shape[d] for d in g]
        if len(set(sizes)) > 1:
            raise ShapeError(
                f"einsum(): subscript {_letter_name(u)} is repeated for operand {i} but the sizes don't match, "
                f"{sizes[1]} != {sizes[0]} (shape {x.shape})"
            )
    return Diagonal.apply(x, groups), unique


def _broadcast(operands: list[Tensor], labels: list[list[str]], what: str) -> list[Tensor]:
    """Check that each label has one size (or 1) everywhere; drop the size-1 dims of labels that are larger elsewhere."""
    sizes: dict[str, int] = {}
    for i, (x, labs) in enumerate(zip(operands, labels)):
        for lab, s in zip(labs, x.shape):
            seen = sizes.get(lab)
            if seen is None or seen == 1:
                sizes[lab] = s
            elif s not in (1, seen):
                raise ShapeError(
                    f"{what}: subscript {_letter_name(lab)} has size {s} for operand {i} which does not broadcast with "
                    f"previously seen size {seen} (shapes {[t.shape for t in operands]})"
                )
    out = []
    for x, labs in zip(operands, labels):
        drop = [s == 1 and sizes[lab] != 1 for lab, s in zip(labs, x.shape)]
        if any(drop):
            x = x[tuple(0 if d else slice(None) for d in drop)]
            labs[:] = [lab for lab, d in zip(labs, drop) if not d]
        out.append(x)
    return out


def _sum_out(x: Tensor, labels: list[str], keep: set[str]) -> tuple[Tensor, list[str]]:
    """Sum over the dims whose label is not in ``keep``."""
    dims = [d for d, lab in enumerate(labels) if lab not in keep]
    if not dims:
        return x, labels
    return x.sum(dims), [lab for lab in labels if lab in keep]


def _grouped(x: Tensor, labels: list[str], groups: list[list[str]]) -> Tensor:
    """``x`` permuted to the label order of ``groups`` and reshaped to one dim per group."""
    size = dict(zip(labels, x.shape))
    order = [labels.index(lab) for g in groups for lab in g]
    if order != list(range(len(order))):
        x = x.permute(*order)
    return x.reshape(*[math.prod(size[lab] for lab in g) for g in groups])


def _contract(a: Tensor, la: list[str], b: Tensor, lb: list[str], keep: set[str]) -> tuple[Tensor, list[str]]:
    """Contract two operands on the matmul kernel, keeping the labels in ``keep``; the result's labels are batch, m, n."""
    a, la = _sum_out(a, la, keep | set(lb))
    b, lb = _sum_out(b, lb, keep | set(la))
    batch = [lab for lab in la if lab in lb and lab in keep]
    inner = [lab for lab in la if lab in lb and lab not in keep]
    left = [lab for lab in la if lab not in lb]
    right = [lab for lab in lb if lab not in la]
    sizes = dict(zip(la, a.shape)) | dict(zip(lb, b.shape))
    out = F.MatMul.apply(_grouped(a, la, [batch, left, inner]), _grouped(b, lb, [batch, inner, right]))
    labels = batch + left + right
    return out.view(*[sizes[lab] for lab in labels]), labels


def _evaluate(operands: list[Tensor], labels: list[list[str]], output: list[str], what: str) -> Tensor:
    """The einsum of labelled operands: diagonals, broadcasting, then pairwise contraction left to right."""
    _numeric(what, *operands)
    pairs = [_diagonal(x, labs, i) for i, (x, labs) in enumerate(zip(operands, labels))]
    labels = [list(labs) for _, labs in pairs]
    operands = _broadcast([x for x, _ in pairs], labels, what)
    result, result_labels = operands[0], labels[0]
    for i in range(1, len(operands)):
        keep = set(output).union(*labels[i + 1 :])
        result, result_labels = _contract(result, result_labels, operands[i], labels[i], keep)
    result, result_labels = _sum_out(result, result_labels, set(output))
    order = [result_labels.index(lab) for lab in output]
    return result.permute(*order) if order != list(range(len(order))) else result


def _sublist_equation(args: tuple[Any, ...]) -> tuple[str, list[Any]]:
    """``einsum(a, [0, 1], b, [1, 2], [0, 2])`` as an equation string and its operands."""

    def spec(sub: Sequence[Any]) -> str:
        return "".join("..." if s is Ellipsis else "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"[s] for s in sub)

    pairs = len(args) // 2
    operands, lhs = list(args[0 : 2 * pairs : 2]), ",".join(spec(s) for s in args[1 : 2 * pairs : 2])
    return (lhs + "->" + spec(args[-1]) if len(args) % 2 else lhs), operands


def einsum(equation: Any, *operands: Any) -> Tensor:
    """``torch.einsum`` (operands one by one, as one list, or sublists): '...', diagonals, sums; contracts left to right."""
    if not isinstance(equation, str):
        equation, ops = _sublist_equation((equation, *operands))
    else:
        ops = list(operands[0]) if len(operands) == 1 and isinstance(operands[0], (list, tuple)) else list(operands)
    if not ops:
        raise ShapeError("einsum(): must provide at least one operand")
    labels, output = _parse(equation, [x.shape for x in ops])
    return _evaluate(ops, labels, output, "einsum()")


def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """``torch.tensordot``: contract a's last ``dims`` dims with b's first, or the lists ``(dims_a, dims_b)``; a's free dims first."""
    if isinstance(dims, int):
        if dims < 0:
            raise ShapeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.dims or dims > b.dims:
            raise ShapeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims} (shapes {a.shape} and {b.shape})")
        dims_a, dims_b = list(range(a.dims - dims, a.dims)), list(range(dims))
    else:
        first, second = dims
        dims_a = [first] if isinstance(first, int) else list(first)
        dims_b = [second] if isinstance(second, int) else list(second)
        if len(dims_a) != len(dims_b):
            raise ShapeError(f"both dimension lists should have same length, got {dims_a} and {dims_b}")
        dims_a = [normalize_dim(d, a.dims) for d in dims_a]
        dims_b = [normalize_dim(d, b.dims) for d in dims_b]
        for listed in (dims_a, dims_b):
            for j, d in enumerate(listed):
                if d in listed[:j]:
                    raise ShapeError(f"dim {d} appears multiple times in the list of dims {listed}")
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db] and 1 not in (a.shape[da], b.shape[db]):
            raise ShapeError(
                f"contracted dimensions need to match, but first has size {a.shape[da]} in dim {da} and second has size "
                f"{b.shape[db]} in dim {db} (shapes {a.shape} and {b.shape})"
            )
    la = [f"a{d}" for d in range(a.dims)]
    lb = [la[dims_a[dims_b.index(d)]] if d in dims_b else f"b{d}" for d in range(b.dims)]
    output = [lab for d, lab in enumerate(la) if d not in dims_a] + [lab for d, lab in enumerate(lb) if d not in dims_b]
    return _evaluate([a, a._operand(b)], [la, lb], output, "tensordot")


class LinalgMethods:
    """Linear-algebra methods of Tensor."""

    matmul = matmul
    mm = mm
    bmm = bmm
    mv = mv
    dot = dot
    vdot = vdot
    outer = outer
    ger = ger


__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "outer", "ger", "einsum", "tensordot"]
