"""``minitorch_accel.autograd.functional``: derivatives of a whole function at a point.

PyTorch's ``torch.autograd.functional``: :func:`vjp` (one backward pass), :func:`jvp`
(forward mode through the *double-backward trick*: ``u -> J^T u`` is linear in ``u``,
so differentiating it with respect to ``u`` along ``v`` gives ``J v``), :func:`jacobian`
(one vjp per output element, a row of ``J`` each), :func:`hessian` (the jacobian of the
gradient), :func:`vhp` and :func:`hvp` (``v^T H`` and ``H v`` without forming ``H``).

``inputs`` is a Tensor or a tuple of Tensors, and ``func`` returns a Tensor or a tuple
of Tensors; results follow the same structure. Gradients with respect to inputs the
output does not depend on are zeros, or an error with ``strict=True``. Results are
detached unless ``create_graph=True``.

Differences from PyTorch: ``vectorize=True`` is accepted and computes the same rows one
by one (there is no ``vmap``), and ``strategy="forward-mode"`` is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..core.backward import run_backward
from ..core.factories import eye, ones_like, zeros, zeros_like
from ..core.tensor import Tensor

Inputs = Tensor | tuple[Tensor, ...]

_STRICT = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
    "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
    "grad_outputs when using the double backward trick to compute forward mode gradients. "
    "This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
    "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
    "{i} in the grad_jacobian. This is not allowed in strict mode as it prevents from using "
    "the double backward trick to replace forward mode AD.",
}


def _as_tuple(value: Any, what: str, fn_name: str) -> tuple[bool, tuple[Tensor, ...]]:
    """``(was a tuple, value as a tuple)``, each entry checked to be a Tensor."""
    is_tuple = isinstance(value, (tuple, list))
    items = tuple(value) if is_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = f"the value at index {i} has" if is_tuple else "the given " + what + " has"
            raise TypeError(
                f"The {what} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                f"but {where} type {type(item)}."
            )
    return is_tuple, items


def _outputs_of(func: Callable[..., Any], inputs: tuple[Tensor, ...], fn_name: str) -> Any:
    """``func(*inputs)`` as ``(was a tuple, tuple of Tensors)``."""
    outputs = func(*inputs)
    is_tuple = isinstance(outputs, (tuple, list))
    for item in outputs if is_tuple else (outputs,):
        if not isinstance(item, Tensor):
            raise TypeError(
                f"The outputs of the user-provided function given to {fn_name} must be either "
                "a Tensor or a tuple of Tensors but the given outputs of the user-provided "
                f"function has type {type(item)}."
            )
    return is_tuple, tuple(outputs) if is_tuple else (outputs,)


def _prepare(inputs: tuple[Tensor, ...], create_graph: bool) -> tuple[Tensor, ...]:
    """Inputs to differentiate with respect to: fresh leaves, or (``create_graph``, for
    inputs that require grad) differentiable copies, so the result stays connected.
    """
    return tuple(
        t.clone() if create_graph and t.requires_grad else t.detach().requires_grad_(True)
        for t in inputs
    )


def _check_v(v: Any, refs: tuple[Tensor, ...], fn_name: str) -> tuple[Tensor, ...]:
    """``v`` as a tuple with one Tensor of the right shape per entry of ``refs``."""
    _, vs = _as_tuple(v, "v", fn_name)
    if len(vs) != len(refs):
        raise RuntimeError(
            f"v is a tuple of invalid length: should be {len(refs)} but got {len(vs)}."
        )
    for i, (a, b) in enumerate(zip(vs, refs, strict=True)):
        if a.shape != b.shape:
            which = "v" if len(vs) == 1 else f"Entry {i} in v"
            raise RuntimeError(f"{which} has invalid size: should be {b.shape} but got {a.shape}.")
    return vs


def _grads(
    outputs: Sequence[Tensor],
    inputs: Sequence[Tensor],
    grad_outputs: Sequence[Tensor | None],
    create_graph: bool,
    strict: bool,
    strict_message: str,
) -> tuple[Tensor, ...]:
    """``sum_k grad_outputs[k] . d outputs[k] / d inputs``: zeros for inputs nothing
    depends on (in strict mode, an error: ``strict_message`` with the input's index).
    """
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs, strict=True) if o.requires_grad]
    found: list[Tensor | None] = [None] * len(inputs)
    if pairs:
        seeds = [ones_like(o) if g is None else g for o, g in pairs]
        captured = run_backward([o for o, _ in pairs], seeds, True, create_graph, capture=inputs)
        assert captured is not None
        found = list(captured)
    result = []
    for i, (t, g) in enumerate(zip(inputs, found, strict=True)):
        if g is None:
            if strict:
                raise RuntimeError(strict_message.format(i=i))
            g = zeros_like(t)
        result.append(g if create_graph else g.detach())
    return tuple(result)


def _check_requires_grad(outputs: tuple[Tensor, ...], strict: bool) -> None:
    if strict:
        for i, out in enumerate(outputs):
            if not out.requires_grad:
                raise RuntimeError(
                    f"Output {i} of the user-provided function does not require gradients. The "
                    "outputs must be computed in a differentiable manner from the input when "
                    "running in strict mode."
                )


def _single(outputs: tuple[Tensor, ...], is_tuple: bool, fn_name: str) -> Tensor:
    """The one-element Tensor that hessian, vhp and hvp need ``func`` to return."""
    if is_tuple or len(outputs) != 1:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single "
            "element"
        )
    return outputs[0]


def _shaped(is_tuple: bool, values: tuple[Any, ...]) -> Any:
    return values if is_tuple else values[0]


def _detached(is_tuple: bool, outputs: tuple[Tensor, ...], create_graph: bool) -> Any:
    return _shaped(is_tuple, outputs if create_graph else tuple(o.detach() for o in outputs))


def vjp(
    func: Callable[..., Any],
    inputs: Inputs,
    v: Inputs | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``: the vector-Jacobian product, one backward pass.

    ``v`` has the shape of ``func``'s output; it may be omitted when the output has one
    element.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.autograd.functional import vjp
    >>> out, g = vjp(lambda x: x * x, mta.tensor([1.0, 2.0]), mta.tensor([1.0, 1.0]))
    >>> g
    tensor([2., 4.])
    """
    in_tuple, xs = _as_tuple(inputs, "inputs", "vjp")
    xs = _prepare(xs, create_graph)
    out_tuple, outs = _outputs_of(func, xs, "vjp")
    _check_requires_grad(outs, strict)
    if v is None:
        if out_tuple or outs[0].numel() != 1:
            raise RuntimeError(
                "The vector v can only be None if the user-provided function returns a single "
                "Tensor with a single element."
            )
        vs: tuple[Tensor | None, ...] = (None,)
    else:
        vs = _check_v(v, outs, "vjp")
    result = _grads(outs, xs, vs, create_graph, strict, _STRICT["back"])
    return _detached(out_tuple, outs, create_graph), _shaped(in_tuple, result)


def jvp(
    func: Callable[..., Any],
    inputs: Inputs,
    v: Inputs | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-backward
    trick (two backward passes: ``g(u) = J^T u`` for a ``u`` that requires grad, then
    the vjp of ``g`` with ``v``), as PyTorch computes it.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.autograd.functional import jvp
    >>> out, t = jvp(lambda x: x * x, mta.tensor([1.0, 2.0]), mta.tensor([1.0, 0.0]))
    >>> t
    tensor([2., 0.])
    """
    in_tuple, xs = _as_tuple(inputs, "inputs", "jvp")
    xs = _prepare(xs, create_graph)
    if v is None:
        if in_tuple or xs[0].numel() != 1:
            raise RuntimeError(
                "The vector v can only be None if the input to the user-provided function is "
                "a single Tensor with a single element."
            )
        vs: tuple[Tensor, ...] = (ones_like(xs[0]),)
    else:
        vs = _check_v(v, xs, "jvp")
    out_tuple, outs = _outputs_of(func, xs, "jvp")
    _check_requires_grad(outs, strict)
    us = tuple(zeros_like(o).requires_grad_(True) for o in outs)
    grad_inputs = _grads(outs, xs, us, True, strict, _STRICT["back"])
    result = _grads(grad_inputs, us, vs, create_graph, strict, _STRICT["back_trick"])
    return _detached(out_tuple, outs, create_graph), _shaped(out_tuple, result)


def jacobian(
    func: Callable[..., Any],
    inputs: Inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of ``func`` at ``inputs``: ``J[i][j]`` of shape
    ``outputs[i].shape + inputs[j].shape``, one vjp per output element.

    A Tensor for one input and one output; a tuple over inputs (or outputs) when one of
    them is a tuple; a tuple of tuples (``[output][input]``) when both are.
    ``vectorize`` is accepted and changes nothing.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.autograd.functional import jacobian
    >>> jacobian(lambda x: x * x, mta.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if strategy != "reverse-mode":
        raise ValueError(
            f'jacobian supports strategy="reverse-mode" only, got {strategy!r} (there is no '
            "forward-mode AD here)"
        )
    in_tuple, xs = _as_tuple(inputs, "inputs", "jacobian")
    xs = _prepare(xs, create_graph)
    out_tuple, outs = _outputs_of(func, xs, "jacobian")
    _check_requires_grad(outs, strict)
    rows: list[tuple[Tensor, ...]] = []
    message = (
        "Output {o} of the user-provided function is independent of input {i}. This is not "
        "allowed in strict mode."
    )
    for i, out in enumerate(outs):
        blocks = [zeros(out.numel(), x.numel(), dtype=x.dtype, device=x.device) for x in xs]
        basis = eye(out.numel(), dtype=out.dtype, device=out.device)
        for k in range(out.numel()):
            seed = basis[k].reshape(out.shape)
            row = _grads((out,), xs, (seed,), create_graph, strict, message.format(o=i, i="{i}"))
            for block, g in zip(blocks, row, strict=True):
                block[k] = g.reshape(-1)
        rows.append(tuple(b.reshape(*out.shape, *x.shape) for b, x in zip(blocks, xs, strict=True)))
    per_output = [_shaped(in_tuple, r) for r in rows]
    return _shaped(out_tuple, tuple(per_output))


def hessian(
    func: Callable[..., Any],
    inputs: Inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of a scalar ``func``: the jacobian of its gradient. ``H[i][j]`` has
    shape ``inputs[i].shape + inputs[j].shape``; a Tensor for one input.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.autograd.functional import hessian
    >>> hessian(lambda x: (x ** 3).sum(), mta.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    in_tuple, xs = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*args: Tensor) -> tuple[Tensor, ...]:
        out_tuple, outs = _outputs_of(func, args, "hessian")
        out = _single(outs, out_tuple, "hessian")
        _check_requires_grad(outs, strict)
        return _grads((out,), args, (None,), True, strict, _STRICT["back"])

    found = jacobian(gradient, xs, create_graph, strict, vectorize, outer_jacobian_strategy)
    return found[0][0] if not in_tuple else found


def vhp(
    func: Callable[..., Any],
    inputs: Inputs,
    v: Inputs | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Tensor, Any]:
    """``(func(inputs), v^T H)`` for a scalar ``func``: two backward passes, no ``H``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.autograd.functional import vhp
    >>> vhp(lambda x: (x ** 3).sum(), mta.tensor([1.0, 2.0]), mta.tensor([1.0, 1.0]))[1]
    tensor([ 6., 12.])
    """
    in_tuple, xs, out, vs = _second_order_setup(func, inputs, v, create_graph, strict, "vhp")
    jac = _grads((out,), xs, (None,), True, strict, _STRICT["back"])
    result = _grads(jac, xs, vs, create_graph, strict, _STRICT["double_back"])
    return (out if create_graph else out.detach()), _shaped(in_tuple, result)


def hvp(
    func: Callable[..., Any],
    inputs: Inputs,
    v: Inputs | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Tensor, Any]:
    """``(func(inputs), H v)`` for a scalar ``func``, by the double-backward trick (as
    PyTorch): the vjp of ``u -> u^T H`` along ``v``. Equal to :func:`vhp` when ``H`` is
    symmetric (twice continuously differentiable ``func``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.autograd.functional import hvp
    >>> hvp(lambda x: (x ** 3).sum(), mta.tensor([1.0, 2.0]), mta.tensor([1.0, 1.0]))[1]
    tensor([ 6., 12.])
    """
    in_tuple, xs, out, vs = _second_order_setup(func, inputs, v, create_graph, strict, "hvp")
    jac = _grads((out,), xs, (None,), True, strict, _STRICT["back"])
    us = tuple(zeros_like(x).requires_grad_(True) for x in xs)
    double_back = _grads(jac, xs, us, True, strict, _STRICT["double_back"])
    result = _grads(double_back, us, vs, create_graph, strict, _STRICT["double_back_trick"])
    return (out if create_graph else out.detach()), _shaped(in_tuple, result)


def _second_order_setup(
    func: Callable[..., Any],
    inputs: Inputs,
    v: Inputs | None,
    create_graph: bool,
    strict: bool,
    fn_name: str,
) -> tuple[bool, tuple[Tensor, ...], Tensor, tuple[Tensor, ...]]:
    """The prepared inputs, the scalar output and ``v`` of :func:`vhp` and :func:`hvp`."""
    in_tuple, xs = _as_tuple(inputs, "inputs", fn_name)
    xs = _prepare(xs, create_graph)
    if v is None:
        if in_tuple or xs[0].numel() != 1:
            raise RuntimeError(
                "The vector v can only be None if the input to the user-provided function is "
                "a single Tensor with a single element."
            )
        vs: tuple[Tensor, ...] = (ones_like(xs[0]),)
    else:
        vs = _check_v(v, xs, fn_name)
    out_tuple, outs = _outputs_of(func, xs, fn_name)
    out = _single(outs, out_tuple, fn_name)
    _check_requires_grad(outs, strict)
    return in_tuple, xs, out, vs
