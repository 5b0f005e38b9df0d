"""Parameters as one flat vector and back (``torch.nn.utils.convert_parameters``)."""

from __future__ import annotations

from collections.abc import Iterable

from ...autodiff import no_grad
from ...errors import ShapeError
from ...tensor import Tensor
from ...tensor_join import cat

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def tensor_list(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    """``parameters`` (one tensor or an iterable of them) as a list; TypeError for anything else."""
    if isinstance(parameters, Tensor):
        return [parameters]
    out = list(parameters)
    for p in out:
        if not isinstance(p, Tensor):
            raise TypeError(f"expected Tensors (model.parameters()), got {type(p).__name__}")
    return out


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated into one 1-D tensor (differentiable, like ``torch.cat``)."""
    return cat([p.reshape(-1) for p in tensor_list(parameters)])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into the parameters, in place (the inverse of
    :func:`parameters_to_vector`); ``vec`` must have exactly as many elements as the parameters together."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected a Tensor, but got: {type(vec).__name__}")
    params = tensor_list(parameters)
    total = sum(p.numel() for p in params)
    if vec.dims != 1 or vec.numel() != total:
        raise ShapeError(f"vector_to_parameters: vec of shape {vec.shape} does not hold the parameters' {total} elements")
    start = 0
    with no_grad():
        for p in params:
            n = p.numel()
            p.copy_(vec[start : start + n].reshape(*p.shape))
            start += n
