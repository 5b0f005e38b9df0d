"""PyTorch's ``torch.func``: function transforms over minitensor's tape autodiff.

``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd`` and ``hessian`` differentiate a function of
(nested tuples, lists and dicts of) tensors; ``vmap`` maps one over a batch dim; ``functional_call`` runs a Module
with other parameters and buffers.

How the transforms compose without functorch's levels: each one differentiates with respect to fresh copies of its
inputs (a detached leaf, or a view when the input already requires grad) with ``create_graph=True``, then detaches
what it returns unless the function's graph reaches a tensor that requires grad from outside (an input of an
enclosing transform, a captured weight): so ``jacrev(jacrev(f))``, ``grad(grad(f))`` and ``grad`` mixed with ordinary
autograd differentiate through, while a top-level call returns plain tensors, as PyTorch's does.
``jvp`` and ``jacfwd`` run in reverse mode (``jvp`` by the double-backward trick), with the same results.
"""

from .functional_call import functional_call
from .transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp
from .vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "vjp", "vmap"]
