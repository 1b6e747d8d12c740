"""Normalization and smaller layers against PyTorch: ``F.instance_norm`` and
``nn.InstanceNorm1d/2d/3d``, ``nn.BatchNorm3d``, ``F.local_response_norm``,
``F.rms_norm`` / ``nn.RMSNorm``, ``F.glu``, ``F.bilinear`` / ``nn.Bilinear``,
``nn.Softmax2d``, ``F.channel_shuffle``, ``F.embedding_bag`` / ``nn.EmbeddingBag`` and
``F.alpha_dropout`` / ``F.feature_alpha_dropout`` with their layers.

Values and gradients of inputs and parameters in float64 (and float32) against PyTorch
(skipped where it is not installed), the layers built with PyTorch's parameters copied
in; running statistics after several training steps, evaluation mode and
``state_dict`` keys; NumPy references written here for instance norm (with its
running statistics) and local response norm; gradcheck / gradgradcheck in float64;
non-finite inputs and incoming gradients; error messages. Alpha dropout is checked
exactly by construction: with a fixed seed the mask is drawn again from the same
generator, and each element must be the kept or the dropped affine value.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import test_strict_backend as strict_suite
from support.helpers import to_host
from support.strict_backend import registered
from support.strict_xp import StrictArray
from test_strict_backend import F as floats
from test_strict_backend import check

import minitorch_accel as mta
from minitorch_accel import nn
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.nn import functional as F
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

FLOATS = [np.float32, np.float64]
NONFINITE = [-np.inf, -2.0, -0.0, 0.0, 0.5, 2.0, np.inf, np.nan]
TOL = {np.float32: (2e-5, 2e-6), np.float64: (1e-12, 1e-12)}
ALPHA = 1.7580993408473766  # SELU's scale * alpha


def assert_close(ours: Any, theirs: Any, dtype: Any = np.float64) -> None:
    """Equal shapes and values within ``dtype``'s tolerance; NaN where NaN, and
    infinities of the same sign where infinite."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape, f"shape {ours.shape} != {theirs.shape}"
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True)


def against_torch(
    ours: Callable[..., Tensor],
    theirs: Callable[..., Any],
    arrays: list[np.ndarray],
    dtype: Any = np.float64,
    grad_output: float | None = None,
    constants: tuple[np.ndarray, ...] = (),
) -> None:
    """Output and the gradient of every float input of ``ours`` equal PyTorch's
    ``theirs``; ``constants`` (integer arrays) follow the float inputs, without grad."""
    torch = pytest.importorskip("torch")
    cast = [a.astype(dtype) for a in arrays]
    a = [mta.tensor(x, requires_grad=True) for x in cast]
    b = [torch.tensor(x, requires_grad=True) for x in cast]
    ya = ours(*a, *[mta.tensor(c) for c in constants])
    yb = theirs(*b, *[torch.tensor(c) for c in constants])
    assert ya.dtype == yb.detach().numpy().dtype
    assert_close(to_host(ya), yb.detach().numpy(), dtype)
    if grad_output is None:
        g = np.random.default_rng(7).standard_normal(ya.shape).astype(dtype)
    else:
        g = np.full(ya.shape, grad_output, dtype=dtype)
    ya.backward(mta.tensor(g))
    yb.backward(torch.tensor(g))
    for mine, theirs_leaf in zip(a, b, strict=True):
        assert mine.grad is not None and theirs_leaf.grad is not None
        assert_close(to_host(mine.grad), theirs_leaf.grad.numpy(), dtype)


def check_grads(fn: Callable[..., Tensor], *arrays: np.ndarray) -> None:
    """gradcheck and gradgradcheck of ``fn`` in float64 (no PyTorch involved)."""
    leaves = [mta.tensor(a, dtype=mta.float64, requires_grad=True) for a in arrays]
    assert gradcheck(fn, leaves)
    assert gradgradcheck(fn, leaves)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


# ----------------------------------------------------------------------------- instance norm


def instance_norm_ref(
    x: np.ndarray, w: np.ndarray | None, b: np.ndarray | None, eps: float = 1e-5
) -> np.ndarray:
    """Each (n, c) slice made mean 0, variance 1 with NumPy, then ``* w + b``."""
    flat = x.reshape(x.shape[0], x.shape[1], -1)
    out = (flat - flat.mean(-1, keepdims=True)) / np.sqrt(flat.var(-1, keepdims=True) + eps)
    out = out.reshape(x.shape)
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    out = out if w is None else out * w.reshape(shape)
    return out if b is None else out + b.reshape(shape)


SHAPES = [(2, 3, 5), (3, 2, 4, 3), (2, 2, 3, 2, 2)]


@pytest.mark.parametrize("shape", SHAPES)
def test_instance_norm_matches_numpy_and_torch(shape: tuple[int, ...]) -> None:
    x = rng(1).standard_normal(shape) * 3 + 1
    w, b = rng(2).standard_normal(shape[1]), rng(3).standard_normal(shape[1])
    ours = F.instance_norm(mta.tensor(x), weight=mta.tensor(w), bias=mta.tensor(b))
    np.testing.assert_allclose(ours.numpy(), instance_norm_ref(x, w, b), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        F.instance_norm(mta.tensor(x)).numpy(), instance_norm_ref(x, None, None), atol=1e-12
    )
    torch = pytest.importorskip("torch")
    for dtype in FLOATS:
        against_torch(
            lambda t, w, b: F.instance_norm(t, weight=w, bias=b, eps=1e-3),
            lambda t, w, b: torch.nn.functional.instance_norm(t, weight=w, bias=b, eps=1e-3),
            [x, w, b],
            dtype,
        )


def test_instance_norm_running_statistics_match_numpy_and_torch() -> None:
    torch = pytest.importorskip("torch")
    x = rng(4).standard_normal((3, 2, 4, 5)) * 2
    mean, var = mta.tensor(rng(5).standard_normal(2)), mta.ones(2, dtype=mta.float64) * 2
    tm, tv = torch.tensor(mean.numpy()), torch.tensor(var.numpy())
    m0, v0 = mean.numpy().copy(), var.numpy().copy()
    F.instance_norm(mta.tensor(x), mean, var, momentum=0.3)
    torch.nn.functional.instance_norm(torch.tensor(x), tm, tv, momentum=0.3)
    flat = x.reshape(3, 2, -1)  # NumPy: the average over samples of each sample's statistics
    np.testing.assert_allclose(mean.numpy(), 0.7 * m0 + 0.3 * flat.mean(-1).mean(0), atol=1e-12)
    np.testing.assert_allclose(
        var.numpy(), 0.7 * v0 + 0.3 * flat.var(-1, ddof=1).mean(0), atol=1e-12
    )
    assert_close(mean.numpy(), tm.numpy())
    assert_close(var.numpy(), tv.numpy())
    # with use_input_stats=False the running statistics normalize and stay as they were
    before = mean.numpy().copy()
    against_torch(
        lambda t: F.instance_norm(t, mean, var, use_input_stats=False),
        lambda t: torch.nn.functional.instance_norm(t, tm, tv, use_input_stats=False),
        [x],
    )
    np.testing.assert_allclose(mean.numpy(), before, atol=1e-15)


def _copy_params(ours: nn.Module, theirs: Any) -> None:
    """Give ``ours`` the parameters and buffers of PyTorch's ``theirs``."""
    state = {k: mta.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    ours.load_state_dict(state)


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_instance_norm_layers_train_and_eval_as_torch(dims: int, momentum: float | None) -> None:
    torch = pytest.importorskip("torch")
    name = f"InstanceNorm{dims}d"
    kwargs = {"affine": True, "track_running_stats": True, "momentum": momentum}
    ours = getattr(nn, name)(3, dtype=mta.float64, **kwargs)
    theirs = getattr(torch.nn, name)(3, dtype=torch.float64, **kwargs)
    with torch.no_grad():
        theirs.weight.normal_()
        theirs.bias.normal_()
    _copy_params(ours, theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    shape = (2, 3) + (4, 3, 2)[:dims]
    for step in range(3):  # training steps: outputs, gradients and running statistics
        x = rng(10 + step).standard_normal(shape) * (step + 1)
        against_torch(ours, theirs, [x])
        for (key, mine), theirs_value in zip(
            ours.state_dict().items(), theirs.state_dict().values(), strict=True
        ):
            np.testing.assert_allclose(
                mine.numpy(), theirs_value.numpy(), rtol=1e-12, atol=1e-12, err_msg=key
            )
        theirs.weight.grad = theirs.bias.grad = None
        ours.zero_grad()
    ours.eval()
    theirs.eval()
    x = rng(20).standard_normal(shape)
    against_torch(ours, theirs, [x])
    assert_close(ours.weight.grad.numpy(), theirs.weight.grad.numpy())  # type: ignore[union-attr]
    against_torch(ours, theirs, [x[0]])  # unbatched input
    assert int(ours.num_batches_tracked.item()) == 0  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"affine": True}, {"track_running_stats": True}, {"affine": True, "bias": False}],
)
def test_instance_norm_state_dict_and_eval_without_tracking(kwargs: dict[str, Any]) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = nn.InstanceNorm2d(4, **kwargs), torch.nn.InstanceNorm2d(4, **kwargs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    x = rng(6).standard_normal((2, 4, 3, 3)).astype(np.float32)
    ours.eval()
    theirs.eval()
    with torch.no_grad():
        assert_close(to_host(ours(mta.tensor(x))), theirs(torch.tensor(x)).numpy(), np.float32)


def test_instance_norm_errors() -> None:
    with pytest.raises(ValueError, match=r"more than 1 spatial element.*\(2, 3, 1\)"):
        F.instance_norm(mta.ones(2, 3, 1))
    with pytest.raises(ValueError, match=r"at least one spatial dim, got \(2, 3\)"):
        F.instance_norm(mta.ones(2, 3))
    with pytest.raises(ValueError, match=r"weight must have shape \(3,\).*\(2, 3, 4\).*\(4,\)"):
        F.instance_norm(mta.ones(2, 3, 4), weight=mta.ones(4))
    with pytest.raises(ValueError, match="running_mean and running_var"):
        F.instance_norm(mta.ones(2, 3, 4), use_input_stats=False)
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input"):
        nn.InstanceNorm1d(3)(mta.ones(2, 3, 4, 4))
    with pytest.raises(ValueError, match=r"dim=1 to match num_features \(3\), but got: 5"):
        nn.InstanceNorm1d(3, affine=True)(mta.ones(2, 5, 4))
    with pytest.warns(UserWarning, match="dim=1 does not match num_features"):
        nn.InstanceNorm1d(3)(mta.ones(2, 5, 4))


def test_instance_norm_gradcheck_and_gradgradcheck() -> None:
    x = rng(7).standard_normal((2, 2, 4))
    w, b = rng(8).standard_normal(2), rng(9).standard_normal(2)
    check_grads(lambda t, w, b: F.instance_norm(t, weight=w, bias=b), x, w, b)
    stats = mta.tensor([0.5, -1.0], dtype=mta.float64), mta.tensor([2.0, 0.5], dtype=mta.float64)
    check_grads(lambda t: F.instance_norm(t, *stats, use_input_stats=False), x)


# --------------------------------------------------------------------------------- BatchNorm3d


@pytest.mark.parametrize("fast", [True, False])
def test_batch_norm3d_trains_and_evaluates_as_torch(fast: bool) -> None:
    torch = pytest.importorskip("torch")
    ours = nn.BatchNorm3d(3, momentum=0.2, dtype=mta.float64)
    theirs = torch.nn.BatchNorm3d(3, momentum=0.2, dtype=torch.float64)
    with torch.no_grad():
        theirs.weight.normal_()
        theirs.bias.normal_()
    _copy_params(ours, theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    with mta.fast_paths(fast):
        for step in range(3):
            x = rng(30 + step).standard_normal((2, 3, 3, 2, 4)) + step
            against_torch(ours, theirs, [x])
            theirs.weight.grad = theirs.bias.grad = None
            ours.zero_grad()
        for key, value in theirs.state_dict().items():
            np.testing.assert_allclose(ours.state_dict()[key].numpy(), value.numpy(), atol=1e-12)
        ours.eval()
        theirs.eval()
        against_torch(ours, theirs, [rng(40).standard_normal((2, 3, 2, 2, 2))])
    with pytest.raises(ValueError, match=r"expected a 5-D input, got shape \(2, 3, 4, 4\)"):
        ours(mta.ones(2, 3, 4, 4))


# ------------------------------------------------------------------------- local response norm


def lrn_ref(x: np.ndarray, size: int, alpha: float, beta: float, k: float) -> np.ndarray:
    """A loop over channels: the mean of the squares in each window (zeros outside)."""
    out = np.empty_like(x)
    channels = x.shape[1]
    for c in range(channels):
        low, high = c - size // 2, c + (size - 1) // 2
        window = x[:, max(low, 0) : min(high, channels - 1) + 1]
        out[:, c] = x[:, c] / (k + alpha * (window**2).sum(1) / size) ** beta
    return out


@pytest.mark.parametrize("shape", [(2, 5, 3), (2, 4, 3, 2), (1, 6, 2, 2, 2)])
@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_local_response_norm_matches_numpy_and_torch(shape: tuple[int, ...], size: int) -> None:
    x = rng(11).standard_normal(shape) * 2
    settings = {"alpha": 0.7, "beta": 0.6, "k": 1.5}
    ours = F.local_response_norm(mta.tensor(x), size, **settings)
    np.testing.assert_allclose(ours.numpy(), lrn_ref(x, size, **settings), rtol=1e-12)
    torch = pytest.importorskip("torch")
    for dtype in FLOATS:
        against_torch(
            lambda t: F.local_response_norm(t, size, **settings),
            lambda t: torch.nn.functional.local_response_norm(t, size, **settings),
            [x],
            dtype,
        )
    layer, their_layer = (
        nn.LocalResponseNorm(size, 0.7, 0.6, 1.5),
        torch.nn.LocalResponseNorm(size, 0.7, 0.6, 1.5),
    )
    assert repr(layer) == repr(their_layer)
    against_torch(layer, their_layer, [x])


def test_local_response_norm_gradcheck_and_errors() -> None:
    check_grads(
        lambda t: F.local_response_norm(t, 3, alpha=0.5, beta=0.75, k=1.0),
        rng(12).standard_normal((2, 4, 3)),
    )
    with pytest.raises(ValueError, match=r"3D or higher.*got 2 dimensions, shape \(2, 4\)"):
        F.local_response_norm(mta.ones(2, 4), 2)


# --------------------------------------------------------------------------------- rms_norm


@pytest.mark.parametrize("eps", [None, 0.1])
@pytest.mark.parametrize("normalized_shape", [4, (3, 4)])
def test_rms_norm_matches_torch(eps: float | None, normalized_shape: Any) -> None:
    torch = pytest.importorskip("torch")
    x = rng(13).standard_normal((2, 3, 4)) * 1e-4  # small: eps=None's machine epsilon matters
    w = rng(14).standard_normal(normalized_shape)
    their_shape = [normalized_shape] if isinstance(normalized_shape, int) else normalized_shape
    for dtype in FLOATS:
        against_torch(
            lambda t, w: F.rms_norm(t, normalized_shape, w, eps),
            lambda t, w: torch.nn.functional.rms_norm(t, their_shape, w, eps),
            [x, w],
            dtype,
        )
        against_torch(
            lambda t: F.rms_norm(t, normalized_shape, eps=eps),
            lambda t: torch.nn.functional.rms_norm(t, their_shape, eps=eps),
            [x],
            dtype,
        )
    dims = (-1,) if normalized_shape == 4 else (-2, -1)  # NumPy, float64's epsilon if None
    mean_square = (x**2).mean(dims, keepdims=True) + (
        np.finfo(np.float64).eps if eps is None else eps
    )
    got = F.rms_norm(mta.tensor(x), normalized_shape, mta.tensor(w), eps).detach().numpy()
    np.testing.assert_allclose(got, x / np.sqrt(mean_square) * w, rtol=1e-12)


def test_rms_norm_layer_as_torch() -> None:
    torch = pytest.importorskip("torch")
    for kwargs in [{}, {"eps": 1e-3}, {"elementwise_affine": False}]:
        ours, theirs = nn.RMSNorm([3, 4], **kwargs), torch.nn.RMSNorm([3, 4], **kwargs)
        assert repr(ours) == repr(theirs).replace("[3, 4]", "(3, 4)")  # we keep a tuple
        assert list(ours.state_dict()) == list(theirs.state_dict())
    ours, theirs = nn.RMSNorm(4, dtype=mta.float64), torch.nn.RMSNorm(4, dtype=torch.float64)
    with torch.no_grad():
        theirs.weight.normal_()
    _copy_params(ours, theirs)
    against_torch(ours, theirs, [rng(15).standard_normal((3, 4))])
    assert_close(ours.weight.grad.numpy(), theirs.weight.grad.numpy())  # type: ignore[union-attr]
    with pytest.raises(ValueError, match=r"\(2, 5\) does not end with normalized_shape \(4,\)"):
        ours(mta.ones(2, 5, dtype=mta.float64))
    check_grads(
        lambda t, w: F.rms_norm(t, 3, w, 0.01),
        rng(16).standard_normal((2, 3)),
        rng(17).standard_normal(3),
    )


# ------------------------------------------------------------------------ glu, bilinear, ...


@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_glu_matches_torch(dim: int) -> None:
    torch = pytest.importorskip("torch")
    x = rng(18).standard_normal((4, 6, 2))
    for dtype in FLOATS:
        against_torch(
            lambda t: F.glu(t, dim), lambda t: torch.nn.functional.glu(t, dim), [x], dtype
        )
    assert repr(nn.GLU(dim)) == repr(torch.nn.GLU(dim))
    against_torch(nn.GLU(dim), torch.nn.GLU(dim), [x])
    check_grads(lambda t: F.glu(t, dim), x[:2, :2])


def test_glu_errors() -> None:
    with pytest.raises(ValueError, match=r"dimension 1 is size 5 \(input of shape \(2, 5\)\)"):
        F.glu(mta.ones(2, 5), 1)
    with pytest.raises(ValueError, match="does not support scalars"):
        F.glu(mta.tensor(1.0))


def test_bilinear_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    r = rng(19)
    x1, x2 = r.standard_normal((2, 3, 4)), r.standard_normal((2, 3, 5))
    w, b = r.standard_normal((6, 4, 5)), r.standard_normal(6)
    for dtype in FLOATS:
        against_torch(F.bilinear, torch.nn.functional.bilinear, [x1, x2, w, b], dtype)
        against_torch(
            lambda a, c, w: F.bilinear(a, c, w),
            lambda a, c, w: torch.nn.functional.bilinear(a, c, w),
            [x1[0], x2[0], w],
            dtype,
        )
    mta.manual_seed(0)  # the bounds below hold for any draw; the seed makes it one draw
    ours, theirs = (
        nn.Bilinear(4, 5, 6, dtype=mta.float64),
        torch.nn.Bilinear(4, 5, 6, dtype=torch.float64),
    )
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    bound = 1 / math.sqrt(4)  # PyTorch's init: uniform in +-1/sqrt(in1_features)
    for p in (ours.weight, ours.bias):
        assert p is not None
        values = to_host(p)
        assert np.abs(values).max() <= bound  # inside PyTorch's bounds
        assert len(np.unique(values)) == values.size  # drawn, not filled
    _copy_params(ours, theirs)
    against_torch(ours, theirs, [x1, x2])
    for name in ("weight", "bias"):
        assert_close(getattr(ours, name).grad.numpy(), getattr(theirs, name).grad.numpy())
    assert nn.Bilinear(2, 3, 4, bias=False).bias is None
    check_grads(F.bilinear, x1[0, :2], x2[0, :2], w[:2], b[:2])


def test_bilinear_errors_name_the_shapes() -> None:
    with pytest.raises(
        ValueError, match=r"\(2, 4\) and \(2, 3\) do not fit a weight of shape \(6, 4, 5\)"
    ):
        F.bilinear(mta.ones(2, 4), mta.ones(2, 3), mta.ones(6, 4, 5))
    with pytest.raises(ValueError, match=r"bias of shape \(5,\) does not fit weight \(6, 4, 3\)"):
        F.bilinear(mta.ones(2, 4), mta.ones(2, 3), mta.ones(6, 4, 3), mta.ones(5))


def test_softmax2d_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    x = rng(20).standard_normal((2, 3, 4, 2))
    against_torch(nn.Softmax2d(), torch.nn.Softmax2d(), [x])
    against_torch(nn.Softmax2d(), torch.nn.Softmax2d(), [x[0]])
    with pytest.raises(ValueError, match=r"3D or 4D, got 2D instead \(shape \(2, 3\)\)"):
        nn.Softmax2d()(mta.ones(2, 3))


@pytest.mark.parametrize("groups", [1, 2, 3, 6])
def test_channel_shuffle_matches_torch(groups: int) -> None:
    torch = pytest.importorskip("torch")
    x = rng(21).standard_normal((2, 6, 3, 2))
    against_torch(
        lambda t: F.channel_shuffle(t, groups),
        lambda t: torch.nn.functional.channel_shuffle(t, groups),
        [x],
    )
    assert repr(nn.ChannelShuffle(groups)) == repr(torch.nn.ChannelShuffle(groups))
    against_torch(nn.ChannelShuffle(groups), torch.nn.ChannelShuffle(groups), [x[:, :, 0]])
    with pytest.raises(ValueError, match=r"Got 6 channels and 4 groups"):
        F.channel_shuffle(mta.tensor(x), 4)
    with pytest.raises(ValueError, match=r"> 2 dims, but got input with sizes \(2, 6\)"):
        F.channel_shuffle(mta.ones(2, 6), groups)


# ------------------------------------------------------------------------------- embedding_bag

INDICES = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 0])
OFFSETS = np.array([0, 2, 2, 7])  # the second bag is empty


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2, -10])
def test_embedding_bag_matches_torch(mode: str, padding_idx: int | None) -> None:
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    weight = rng(22).standard_normal((10, 3))
    kwargs = {"mode": mode, "padding_idx": padding_idx}
    for dtype in FLOATS:
        against_torch(
            lambda w, i, o: F.embedding_bag(i, w, o, **kwargs),
            lambda w, i, o: tf.embedding_bag(i, w, o, **kwargs),
            [weight],
            dtype,
            constants=(INDICES, OFFSETS),
        )
    against_torch(
        lambda w, i, o: F.embedding_bag(i, w, o, include_last_offset=True, **kwargs),
        lambda w, i, o: tf.embedding_bag(i, w, o, include_last_offset=True, **kwargs),
        [weight],
        constants=(INDICES, np.array([0, 2, 2, 7, 10])),
    )
    against_torch(
        lambda w, i: F.embedding_bag(i, w, **kwargs),
        lambda w, i: tf.embedding_bag(i, w, **kwargs),
        [weight],
        constants=(INDICES.reshape(2, 5),),
    )


def test_embedding_bag_per_sample_weights_match_torch() -> None:
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    weight, scales = rng(23).standard_normal((10, 3)), rng(24).standard_normal(10)
    for padding_idx in (None, 4):
        against_torch(
            lambda w, s, i, o, pad=padding_idx: F.embedding_bag(
                i, w, o, mode="sum", per_sample_weights=s, padding_idx=pad
            ),
            lambda w, s, i, o, pad=padding_idx: tf.embedding_bag(
                i, w, o, mode="sum", per_sample_weights=s, padding_idx=pad
            ),
            [weight, scales],
            constants=(INDICES, OFFSETS),
        )
    against_torch(
        lambda w, s, i: F.embedding_bag(i, w, mode="sum", per_sample_weights=s),
        lambda w, s, i: tf.embedding_bag(i, w, mode="sum", per_sample_weights=s),
        [weight, scales.reshape(5, 2)],
        constants=(INDICES.reshape(5, 2),),
    )


def test_embedding_bag_layer_as_torch() -> None:
    torch = pytest.importorskip("torch")
    ours = nn.EmbeddingBag(10, 3, mode="max", padding_idx=2)
    theirs = torch.nn.EmbeddingBag(10, 3, mode="max", padding_idx=2)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert not to_host(ours.weight)[2].any()  # the padding row starts at zero
    _copy_params(ours, theirs)
    ours, theirs = ours.to(dtype=mta.float64), theirs.double()
    against_torch(
        lambda i, o: ours(i, o), lambda i, o: theirs(i, o), [], constants=(INDICES, OFFSETS)
    )
    assert_close(ours.weight.grad.numpy(), theirs.weight.grad.numpy())  # type: ignore[union-attr]
    pretrained = rng(25).standard_normal((10, 3))
    for freeze in (True, False):
        bag = nn.EmbeddingBag.from_pretrained(mta.tensor(pretrained), freeze=freeze, mode="sum")
        their_bag = torch.nn.EmbeddingBag.from_pretrained(
            torch.tensor(pretrained), freeze=freeze, mode="sum"
        )
        assert bag.weight.requires_grad is their_bag.weight.requires_grad is (not freeze)
        with torch.no_grad():
            expected = their_bag(torch.tensor(INDICES), torch.tensor(OFFSETS)).numpy()
        assert_close(to_host(bag(mta.tensor(INDICES), mta.tensor(OFFSETS))), expected)


def test_embedding_bag_gradcheck() -> None:
    weight, scales = rng(26).standard_normal((10, 2)), rng(27).standard_normal(10)
    idx, off = mta.tensor(INDICES), mta.tensor(OFFSETS)
    for mode in ("sum", "mean", "max"):
        check_grads(lambda w, m=mode: F.embedding_bag(idx, w, off, mode=m, padding_idx=0), weight)
    check_grads(
        lambda w, s: F.embedding_bag(idx, w, off, mode="sum", per_sample_weights=s), weight, scales
    )


def test_embedding_bag_errors() -> None:
    w, idx = mta.ones(10, 3), mta.tensor(INDICES)
    with pytest.raises(ValueError, match="offsets\\[0\\] has to be 0.*got 1"):
        F.embedding_bag(idx, w, mta.tensor([1, 3]))
    with pytest.raises(ValueError, match=r"greater than input's length \(10\).*of 12"):
        F.embedding_bag(idx, w, mta.tensor([0, 12]))
    with pytest.raises(ValueError, match="offsets has to be None"):
        F.embedding_bag(idx.reshape(2, 5), w, mta.tensor([0, 1]))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor for a 1-D input, got None"):
        F.embedding_bag(idx, w)
    with pytest.raises(
        NotImplementedError, match="only supported for mode='sum' \\(got mode='mean'\\)"
    ):
        F.embedding_bag(idx, w, mta.tensor([0]), per_sample_weights=mta.ones(10))
    with pytest.raises(ValueError, match=r"per_sample_weights \(\(9,\)\).*input \(\(10,\)\)"):
        F.embedding_bag(idx, w, mta.tensor([0]), mode="sum", per_sample_weights=mta.ones(9))
    with pytest.raises(IndexError, match=r"in \[0, 2\], got values from 0 to 9"):
        F.embedding_bag(idx, mta.ones(3, 3), mta.tensor([0]))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max, got 'min'"):
        F.embedding_bag(idx, w, mta.tensor([0]), mode="min")
    with pytest.raises(NotImplementedError, match="max_norm"):
        nn.EmbeddingBag(10, 3, max_norm=1.0)


# ------------------------------------------------------------------------------ alpha dropout


def _expected_alpha_dropout(
    x: np.ndarray, p: float, seed: int, mask_shape: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """The mask drawn again from the same generator after the same seed, and PyTorch's
    formula applied to it with NumPy: ``a * x + b`` kept, ``a * -alpha + b`` dropped
    (``x * 0`` added there, as PyTorch multiplies by the mask: an infinite ``x`` gives
    NaN)."""
    mta.manual_seed(seed)
    device = mta.Device("cpu")
    keep = device.backend.generator(device).random(mask_shape, dtype=np.float32) >= np.float32(p)
    a = 1.0 / math.sqrt((ALPHA * ALPHA * p + 1.0) * (1.0 - p))
    keep = np.broadcast_to(keep, x.shape)
    dropped = x * 0.0 - ALPHA * a + ALPHA * a * p
    return np.where(keep, a * x + ALPHA * a * p, dropped), keep * a


@pytest.mark.parametrize("p", [0.2, 0.5, 0.9])
@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_is_the_affine_map_of_the_drawn_mask(p: float, feature: bool) -> None:
    x = rng(28).standard_normal((4, 8, 3))
    mask_shape = (4, 8, 1) if feature else x.shape
    expected, slope = _expected_alpha_dropout(x, p, 5, mask_shape)
    fn = F.feature_alpha_dropout if feature else F.alpha_dropout
    mta.manual_seed(5)
    t = mta.tensor(x, requires_grad=True)
    y = fn(t, p, training=True)
    np.testing.assert_allclose(y.detach().numpy(), expected, rtol=1e-14, atol=1e-15)
    assert 0 < slope.sum() < slope.size * slope.max()  # some kept, some dropped
    y.backward(mta.ones(*y.shape, dtype=mta.float64))
    np.testing.assert_array_equal(t.grad.numpy(), slope)  # type: ignore[union-attr]
    layer = (nn.FeatureAlphaDropout if feature else nn.AlphaDropout)(p)
    mta.manual_seed(5)
    np.testing.assert_array_equal(layer(mta.tensor(x)).numpy(), y.detach().numpy())
    assert layer.eval()(t) is t


def test_alpha_dropout_edges_match_torch() -> None:
    torch = pytest.importorskip("torch")
    x = np.array(NONFINITE)[None, :].repeat(2, 0)
    for fn in ("alpha_dropout", "feature_alpha_dropout"):
        ours, theirs = getattr(F, fn), getattr(torch.nn.functional, fn)
        for p, training in [(0.5, False), (0.0, True), (1.0, True)]:
            with np.errstate(invalid="ignore"):
                got = ours(mta.tensor(x), p, training).numpy()
            np.testing.assert_array_equal(got, theirs(torch.tensor(x), p, training).numpy())
        assert ours(mta.tensor(x)) is not None  # training=False by default, as PyTorch
        np.testing.assert_array_equal(ours(mta.tensor(x)).numpy(), x)
        with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
            ours(mta.tensor(x), 1.5, True)
    assert repr(nn.AlphaDropout(0.2)) == repr(torch.nn.AlphaDropout(0.2))
    assert repr(nn.FeatureAlphaDropout(0.2)) == repr(torch.nn.FeatureAlphaDropout(0.2))
    with pytest.raises(ValueError, match=r"at least 2 dimensions in the input, got \(8,\)"):
        F.feature_alpha_dropout(mta.tensor(x[0]), 0.5, True)
    y = mta.tensor(x[:, :6])  # in place: the same tensor, holding the result
    mta.manual_seed(6)
    expected, _ = _expected_alpha_dropout(x[:, :6], 0.5, 6, (2, 6))
    mta.manual_seed(6)
    assert F.alpha_dropout(y, 0.5, True, inplace=True) is y
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-14)


# -------------------------------------------------------------------------- non-finite values


def _grid(columns: int) -> np.ndarray:
    """Each NONFINITE value beside finite ones, in rows of ``columns`` values."""
    finite = rng(29).uniform(-1, 1, (len(NONFINITE), columns - 1))
    return np.concatenate([np.array(NONFINITE)[:, None], finite], 1)


@pytest.mark.parametrize("grad_output", [1.0, np.inf])
def test_non_finite_values_match_torch(grad_output: float) -> None:
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    grid = _grid(4)
    cases: list[tuple[Callable[..., Tensor], Callable[..., Any], np.ndarray]] = [
        (lambda t: F.glu(t, 1), lambda t: tf.glu(t, 1), grid),
        (lambda t: F.glu(t, 1), lambda t: tf.glu(t, 1), grid[:, ::-1].copy()),
        (lambda t: F.rms_norm(t, 4), lambda t: tf.rms_norm(t, [4]), grid),
        (F.instance_norm, tf.instance_norm, grid.reshape(2, 4, 4)),
        (
            lambda t: F.channel_shuffle(t, 2),
            lambda t: tf.channel_shuffle(t, 2),
            grid.reshape(2, 4, 4),
        ),
        (
            lambda t: F.local_response_norm(t, 2),
            lambda t: tf.local_response_norm(t, 2),
            grid.reshape(2, 4, 4),
        ),
    ]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dtype in FLOATS:
            for ours, theirs, x in cases:
                against_torch(ours, theirs, [x], dtype, grad_output)


# ------------------------------------------------------------------ on the strict stand-in


@pytest.fixture(params=["strict", "strict:1"])
def strict(request: pytest.FixtureRequest) -> Iterator[str]:
    """The ``strict`` stand-in (NumPy behind CuPy's rules, see ``support/strict_xp.py``)
    registered, on its device 0 and on its device 1: what a GPU would refuse raises."""
    with registered():
        strict_suite.STRICT_DEVICE = request.param
        try:
            yield str(request.param)
        finally:
            strict_suite.STRICT_DEVICE = "strict"


def _bag(w: Tensor, **kwargs: Any) -> Tensor:
    idx, off = mta.tensor(INDICES, device=w.device), mta.tensor(OFFSETS, device=w.device)
    return F.embedding_bag(idx, w, off, padding_idx=0, **kwargs)


STRICT_CASES: list[tuple[str, Callable[..., Tensor], list[Any], int]] = [
    ("instance_norm", lambda a, w: F.instance_norm(a, weight=w), [floats(2, 3, 4), floats(3)], 2),
    ("local_response_norm", lambda a: F.local_response_norm(a, 3), [floats(2, 4, 3)], 2),
    ("rms_norm", lambda a, w: F.rms_norm(a, 4, w), [floats(3, 4), floats(4)], 2),
    ("glu", lambda a: F.glu(a, 0), [floats(4, 3)], 2),
    ("bilinear", F.bilinear, [floats(2, 3), floats(2, 4), floats(5, 3, 4), floats(5)], 2),
    ("channel_shuffle", lambda a: F.channel_shuffle(a, 2), [floats(2, 4, 3)], 2),
    ("bag_mean", lambda w: _bag(w), [floats(10, 3)], 2),
    ("bag_max", lambda w: _bag(w, mode="max"), [floats(10, 3)], 2),
    (
        "bag_weights",
        lambda w, s: _bag(w, mode="sum", per_sample_weights=s),
        [floats(10, 3), floats(10)],
        2,
    ),
]


@pytest.mark.parametrize("fn,makers,order", [pytest.param(*c[1:], id=c[0]) for c in STRICT_CASES])
def test_layers_on_the_strict_stand_in_match_the_cpu(
    fn: Callable[..., Tensor], makers: list[Any], order: int, strict: str
) -> None:
    check(fn, makers, order)


def test_instance_norm_running_stats_and_alpha_dropout_on_the_strict_stand_in(strict: str) -> None:
    layer = nn.InstanceNorm2d(3, track_running_stats=True, dtype=mta.float64).to(strict)
    x = rng(31).standard_normal((2, 3, 4, 4))
    layer(mta.tensor(x, device=strict))
    assert isinstance(layer.running_mean.array, StrictArray)  # type: ignore[union-attr]
    expected = 0.1 * x.reshape(2, 3, -1).mean(-1).mean(0)
    np.testing.assert_allclose(layer.running_mean.to("cpu").numpy(), expected, atol=1e-14)  # type: ignore[union-attr]
    mta.manual_seed(6)
    t = mta.tensor(x, device=strict, requires_grad=True)
    y = F.feature_alpha_dropout(t, 0.5, True)
    assert isinstance(y.array, StrictArray) and y.device == mta.Device(strict)
    y.sum().backward()
    values = y.detach().to("cpu").numpy().reshape(6, 16) - x.reshape(6, 16) * t.grad.to(
        "cpu"
    ).numpy().reshape(6, 16)  # type: ignore[union-attr]
    assert all(np.ptp(row) < 1e-12 for row in values)  # one affine map per channel
