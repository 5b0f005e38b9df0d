"""PyTorch's ``new_*`` factories (the ``FactoryMethods`` mixin): ``new_tensor new_full new_zeros new_ones new_empty``.

Each makes a new leaf whose dtype and backend default to the tensor it is called on (``device=`` is accepted as
the PyTorch spelling of ``backend=``, as in creation.py). No data or history is shared with that tensor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from .backends import get_backend
from .errors import DTypeError
from .tensor_data import size_arg

if TYPE_CHECKING:
    from .tensor import Tensor


class FactoryMethods:
    """New tensors with this tensor's dtype and backend by default (methods of Tensor)."""

    def new_tensor(self: Any, data: Any, *, dtype: Any = None, backend: Any = None, device: Any = None,
                   requires_grad: bool = False) -> Tensor:
        """A new leaf holding a copy of ``data`` (a number, nested lists, an array or a tensor) of this tensor's dtype
        and backend unless given (as PyTorch: ``data``'s own dtype is not kept)."""
        resolved = self.dtype if dtype is None else dtypes.as_dtype(dtype)
        if isinstance(data, FactoryMethods):  # a Tensor
            data = data.to_numpy()  # type: ignore[attr-defined]
        try:
            array = np.array(data).astype(resolved)
        except (TypeError, ValueError, OverflowError) as error:
            raise DTypeError(f"new_tensor(): cannot make a {resolved} tensor from {type(data).__name__} data: {error}") from error
        out = self._lift(array, resolved)  # a fresh tensor on this backend (arrays are never cached)
        if backend is not None or device is not None:
            out = out._to_backend(get_backend(backend if backend is not None else device))
        return out.requires_grad_(True) if requires_grad else out

    def new_full(self: Any, size: Sequence[int], fill_value: Any, *, dtype: Any = None, backend: Any = None,
                 device: Any = None, requires_grad: bool = False) -> Tensor:
        """A tensor of ``size`` filled with ``fill_value``, of this tensor's dtype and backend by default."""
        if isinstance(fill_value, FactoryMethods):
            fill_value = fill_value.item()  # type: ignore[attr-defined]
        return self.new_tensor(np.full(size_arg((size,)), fill_value), dtype=dtype, backend=backend, device=device,
                               requires_grad=requires_grad)

    def new_zeros(self: Any, *size: Any, dtype: Any = None, backend: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
        """A tensor of ``size`` (ints or one sequence) filled with 0, of this tensor's dtype and backend by default."""
        return self.new_full(size_arg(size), 0, dtype=dtype, backend=backend, device=device, requires_grad=requires_grad)

    def new_ones(self: Any, *size: Any, dtype: Any = None, backend: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Tensor:
        """A tensor of ``size`` (ints or one sequence) filled with 1, of this tensor's dtype and backend by default."""
        return self.new_full(size_arg(size), 1, dtype=dtype, backend=backend, device=device, requires_grad=requires_grad)

    def new_empty(self: Any, *size: Any, dtype: Any = None, backend: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
        """A tensor of ``size`` (ints or one sequence) with unspecified contents, of this tensor's dtype and backend."""
        return self.new_zeros(*size, dtype=dtype, backend=backend, device=device, requires_grad=requires_grad)

