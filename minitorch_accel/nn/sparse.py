"""``Embedding``: a lookup table of learned vectors, one row per index."""

from __future__ import annotations

from ..backends import DeviceLike
from ..core import factories
from ..core.convert import DTypeLike
from ..core.grad_mode import no_grad
from ..core.tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class Embedding(Module):
    """Map each integer index to a learned vector: ``weight[index]``.

    ``weight`` (num_embeddings, embedding_dim) starts as N(0, 1) samples, as PyTorch's;
    the row ``padding_idx`` starts at zero and is never trained.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.Embedding(10, 3)(mta.tensor([[1, 2, 1]])).shape
    (1, 3, 3)
    """

    weight: Parameter

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(
                    f"Embedding: padding_idx {padding_idx} is outside [0, {num_embeddings})"
                )
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = padding_idx
        shape = (num_embeddings, embedding_dim)
        self.weight = Parameter(factories.empty(*shape, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw new N(0, 1) rows (the padding row zero)."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.embedding`."""
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        return text + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")
