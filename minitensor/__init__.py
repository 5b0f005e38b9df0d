"""minitensor: a readable, fast tensor engine with autodiff and pluggable backends."""

from . import operators
from .autodiff import Context, Function, is_grad_enabled, no_grad
from .backends import backend_names, default_backend_name, get_backend, set_default_backend
from .creation import (
    arange,
    as_dtype,
    from_numpy,
    full,
    generator,
    manual_seed,
    ones,
    ones_like,
    rand,
    randn,
    tensor,
    zeros,
    zeros_like,
)
from .errors import (
    BackendError,
    BackendUnavailableError,
    DTypeError,
    GradientError,
    IndexOutOfRangeError,
    MinitensorError,
    NonContiguousError,
    PermutationError,
    RaggedDataError,
    ShapeError,
)
from .module import Module, Parameter
from .scalar import Scalar
from .tensor import Tensor, matmul
from .tensor_data import TensorData

__all__ = [
    "operators", "Context", "Function", "is_grad_enabled", "no_grad",
    "backend_names", "default_backend_name", "get_backend", "set_default_backend",
    "arange", "as_dtype", "from_numpy", "full", "generator", "manual_seed", "ones", "ones_like", "rand", "randn",
    "tensor", "zeros", "zeros_like",
    "BackendError", "BackendUnavailableError", "DTypeError", "GradientError", "IndexOutOfRangeError",
    "MinitensorError", "NonContiguousError", "PermutationError", "RaggedDataError", "ShapeError",
    "Module", "Parameter", "Scalar", "Tensor", "matmul", "TensorData", "nn", "optim", "save", "load",
]

from . import nn, optim  # noqa: E402 - after the core they build on
from .checkpoint import load, save  # noqa: E402
