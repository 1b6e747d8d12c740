"""``nn.utils``: gradient clipping (norms of order 1, 2, inf, 0.5 and 3, non-finite
gradients, the error_if_nonfinite message, several devices and dtypes) and
parameters_to_vector / vector_to_parameters, against torch.nn.utils and NumPy."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from support.helpers import DEVICES, to_host

import minitorch_accel as mta
from minitorch_accel import nn
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.nn.utils import (
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
    parameters_to_vector,
    vector_to_parameters,
)

torch = pytest.importorskip("torch")

NORM_TYPES = [1.0, 2.0, math.inf, 0.5, 3.0]
SHAPES = [(3, 4), (5,), (2, 1, 3)]
SPECIALS = [-math.inf, -2.0, -0.0, 0.0, 0.5, 2.0, math.inf, math.nan]


def pair(grads: list[np.ndarray | None], device: str = "cpu") -> tuple[list[Tensor], list[Any]]:
    """Parameters of ours and of torch with the gradients ``grads`` (None: no gradient)."""
    ours, theirs = [], []
    for g in grads:
        shape = (2,) if g is None else g.shape
        p = mta.zeros(*shape, dtype=mta.float64 if g is None else g.dtype, device=device)
        p.requires_grad = True
        t = torch.zeros(shape, dtype=torch.float64 if g is None else torch.from_numpy(g).dtype)
        t.requires_grad = True
        if g is not None:
            p.grad = mta.tensor(g, device=device)
            t.grad = torch.from_numpy(g.copy())
        ours.append(p)
        theirs.append(t)
    return ours, theirs


def assert_same_values(ours: np.ndarray, theirs: np.ndarray, rtol: float = 1e-13) -> None:
    """Equal within ``rtol``, with NaN, infinities and the sign of zero where they are."""
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_array_equal(np.isinf(ours), np.isinf(theirs))
    finite = np.isfinite(theirs)
    np.testing.assert_allclose(ours[finite], theirs[finite], rtol=rtol, atol=0)
    exact = ~np.isnan(theirs) & ((theirs == 0) | np.isinf(theirs))
    np.testing.assert_array_equal(np.signbit(ours[exact]), np.signbit(theirs[exact]))


def assert_grads_match(ours: list[Tensor], theirs: list[Any], rtol: float = 1e-13) -> None:
    for p, t in zip(ours, theirs, strict=True):
        if t.grad is None:
            assert p.grad is None
        else:
            assert_same_values(to_host(p.grad), t.grad.numpy(), rtol)


def random_grads(rng: np.random.Generator, scale: float = 1.0) -> list[np.ndarray]:
    return [scale * rng.standard_normal(s) for s in SHAPES]


# ---------------------------------------------------------------- clip_grad_norm_
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("norm_type", NORM_TYPES)
@pytest.mark.parametrize("max_norm", [0.3, 1e3])
def test_clip_grad_norm_matches_torch_and_numpy(
    device: str, norm_type: float, max_norm: float
) -> None:
    rng = np.random.default_rng(NORM_TYPES.index(norm_type))
    grads = random_grads(rng)
    ours, theirs = pair([grads[0], None, grads[1], grads[2]], device)
    total = clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    ref = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert total.shape == () and total.dtype == np.float64 and total.device is mta.Device(device)
    assert_same_values(to_host(total), ref.numpy())
    assert_grads_match(ours, theirs)
    # a NumPy reference: the norm of all gradients as one vector, one coefficient
    numpy_norm = np.linalg.norm(np.concatenate([g.ravel() for g in grads]), ord=norm_type)
    np.testing.assert_allclose(total.item(), numpy_norm, rtol=1e-13)
    coef = min(1.0, max_norm / (numpy_norm + 1e-6))
    for p, g in zip([ours[0], ours[2], ours[3]], grads, strict=True):
        np.testing.assert_allclose(to_host(p.grad), g * coef, rtol=1e-13)
    if max_norm < numpy_norm:
        clipped = get_total_norm([p.grad for p in ours if p.grad is not None], norm_type)
        np.testing.assert_allclose(clipped.item(), max_norm, rtol=1e-5)


def test_clip_grad_norm_single_tensor_generator_and_float32() -> None:
    rng = np.random.default_rng(1)
    grads = [g.astype(np.float32) for g in random_grads(rng, 3.0)]
    ours, theirs = pair(grads)
    total = clip_grad_norm_((p for p in ours), 1.0)  # a generator is read once
    ref = torch.nn.utils.clip_grad_norm_((t for t in theirs), 1.0)
    assert total.dtype == np.float32
    assert_same_values(to_host(total), ref.numpy(), rtol=1e-6)
    assert_grads_match(ours, theirs, rtol=1e-6)
    single, single_t = pair([grads[0]])
    total = clip_grad_norm_(single[0], 0.5, norm_type=1)
    ref = torch.nn.utils.clip_grad_norm_(single_t[0], 0.5, norm_type=1)
    assert_same_values(to_host(total), ref.numpy(), rtol=1e-6)
    assert_grads_match(single, single_t, rtol=1e-6)


def test_clip_grad_norm_mixed_dtypes_promote_like_torch() -> None:
    rng = np.random.default_rng(2)
    grads = [
        rng.standard_normal((4, 3)).astype(np.float32),
        rng.standard_normal(5),
        rng.standard_normal(3).astype(np.float16),
    ]
    ours, theirs = pair(grads)
    total = clip_grad_norm_(ours, 0.5)
    ref = torch.nn.utils.clip_grad_norm_(theirs, 0.5)
    assert total.dtype == np.float64
    assert_same_values(to_host(total), ref.numpy(), rtol=1e-6)
    for p, t, rtol in zip(ours, theirs, (1e-6, 1e-6, 1e-3), strict=True):
        assert p.grad.dtype == p.dtype
        assert_same_values(to_host(p.grad), t.grad.numpy(), rtol=rtol)


@pytest.mark.parametrize("norm_type", NORM_TYPES)
@pytest.mark.parametrize("special", SPECIALS)
def test_clip_grad_norm_nonfinite_gradients_match_torch(norm_type: float, special: float) -> None:
    grads = [np.array(SPECIALS), np.array([special, 1.5, -3.0])]
    for chosen in ([grads[1]], grads):
        ours, theirs = pair(chosen)
        total = clip_grad_norm_(ours, 1.0, norm_type=norm_type)
        ref = torch.nn.utils.clip_grad_norm_(theirs, 1.0, norm_type=norm_type)
        assert_same_values(to_host(total), ref.numpy())
        assert_grads_match(ours, theirs)


@pytest.mark.parametrize("norm_type", [2.0, math.inf, 0.5])
@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_error_if_nonfinite_gives_torchs_message(norm_type: float, bad: float) -> None:
    grads = [np.array([1.0, bad]), np.array([2.0])]
    ours, theirs = pair(grads)
    with pytest.raises(RuntimeError) as theirs_error:
        torch.nn.utils.clip_grad_norm_(theirs, 1.0, norm_type, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as ours_error:
        clip_grad_norm_(ours, 1.0, norm_type, error_if_nonfinite=True)
    assert str(ours_error.value) == str(theirs_error.value)
    np.testing.assert_array_equal(to_host(ours[0].grad), grads[0])  # nothing was clipped
    with pytest.raises(RuntimeError, match="non-finite"):
        get_total_norm([p.grad for p in ours], norm_type, error_if_nonfinite=True)
    finite, _ = pair([np.array([3.0, 4.0])])
    assert clip_grad_norm_(finite, 1.0, error_if_nonfinite=True).item() == pytest.approx(5.0)


def test_get_total_norm_and_clip_grads_with_norm_match_torch() -> None:
    rng = np.random.default_rng(3)
    grads = random_grads(rng, 2.0)
    ours, theirs = pair(grads)
    for norm_type in NORM_TYPES:
        total = get_total_norm([p.grad for p in ours], norm_type)
        ref = torch.nn.utils.get_total_norm([t.grad for t in theirs], norm_type)
        assert_same_values(to_host(total), ref.numpy())
    total = get_total_norm([p.grad for p in ours])
    ref = torch.nn.utils.get_total_norm([t.grad for t in theirs])
    clip_grads_with_norm_(ours, 0.7, total)
    torch.nn.utils.clip_grads_with_norm_(theirs, 0.7, ref)
    assert_grads_match(ours, theirs)
    clip_grads_with_norm_(ours, 100.0, total)  # a coefficient above 1 is clamped to 1
    torch.nn.utils.clip_grads_with_norm_(theirs, 100.0, ref)
    assert_grads_match(ours, theirs)
    empty = get_total_norm([])
    assert empty.item() == 0.0 and empty.dtype == np.float32 and empty.shape == ()
    assert get_total_norm(mta.tensor([3.0, -4.0]), math.inf).item() == 4.0


def test_clip_grad_norm_across_devices_matches_torch() -> None:
    rng = np.random.default_rng(4)
    grads = random_grads(rng, 2.0)
    ours = []
    for g, device in zip(grads, ["cpu:1", "cpu:2", "cpu:1"], strict=True):
        p = mta.zeros(*g.shape, dtype=mta.float64, device=device, requires_grad=True)
        p.grad = mta.tensor(g, device=device)
        ours.append(p)
    _, theirs = pair(grads)
    total = clip_grad_norm_(ours, 0.5, norm_type=3.0)
    ref = torch.nn.utils.clip_grad_norm_(theirs, 0.5, norm_type=3.0)
    assert total.device is mta.Device("cpu:1")
    assert_same_values(to_host(total), ref.numpy())
    for p in ours:
        assert p.grad.device is p.device
    assert_grads_match(ours, theirs)


def test_clip_grad_norm_edge_cases() -> None:
    nothing = mta.zeros(2, requires_grad=True)
    total = clip_grad_norm_([nothing], 1.0)
    assert total.item() == 0.0 and nothing.grad is None
    with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
        clip_grad_norm_((p for p in list[Tensor]()), 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clip_grad_norm_([], 1.0)  # a list, even empty, is no mistake
    empty, empty_t = pair([np.zeros(0), np.array([1.0])])
    no_identity = "norm on an empty tensor because the operation does not have an identity"
    with pytest.raises(RuntimeError, match=no_identity):
        torch.nn.utils.clip_grad_norm_(empty_t, 1.0, math.inf)
    with pytest.raises(RuntimeError, match=no_identity):
        clip_grad_norm_(empty, 1.0, math.inf)
    assert clip_grad_norm_(empty, 1.0).item() == torch.nn.utils.clip_grad_norm_(empty_t, 1.0).item()
    w = mta.zeros(2, requires_grad=True)
    w.grad = mta.tensor([1, 2])
    with pytest.raises(TypeError, match="floating-point"):
        clip_grad_norm_([w], 1.0)
    w.grad = mta.tensor([1.0, 2.0])
    for bad in (0, -1.0, -math.inf, math.nan):
        with pytest.raises(ValueError, match="norm_type must be positive"):
            clip_grad_norm_([w], 1.0, norm_type=bad)


# ---------------------------------------------------------------- clip_grad_value_
@pytest.mark.parametrize("device", DEVICES)
def test_clip_grad_value_matches_torch(device: str) -> None:
    grads = [np.array(SPECIALS), np.array([[3.0, -0.25], [1.0, -1.0]])]
    ours, theirs = pair([grads[0], None, grads[1]], device)
    clip_grad_value_(ours, 1.0, foreach=False)
    torch.nn.utils.clip_grad_value_(theirs, 1.0)
    assert_grads_match(ours, theirs, rtol=0)
    np.testing.assert_array_equal(to_host(ours[0].grad), np.clip(grads[0], -1.0, 1.0))
    single, single_t = pair([np.array([5.0, -5.0])], device)
    clip_grad_value_(single[0], 0.0)
    torch.nn.utils.clip_grad_value_(single_t[0], 0.0)
    assert_grads_match(single, single_t, rtol=0)
    with pytest.raises(ValueError, match="clip_value must be non-negative"):
        clip_grad_value_(ours, -1.0)


def test_one_implementation_everywhere() -> None:
    assert nn.utils.clip_grad_norm_ is mta.optim.clip_grad_norm_
    assert nn.utils.clip_grad_value_ is mta.optim.clip_grad_value_
    assert nn.utils.clip_grad.get_total_norm is get_total_norm


# ---------------------------------------------------------------- convert_parameters
def test_parameters_to_vector_matches_torch_and_is_differentiable() -> None:
    rng = np.random.default_rng(5)
    values = [rng.standard_normal(s) for s in SHAPES]
    ours = [mta.tensor(v, requires_grad=True) for v in values]
    theirs = [torch.tensor(v, requires_grad=True) for v in values]
    vec = parameters_to_vector(ours)
    ref = torch.nn.utils.parameters_to_vector(theirs)
    np.testing.assert_array_equal(to_host(vec), ref.detach().numpy())
    np.testing.assert_array_equal(to_host(vec), np.concatenate([v.ravel() for v in values]))
    weights = rng.standard_normal(vec.shape[0])
    (vec * mta.tensor(weights)).sum().backward()
    (ref * torch.tensor(weights)).sum().backward()
    for p, t in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(to_host(p.grad), t.grad.numpy())
    mixed = parameters_to_vector([mta.ones(2, dtype=mta.float32), mta.ones(1, dtype=mta.float64)])
    assert mixed.dtype == np.float64


def test_vector_to_parameters_matches_torch() -> None:
    model = nn.Linear(3, 2)
    ref_model = torch.nn.Linear(3, 2)
    count = sum(p.numel() for p in model.parameters())
    vec_values = np.arange(count + 2, dtype=np.float32) / 7  # extra elements are ignored
    vec = mta.tensor(vec_values)
    vector_to_parameters(vec, model.parameters())
    torch.nn.utils.vector_to_parameters(torch.tensor(vec_values), ref_model.parameters())
    for p, t in zip(model.parameters(), ref_model.parameters(), strict=True):
        assert p.shape == tuple(t.shape) and p.requires_grad and isinstance(p, nn.Parameter)
        np.testing.assert_array_equal(to_host(p), t.detach().numpy())
        assert np.shares_memory(p.array, vec.array)  # views of vec, as in PyTorch
    roundtrip = parameters_to_vector(model.parameters())
    np.testing.assert_array_equal(to_host(roundtrip), vec_values[:count])


def test_convert_parameters_errors() -> None:
    params = [mta.zeros(2, 3), mta.zeros(2)]
    with pytest.raises(TypeError, match="expected a Tensor, but got: list"):
        vector_to_parameters([0.0] * 8, params)
    with pytest.raises(RuntimeError, match="at least 8 elements .* got shape \\(7,\\)"):
        vector_to_parameters(mta.zeros(7), params)
    with pytest.raises(RuntimeError, match="1-d tensor"):
        vector_to_parameters(mta.zeros(2, 4), params)
    np.testing.assert_array_equal(to_host(params[0]), np.zeros((2, 3)))  # unchanged
    split = [mta.zeros(2, device="cpu:1"), mta.zeros(2, device="cpu:2")]
    with pytest.raises(TypeError) as ours_error:
        parameters_to_vector(split)
    assert str(ours_error.value) == (
        "Found two parameters on different devices, this is currently not supported."
    )
    with pytest.raises(TypeError, match="different devices"):
        vector_to_parameters(mta.zeros(4, device="cpu:1"), split)
