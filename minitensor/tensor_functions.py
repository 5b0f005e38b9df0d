"""Differentiable tensor ops as Function classes, in one namespace (``from . import tensor_functions as F``).

``forward`` computes with the raw, history-free kernel calls on Tensor (``_map``, ``_zip``,
``_reduce``, ``_matmul``, ``_view_of``). ``backward`` normally runs with autodiff off; under
``create_graph=True`` it runs with grad mode on, and every Function here marked ``higher_order`` then
builds its gradient from differentiable ops (a raw fast formula is kept for the ordinary path where
the two differ), so second derivatives work. Neither knows which backend executes it.

The classes live by kind: the base class ``TensorFunction`` and ``_AUDITED_MODULES`` (functions_base.py),
element-wise ops and where (functions_elementwise.py), reductions, softmax and matmul (functions_reduce.py), and views,
gather and copies (functions_views.py).
"""

# ruff: noqa: F401 - this module re-exports the Function classes
from .functions_base import _AUDITED_MODULES, TensorFunction
from .functions_elementwise import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Abs,
    Add,
    Compare,
    Div,
    Exp,
    Inv,
    Log,
    Mul,
    Neg,
    Sigmoid,
    Sqrt,
    Sub,
    Tanh,
    UnaryFunction,
    Where,
)
from .functions_reduce import FusedSoftmax, MatMul, Max, Sum
from .functions_views import Cast, Contiguous, Expand, Gather, Permute, PutView, ScatterAddInto, Slice, TakeView, ToBackend
