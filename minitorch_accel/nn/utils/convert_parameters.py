"""Parameters as one flat vector and back, as ``torch.nn.utils.convert_parameters``."""

from __future__ import annotations

from collections.abc import Iterable

from ...backends import Device
from ...core.tensor import Tensor
from ...ops.shape import cat


def _check_same_device(param: Tensor, device: Device | None) -> Device:
    """The device of the parameters so far; raise if ``param`` lives elsewhere."""
    if device is not None and param.device is not device:
        raise TypeError(
            "Found two parameters on different devices, this is currently not supported."
        )
    return param.device


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All ``parameters`` flattened and joined into one 1-d tensor.

    The result is a new tensor (a copy), differentiable: gradients flow back into each
    parameter. Its dtype is the promoted dtype of the parameters.

    Parameters
    ----------
    parameters : iterable of Tensor
        The parameters of a model (``model.parameters()``), all on one device.

    Returns
    -------
    Tensor
        A vector of ``sum(p.numel() for p in parameters)`` elements.

    Raises
    ------
    TypeError
        When two parameters live on different devices.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> parameters_to_vector([mta.ones(2, 2), mta.zeros(3)])
    tensor([1., 1., 1., 1., 0., 0., 0.])
    """
    device = None
    flat = []
    for param in parameters:
        device = _check_same_device(param, device)
        flat.append(param.reshape(-1))
    return cat(flat)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Give each parameter its slice of ``vec`` (the inverse of
    :func:`parameters_to_vector`).

    As in PyTorch, each parameter's ``.data`` becomes a view of ``vec`` (they share
    storage; the parameters take ``vec``'s dtype), outside autograd, and extra elements
    at the end of ``vec`` are ignored. Unlike PyTorch, a ``vec`` that is not 1-d or too
    short is refused before any parameter changes.

    Parameters
    ----------
    vec : Tensor
        A 1-d tensor of at least ``sum(p.numel() for p in parameters)`` elements.
    parameters : iterable of Tensor
        The parameters to overwrite, all on one device.

    Raises
    ------
    TypeError
        When ``vec`` is not a Tensor, or two parameters live on different devices.
    RuntimeError
        When ``vec`` is not 1-d or has too few elements.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w, b = mta.zeros(2, 2), mta.zeros(1)
    >>> vector_to_parameters(mta.arange(5.0), [w, b])
    >>> w, b
    (tensor([[0., 1.],
            [2., 3.]]), tensor([4.]))
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected a Tensor, but got: {type(vec).__name__}")
    params = list(parameters)
    device = None
    for param in params:
        device = _check_same_device(param, device)
    needed = sum(p.numel() for p in params)
    if vec.ndim != 1 or vec.numel() < needed:
        raise RuntimeError(
            f"vec must be a 1-d tensor of at least {needed} elements (the parameters' "
            f"total), got shape {tuple(vec.shape)}"
        )
    pointer = 0
    for param in params:
        num_param = param.numel()
        param.data = vec[pointer : pointer + num_param].view_as(param).data
        pointer += num_param
