"""Matrix and vector products under PyTorch's names: ``mm``, ``bmm``, ``mv``, ``dot``,
``inner``, ``outer``, the ``add*`` family, ``kron``, ``tensordot``, ``cross``,
``block_diag``, ``cartesian_prod``, ``combinations``, ``cdist``, ``multi_dot``.

Each is a composition of :func:`~minitorch_accel.ops.matmul.matmul` (so the backend's
fast GEMM runs), elementwise ops and shape ops: the gradients of every order come from
those. What each adds is PyTorch's shape rules, checked up front with an error naming
the shapes (``mm`` takes matrices only, ``dot`` two vectors of one size: no
broadcasting where PyTorch has none).

The ``add*`` ops compute ``beta * input + alpha * (product)`` as BLAS does: a factor of 0
drops its term without reading it, so NaN and infinity in it do not reach the result
(:class:`Scaled`); the gradients are still multiplied by the factor, as in PyTorch.
"""

from __future__ import annotations

import builtins
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.factories import zeros
from ..core.function import Function
from ..core.tensor import Tensor
from .index import index_select
from .matmul import matmul
from .operands import result_type
from .scan import VectorNorm
from .shape import cat, normalize_dim, stack

Number = builtins.float | int


class Scaled(Function):
    """``factor * a``, where a factor of 0 gives zeros even where ``a`` is NaN or
    infinite (BLAS's ``beta = 0``); the gradient is ``factor * grad`` (so NaN where the
    incoming gradient is infinite and the factor 0, as PyTorch).
    """

    saves_inputs = False

    def forward(self, a: Any, *, factor: Number) -> Any:
        self.factor = factor
        if factor == 0:
            return self.xp.zeros_like(a)
        return a * a.dtype.type(factor)

    def backward(self, grad: Tensor) -> Tensor:
        return grad * self.factor


def _scaled(a: Tensor, factor: Number) -> Tensor:
    return a if factor == 1 else Scaled.apply(a, factor=factor)


def _shape(t: Tensor) -> str:
    return "x".join(str(s) for s in t.shape) or "scalar"


def _check_tensors(op: str, *tensors: Any) -> None:
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected Tensors, got {type(t).__name__}")


def _check_product(op: str, *tensors: Tensor) -> None:
    """The dtype rules of PyTorch's BLAS products: one dtype, not bool."""
    _check_tensors(op, *tensors)
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) > 1:
        raise TypeError(
            f"{op}: expected all tensors to have the same dtype, got "
            f"{', '.join(str(t.dtype) for t in tensors)}; convert with .to(dtype=...)"
        )
    if tensors[0].dtype == np.bool_:
        raise TypeError(f"{op}: not implemented for bool tensors; convert with .int() or .float()")


def _check_factors(op: str, input: Tensor, beta: Number, alpha: Number) -> None:
    if input.dtype.kind in "iub" and not all(
        isinstance(f, (int, np.integer)) for f in (beta, alpha)
    ):
        raise TypeError(
            f"{op}: beta and alpha must be integers for integer tensors, got {beta!r} "
            f"and {alpha!r} (this differs from PyTorch, which truncates them)"
        )


def _check_ndim(op: str, name: str, t: Tensor, ndim: int) -> None:
    if t.ndim != ndim:
        kind = {1: "a vector (1-D)", 2: "a matrix (2-D)", 3: "a batch of matrices (3-D)"}[ndim]
        raise ValueError(f"{op}: {name} must be {kind}, got shape {tuple(t.shape)}")


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """The product of two matrices, ``(n, m) @ (m, p) -> (n, p)``, as ``torch.mm``
    (no broadcasting, no vectors: see :func:`~minitorch_accel.matmul` for those).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.mm(mta.tensor([[1.0, 2.0]]), mta.tensor([[3.0], [4.0]]))
    tensor([[11.]])
    """
    _check_product("mm", input, mat2)
    _check_ndim("mm", "input", input, 2)
    _check_ndim("mm", "mat2", mat2, 2)
    if input.shape[1] != mat2.shape[0]:
        raise ValueError(
            f"mm: shapes cannot be multiplied ({_shape(input)} and {_shape(mat2)}): "
            f"{input.shape[1]} != {mat2.shape[0]}"
        )
    return matmul(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product ``(b, n, m) @ (b, m, p) -> (b, n, p)``, as ``torch.bmm``
    (one batch size, no broadcasting).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.bmm(mta.ones(2, 1, 3), mta.ones(2, 3, 1)).shape
    (2, 1, 1)
    """
    _check_product("bmm", input, mat2)
    _check_ndim("bmm", "input", input, 3)
    _check_ndim("bmm", "mat2", mat2, 3)
    b, _, m = input.shape
    if mat2.shape[:2] != (b, m):
        raise ValueError(
            f"bmm: expected mat2 of shape ({b}, {m}, p) for input of shape "
            f"{tuple(input.shape)}, got {tuple(mat2.shape)}"
        )
    return matmul(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix times vector, ``(n, m) @ (m,) -> (n,)``, as ``torch.mv``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.mv(mta.tensor([[1.0, 2.0], [3.0, 4.0]]), mta.tensor([1.0, 1.0]))
    tensor([3., 7.])
    """
    _check_product("mv", input, vec)
    _check_ndim("mv", "input", input, 2)
    _check_ndim("mv", "vec", vec, 1)
    if input.shape[1] != vec.shape[0]:
        raise ValueError(
            f"mv: size mismatch, input {_shape(input)} and vec {_shape(vec)}: "
            f"{input.shape[1]} != {vec.shape[0]}"
        )
    return matmul(input, vec)


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """The dot product of two vectors of one size (a 0-d tensor), as ``torch.dot``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.dot(mta.tensor([1.0, 2.0]), mta.tensor([3.0, 4.0]))
    tensor(11.)
    """
    _check_product("dot", input, tensor)
    _check_ndim("dot", "input", input, 1)
    _check_ndim("dot", "tensor", tensor, 1)
    if input.shape != tensor.shape:
        raise ValueError(
            f"dot: expected two vectors of one size, got shapes {tuple(input.shape)} "
            f"and {tuple(tensor.shape)}"
        )
    return matmul(input, tensor)


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """``dot`` with the first vector conjugated, as ``torch.vdot``: for the real
    tensors of this package, :func:`dot` itself.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.vdot(mta.tensor([1.0, 2.0]), mta.tensor([3.0, 4.0]))
    tensor(11.)
    """
    return dot(input, other)


def inner(input: Tensor, other: Tensor) -> Tensor:
    """The sum of products over the last dim of each, as ``torch.inner``: the result's
    shape is ``input.shape[:-1] + other.shape[:-1]``; a 0-d operand multiplies.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.inner(mta.tensor([[1.0, 2.0], [3.0, 4.0]]), mta.tensor([1.0, 1.0]))
    tensor([3., 7.])
    """
    _check_product("inner", input, other)
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise ValueError(
            f"inner: the last dims of {tuple(input.shape)} and {tuple(other.shape)} differ"
        )
    return tensordot(input, other, ([-1], [-1]))


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two vectors, ``out[i, j] = input[i] * vec2[j]``, as
    ``torch.outer`` (dtypes promote).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.outer(mta.tensor([1.0, 2.0]), mta.tensor([1.0, 10.0]))
    tensor([[ 1., 10.],
            [ 2., 20.]])
    """
    _check_tensors("outer", input, vec2)
    _check_ndim("outer", "input", input, 1)
    _check_ndim("outer", "vec2", vec2, 1)
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


def ger(input: Tensor, vec2: Tensor) -> Tensor:
    """The old name of :func:`outer`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.ger(mta.tensor([1.0, 2.0]), mta.tensor([3.0])).tolist()
    [[3.0], [6.0]]
    """
    return outer(input, vec2)


def _add_product(op: str, input: Tensor, product: Tensor, beta: Number, alpha: Number) -> Tensor:
    _check_factors(op, input, beta, alpha)
    if input.dtype != product.dtype:
        raise TypeError(
            f"{op}: input and the matrices must have the same dtype, got {input.dtype} "
            f"and {product.dtype}"
        )
    try:
        fits = tuple(np.broadcast_shapes(input.shape, product.shape)) == tuple(product.shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"{op}: input of shape {tuple(input.shape)} does not broadcast to the "
            f"product's shape {tuple(product.shape)}"
        )
    return _scaled(input, beta) + _scaled(product, alpha)


def addmm(
    input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Number = 1, alpha: Number = 1
) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``, as ``torch.addmm``; ``input``
    broadcasts to ``(n, p)``; ``beta = 0`` ignores ``input`` (NaN included).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.addmm(mta.ones(2, 2), mta.eye(2), mta.eye(2), beta=0.5, alpha=2)
    tensor([[2.5, 0.5],
            [0.5, 2.5]])
    """
    return _add_product("addmm", input, mm(mat1, mat2), beta, alpha)


def addmv(
    input: Tensor, mat: Tensor, vec: Tensor, *, beta: Number = 1, alpha: Number = 1
) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``, as ``torch.addmv``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.addmv(mta.ones(2), mta.eye(2), mta.tensor([1.0, 2.0]))
    tensor([2., 3.])
    """
    return _add_product("addmv", input, mv(mat, vec), beta, alpha)


def addr(
    input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Number = 1, alpha: Number = 1
) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``, as ``torch.addr``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.addr(mta.zeros(2, 2), mta.tensor([1.0, 2.0]), mta.tensor([1.0, 1.0])).tolist()
    [[1.0, 1.0], [2.0, 2.0]]
    """
    _check_product("addr", vec1, vec2)
    return _add_product("addr", input, outer(vec1, vec2), beta, alpha)


def baddbmm(
    input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Number = 1, alpha: Number = 1
) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)``, as ``torch.baddbmm``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.baddbmm(mta.ones(2, 1, 1), mta.ones(2, 1, 3), mta.ones(2, 3, 1)).flatten()
    tensor([4., 4.])
    """
    return _add_product("baddbmm", input, bmm(batch1, batch2), beta, alpha)


def addbmm(
    input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Number = 1, alpha: Number = 1
) -> Tensor:
    """``beta * input + alpha * sum_i batch1[i] @ batch2[i]``, as ``torch.addbmm``:
    the batch is summed, here by one GEMM of ``(n, b*m) @ (b*m, p)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.addbmm(mta.zeros(1, 1), mta.ones(2, 1, 3), mta.ones(2, 3, 1))
    tensor([[6.]])
    """
    _check_product("addbmm", batch1, batch2)
    _check_ndim("addbmm", "batch1", batch1, 3)
    _check_ndim("addbmm", "batch2", batch2, 3)
    b, n, m = batch1.shape
    if batch2.shape[:2] != (b, m):
        raise ValueError(
            f"addbmm: expected batch2 of shape ({b}, {m}, p) for batch1 of shape "
            f"{tuple(batch1.shape)}, got {tuple(batch2.shape)}"
        )
    summed = matmul(batch1.permute(1, 0, 2).reshape(n, b * m), batch2.reshape(b * m, -1))
    return _add_product("addbmm", input, summed, beta, alpha)


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product, as ``torch.kron``.

    ``out[i*q + k, j*r + l] = input[i, j] * other[k, l]`` (for any number of dims; the
    shorter shape is padded with leading 1s; dtypes promote).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.kron(mta.eye(2), mta.tensor([[1.0, 2.0]]))
    tensor([[1., 2., 0., 0.],
            [0., 0., 1., 2.]])
    """
    _check_tensors("kron", input, other)
    ndim = builtins.max(input.ndim, other.ndim)
    a_shape = (1,) * (ndim - input.ndim) + tuple(input.shape)
    b_shape = (1,) * (ndim - other.ndim) + tuple(other.shape)
    # interleave: a as (a0, 1, a1, 1, ...), b as (1, b0, 1, b1, ...)
    a = input.reshape(*[s for d in a_shape for s in (d, 1)])
    b = other.reshape(*[s for d in b_shape for s in (1, d)])
    return (a * b).reshape(*[x * y for x, y in zip(a_shape, b_shape, strict=True)])


def _as_list(dims: Any) -> list[int]:
    return [int(dims)] if isinstance(dims, (int, np.integer)) else [int(d) for d in dims]


def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """Sum of products over the given dims, as ``torch.tensordot``: ``dims=k`` pairs
    the last ``k`` dims of ``a`` with the first ``k`` of ``b``; ``dims=(dims_a,
    dims_b)`` names them. One GEMM after moving the summed dims together.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensordot(mta.ones(2, 3, 4), mta.ones(3, 4, 5)).shape
    (2, 5)
    >>> mta.tensordot(mta.ones(3, 2), mta.ones(3, 5), dims=([0], [0])).shape
    (2, 5)
    """
    _check_product("tensordot", a, b)
    if isinstance(dims, (int, np.integer)):
        if dims < 0 or dims > builtins.min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: dims must be in [0, {builtins.min(a.ndim, b.ndim)}]")
        dims_a, dims_b = list(range(a.ndim - int(dims), a.ndim)), list(range(int(dims)))
    else:
        try:
            first, second = dims
        except (TypeError, ValueError):
            raise TypeError(
                f"tensordot: dims must be an int or a pair of lists of dims, got {dims!r}"
            ) from None
        dims_a = [normalize_dim(d, a.ndim, "tensordot") for d in _as_list(first)]
        dims_b = [normalize_dim(d, b.ndim, "tensordot") for d in _as_list(second)]
    if len(dims_a) != len(dims_b):
        raise ValueError(f"tensordot: both lists of dims must have one length, got {dims!r}")
    for da, db in zip(dims_a, dims_b, strict=True):
        if a.shape[da] != b.shape[db]:
            raise ValueError(
                f"tensordot: contracted dims differ in size: dim {da} of {tuple(a.shape)} "
                f"and dim {db} of {tuple(b.shape)}"
            )
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    k = int(np.prod([a.shape[d] for d in dims_a]))
    left = a.permute(*free_a, *dims_a).reshape(-1, k)
    right = b.permute(*dims_b, *free_b).reshape(k, -1)
    shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    return matmul(left, right).reshape(*shape)


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim``, as ``torch.cross``; ``dim=None``
    takes the first dim of size 3 (PyTorch's deprecated default; pass ``dim``, or use
    :func:`minitorch_accel.linalg.cross`, whose default is -1). Shapes broadcast.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.cross(mta.tensor([1.0, 0.0, 0.0]), mta.tensor([0.0, 1.0, 0.0]), dim=0)
    tensor([0., 0., 1.])
    """
    _check_product("cross", input, other)
    try:
        shape = np.broadcast_shapes(input.shape, other.shape)
    except ValueError:
        raise ValueError(
            f"cross: shapes {tuple(input.shape)} and {tuple(other.shape)} do not broadcast"
        ) from None
    if input.ndim != other.ndim:
        raise ValueError(
            f"cross: inputs must have the same number of dims, got {tuple(input.shape)} "
            f"and {tuple(other.shape)}"
        )
    if dim is None:
        sizes = [i for i, size in enumerate(shape) if size == 3]
        if not sizes:
            raise ValueError(f"cross: no dim of size 3 in {tuple(input.shape)}")
        dim = sizes[0]
    d = normalize_dim(dim, input.ndim, "cross")
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise ValueError(
            f"cross: dim {dim} must have length 3, got {input.shape[d]} and {other.shape[d]}"
        )

    def part(t: Tensor, k: int) -> Tensor:
        return t[(slice(None),) * d + (slice(k, k + 1),)]

    a = [part(input, k) for k in range(3)]
    b = [part(other, k) for k in range(3)]
    return cat(
        [a[(k + 1) % 3] * b[(k + 2) % 3] - a[(k + 2) % 3] * b[(k + 1) % 3] for k in range(3)], dim=d
    )


def block_diag(*tensors: Tensor) -> Tensor:
    """The matrices on the diagonal of one larger matrix, zeros elsewhere, as
    ``torch.block_diag`` (a 0-d tensor is a 1x1 block, a vector one row; dtypes promote).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.block_diag(mta.tensor([[1.0]]), mta.tensor([2.0, 3.0]))
    tensor([[1., 0., 0.],
            [0., 2., 3.]])
    """
    _check_tensors("block_diag", *tensors)
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise ValueError(
                f"block_diag: inputs must have 2 or fewer dims, input {i} has shape "
                f"{tuple(t.shape)}"
            )
    if not tensors:
        return zeros(1, 0)
    dtype = result_type(*[t.reshape(-1) for t in tensors])
    blocks = [t.reshape(1, -1) if t.ndim < 2 else t for t in tensors]
    width = builtins.sum(t.shape[1] for t in blocks)
    rows, left = [], 0
    device = tensors[0].device
    for t in blocks:
        h, w = t.shape
        before = zeros(h, left, dtype=dtype, device=device)
        after = zeros(h, width - left - w, dtype=dtype, device=device)
        rows.append(cat([before, t.to(dtype=dtype), after], dim=1))
        left += w
    return cat(rows, dim=0)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every tuple of one element from each vector, in row-major order, as
    ``torch.cartesian_prod``: shape ``(N1 * N2 * ..., k)``; one vector is returned as is.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.cartesian_prod(mta.tensor([1, 2]), mta.tensor([3, 4])).tolist()
    [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    _check_tensors("cartesian_prod", *tensors)
    if not tensors:
        raise ValueError("cartesian_prod: expects at least one tensor")
    for i, t in enumerate(tensors):
        _check_ndim("cartesian_prod", f"input {i}", t, 1)
    if len({t.dtype for t in tensors}) > 1:
        raise TypeError("cartesian_prod: expects all tensors to have the same dtype")
    if len(tensors) == 1:
        return tensors[0]
    sizes = [t.shape[0] for t in tensors]
    columns = []
    for i, t in enumerate(tensors):
        shape = [1] * len(tensors)
        shape[i] = sizes[i]
        columns.append(t.reshape(*shape).expand(*sizes).reshape(-1))
    return stack(columns, dim=1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of a vector's elements, one per row, as
    ``torch.combinations`` (``itertools.combinations`` order; with
    ``with_replacement``, ``combinations_with_replacement``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.combinations(mta.tensor([1, 2, 3])).tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    _check_tensors("combinations", input)
    _check_ndim("combinations", "input", input, 1)
    if r < 0:
        raise ValueError(f"combinations: r must be >= 0, got {r}")
    if r == 0:
        return input[:0]
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = np.array(list(pick(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    chosen = index_select(input, 0, Tensor._from_data(index.reshape(-1), device=input.device))
    return chosen.reshape(-1, r)


def cdist(
    x1: Tensor, x2: Tensor, p: builtins.float = 2.0, compute_mode: str | None = None
) -> Tensor:
    """The ``p``-norm distance between each row of ``x1`` ``(..., P, M)`` and each row
    of ``x2`` ``(..., R, M)``: shape ``(..., P, R)``, batch dims broadcast, as
    ``torch.cdist``.

    Always computed exactly, as ``||x1_i - x2_j||_p`` (PyTorch's
    ``compute_mode='donot_use_mm_for_euclid_dist'``); PyTorch's default switches to a
    matrix-product formula for ``p = 2`` past 25 rows, which rounds differently.
    ``compute_mode`` is accepted and ignored. At zero distance the gradient is 0.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.cdist(mta.tensor([[0.0, 0.0]]), mta.tensor([[3.0, 4.0], [0.0, 1.0]]))
    tensor([[5., 1.]])
    """
    _check_tensors("cdist", x1, x2)
    for name, t in (("x1", x1), ("x2", x2)):
        if t.dtype.kind != "f":
            raise TypeError(f"cdist: only floating-point dtypes are supported, {name} is {t.dtype}")
        if t.ndim < 2:
            raise ValueError(f"cdist: {name} must have at least 2 dims, got {tuple(t.shape)}")
    if x1.dtype != x2.dtype:
        raise TypeError(f"cdist: x1 and x2 must have one dtype, got {x1.dtype} and {x2.dtype}")
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError(
            f"cdist: x1 {tuple(x1.shape)} and x2 {tuple(x2.shape)} must have the same "
            "number of columns"
        )
    if p < 0:
        raise ValueError(f"cdist: p must be >= 0, got {p}")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)  # (..., P, R, M)
    return VectorNorm.apply(diff, p=builtins.float(p), dims=(diff.ndim - 1,), keepdim=False)


def _chain_order(shapes: Sequence[tuple[int, int]]) -> list[list[int]]:
    """The split of the cheapest product of matrices of these shapes (the textbook
    dynamic program): ``split[i][j]`` is where ``A_i ... A_j`` divides.
    """
    n = len(shapes)
    dims = [shapes[0][0]] + [s[1] for s in shapes]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j], split[i][j] = builtins.min(
                (cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1], k)
                for k in range(i, j)
            )
    return split


def _as_matrices(tensors: list[Tensor]) -> list[Tensor]:
    """The chain of :func:`multi_dot` as matrices (a first or last vector as a row or
    a column), checked.
    """
    mats = list(tensors)
    if mats[0].ndim == 1:
        mats[0] = mats[0].reshape(1, -1)
    if mats[-1].ndim == 1:
        mats[-1] = mats[-1].reshape(-1, 1)
    for i, t in enumerate(mats):
        if t.ndim != 2:
            raise ValueError(
                f"multi_dot: tensor {i} must be 2-D (the first and last may be 1-D), got "
                f"shape {tuple(tensors[i].shape)}"
            )
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise ValueError(
                f"multi_dot: tensors {i} and {i + 1} cannot be multiplied "
                f"({_shape(mats[i])} and {_shape(mats[i + 1])})"
            )
    return mats


def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """The product of a chain of matrices, multiplied in the cheapest order, as
    ``torch.linalg.multi_dot``: the first may be a row vector (1-D) and the last a
    column vector (1-D); the others are 2-D.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.linalg.multi_dot([mta.ones(3), mta.ones(3, 4), mta.ones(4)])
    tensor(12.)
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise ValueError(f"multi_dot: expected at least 2 tensors, got {len(tensors)}")
    _check_product("multi_dot", *tensors)
    mats = _as_matrices(tensors)
    split = _chain_order([tuple(t.shape) for t in mats])  # type: ignore[misc]

    def product(i: int, j: int) -> Tensor:
        if i == j:
            return mats[i]
        k = split[i][j]
        return matmul(product(i, k), product(k + 1, j))

    out = product(0, len(mats) - 1)
    if tensors[0].ndim == 1:
        out = out.squeeze(0)
    if tensors[-1].ndim == 1:
        out = out.squeeze(-1)
    return out


def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of two or more matrices, as the deprecated ``torch.chain_matmul``
    (:func:`multi_dot` with 2-D inputs only; one matrix is returned as is).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.chain_matmul(mta.eye(2), mta.ones(2, 3)).shape
    (2, 3)
    """
    _check_tensors("chain_matmul", *matrices)
    for i, t in enumerate(matrices):
        _check_ndim("chain_matmul", f"matrix {i}", t, 2)
    if len(matrices) == 1:
        return matrices[0]
    return multi_dot(matrices)


__all__ = [
    "addbmm",
    "addmm",
    "addmv",
    "addr",
    "baddbmm",
    "block_diag",
    "bmm",
    "cartesian_prod",
    "cdist",
    "chain_matmul",
    "combinations",
    "cross",
    "dot",
    "ger",
    "inner",
    "kron",
    "mm",
    "multi_dot",
    "mv",
    "outer",
    "tensordot",
    "vdot",
]
