"""PyTorch-style extension points against PyTorch running the same code: custom
autograd Functions (``forward(ctx, ...)``), ``autograd.functional`` and Module hooks."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn
from minitorch_accel.autograd.function import once_differentiable
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

SPECIAL = [-np.inf, -2.0, -0.0, 0.0, 0.5, 2.0, np.inf, np.nan]
LIBS = {"mta": mta, "torch": torch}


def host(t: Any) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy() if hasattr(t, "cpu") else t.detach().numpy())


def same_bits(a: Any, b: Any) -> None:
    """Equal values, NaN where NaN, the same sign of zero and infinity."""
    x, y = host(a), host(b)
    np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(np.signbit(x), np.signbit(y))


def close(a: Any, b: Any) -> None:
    np.testing.assert_allclose(host(a), host(b), rtol=1e-12, atol=1e-12)


def leaf(lib: Any, values: Any, dtype: str = "float64") -> Any:
    return lib.tensor(np.asarray(values, dtype=dtype), requires_grad=True)


# ------------------------------------------------------------------ custom Functions
def my_relu(lib: Any) -> Any:
    """The tutorial's MyReLU, written once for either library."""

    base: Any = lib.autograd.Function

    class MyReLU(base):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            grad_input = grad_output.clone()
            grad_input[input < 0] = 0
            return grad_input

    return MyReLU


@pytest.mark.parametrize("seed", [1.0, np.inf])
def test_tutorial_myrelu_matches_pytorch_at_special_values(seed: float) -> None:
    found = {}
    for name, lib in LIBS.items():
        x = leaf(lib, SPECIAL, "float32")
        y = my_relu(lib).apply(x)
        y.backward(lib.full_like(y, seed))
        found[name] = (y, x.grad, y.grad_fn.name())
        same_bits(y, x.detach().clamp(min=0))  # the Function's output is its forward's
    # (clamp(min=0) of -0.0 is -0.0 in PyTorch, 0.0 here: clamp's business, not ours)
    np.testing.assert_array_equal(host(found["mta"][0]), host(found["torch"][0]))
    same_bits(found["mta"][1], found["torch"][1])
    assert found["mta"][2] == found["torch"][2] == "MyReLUBackward"


def test_tutorial_myrelu_against_numpy_and_the_package_functions_still_work() -> None:
    x = leaf(mta, [-1.5, 0.5, 3.0])
    my_relu(mta).apply(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), (np.array([-1.5, 0.5, 3.0]) >= 0) * 1.0)
    assert gradcheck(my_relu(mta).apply, [leaf(mta, [-1.5, 0.5, 3.0])])
    y = mta.tensor([1.0, -2.0], requires_grad=True)
    (y.relu() * y.exp()).sum().backward()  # the package's own instance-method Functions
    assert y.grad is not None


def two_outputs(lib: Any) -> Any:
    base: Any = lib.autograd.Function

    class ScaleAndSquare(base):
        @staticmethod
        def forward(ctx, a, k, b):
            ctx.save_for_backward(a, b)
            ctx.k = k
            ctx.seen_needs = ctx.needs_input_grad
            return a * k + b, a * b

        @staticmethod
        def backward(ctx, g_sum, g_prod):
            a, b = ctx.saved_tensors
            return g_sum * ctx.k + g_prod * b, None, g_sum + g_prod * a

    return ScaleAndSquare


@pytest.mark.parametrize("use", ["both", "first", "second"])
def test_two_outputs_and_a_non_tensor_argument_match_pytorch(use: str) -> None:
    found = {}
    for name, lib in LIBS.items():
        a, b = leaf(lib, [1.0, -2.0, 3.0]), leaf(lib, [0.5, 4.0, -1.0])
        p, q = two_outputs(lib).apply(a, 3.0, b)
        loss = {"both": (p * p).sum() + q.sum(), "first": p.sum(), "second": (q * q).sum()}[use]
        loss.backward()
        found[name] = (p, q, a.grad, b.grad, p.grad_fn.name(), q.grad_fn.name())
    for mine, theirs in zip(found["mta"][:4], found["torch"][:4], strict=True):
        close(mine, theirs)
    assert found["mta"][4:] == found["torch"][4:]


def test_needs_input_grad_and_outputs_without_gradient_follow_pytorch() -> None:
    needs = {}
    for name, lib in LIBS.items():
        a, b = leaf(lib, [1.0]), lib.tensor(np.array([2.0]))
        p, _ = two_outputs(lib).apply(a, 2.0, b)
        needs[name] = p.grad_fn.seen_needs if name == "torch" else p.grad_fn.ctx.seen_needs
        with lib.no_grad():
            p2, _ = two_outputs(lib).apply(a, 2.0, b)
        assert not p2.requires_grad
    assert needs["mta"] == needs["torch"] == (True, False, False)


def exp_saving_its_output(lib: Any) -> Any:
    base: Any = lib.autograd.Function

    class Exp(base):
        @staticmethod
        def forward(ctx, x):
            result = x.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):  # differentiable: second derivatives work
            (result,) = ctx.saved_tensors
            return grad_output * result

    return Exp


def test_double_backward_through_a_custom_function_matches_pytorch() -> None:
    exp_fn = exp_saving_its_output(mta)
    assert gradcheck(exp_fn.apply, [leaf(mta, [0.3, -1.2])])
    assert gradgradcheck(exp_fn.apply, [leaf(mta, [0.3, -1.2])])
    found = {}
    for name, lib in LIBS.items():
        x = leaf(lib, [0.3, -1.2, 2.0])
        y = exp_saving_its_output(lib).apply(x * x)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        found[name] = (y, g, gg)
    for mine, theirs in zip(found["mta"], found["torch"], strict=True):
        close(mine, theirs)


def cube_with_setup_context(lib: Any) -> Any:
    base: Any = lib.autograd.Function

    class Cube(base):
        @staticmethod
        def forward(x, power):
            return x**power

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, power = inputs
            ctx.save_for_backward(x)
            ctx.power = power

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * ctx.power * x ** (ctx.power - 1), None

    return Cube


def test_setup_context_style_matches_pytorch_and_gradgradchecks() -> None:
    cube = cube_with_setup_context(mta)
    assert gradgradcheck(lambda t: cube.apply(t, 3), [leaf(mta, [0.5, -1.5])])
    found = {}
    for name, lib in LIBS.items():
        x = leaf(lib, [0.5, -1.5, 2.0])
        y = cube_with_setup_context(lib).apply(x, power=3)  # a keyword argument too
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        g.sum().backward()
        found[name] = (y, g, x.grad)
    for mine, theirs in zip(found["mta"], found["torch"], strict=True):
        close(mine, theirs)


def double_in_place(lib: Any) -> Any:
    base: Any = lib.autograd.Function

    class DoubleInPlace(base):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            x.mul_(2)
            return x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 2

    return DoubleInPlace


def test_mark_dirty_rebases_the_modified_input_like_pytorch() -> None:
    found = {}
    for name, lib in LIBS.items():
        w = leaf(lib, [1.0, -3.0])
        h = w * w
        out = double_in_place(lib).apply(h)
        assert out is h and h.grad_fn.name() == "DoubleInPlaceBackward"
        (h * 3).sum().backward()
        found[name] = (h, w.grad)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            double_in_place(lib).apply(leaf(lib, [1.0]))
    for mine, theirs in zip(found["mta"], found["torch"], strict=True):
        close(mine, theirs)


def nondifferentiable_calls(lib: Any) -> list[Any]:
    """What backward receives with marked outputs and unmaterialized gradients."""
    calls: list[Any] = []

    base: Any = lib.autograd.Function

    class MaxAndIndex(base):
        @staticmethod
        def forward(ctx, x):
            index = x.argmax()
            ctx.mark_non_differentiable(index)
            ctx.save_for_backward(x, index)
            return x.max(), index

        @staticmethod
        def backward(ctx, g, g_index):
            x, index = ctx.saved_tensors
            calls.append(host(g_index).tolist())
            grad = lib.zeros_like(x)
            grad[index] = g
            return grad

    class Pair(base):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            calls.append((g1 is None, g2 is None))
            return g1 * 2

    x = leaf(lib, [1.0, 5.0, 2.0])
    value, index = MaxAndIndex.apply(x)
    assert value.requires_grad and not index.requires_grad
    value.backward()
    Pair.apply(x)[0].sum().backward()
    calls.append(host(x.grad).tolist())
    return calls


def test_mark_non_differentiable_and_set_materialize_grads_like_pytorch() -> None:
    assert nondifferentiable_calls(mta) == nondifferentiable_calls(torch)


def test_once_differentiable_allows_one_backward_and_refuses_the_second() -> None:
    for lib in LIBS.values():
        base: Any = lib.autograd.Function

        class Square(base):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @once_differentiable if lib is mta else torch.autograd.function.once_differentiable
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return grad * 2 * x

        x, v = leaf(lib, [3.0, -1.0]), leaf(lib, [1.0, 1.0])
        (g,) = lib.autograd.grad(Square.apply(x), x, v, create_graph=True)
        np.testing.assert_array_equal(host(g), [6.0, -2.0])
        with pytest.raises(RuntimeError, match="trying to differentiate twice a function"):
            g.sum().backward()


def erroneous(lib: Any, returns: Any) -> Any:
    base: Any = lib.autograd.Function

    class Scale(base):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            return x * k

        @staticmethod
        def backward(ctx, grad_output):
            return returns(lib, grad_output)

    return Scale


BAD_GRADIENTS = {
    "too few": lambda lib, g: g,
    "too many": lambda lib, g: (g, None, g),
    "for a number": lambda lib, g: (g, lib.ones(1)),
    "wrong shape": lambda lib, g: (g[:2], None),
    "not a tensor": lambda lib, g: (3.0, None),
}


@pytest.mark.parametrize("case", sorted(BAD_GRADIENTS))
def test_bad_gradients_raise_pytorch_messages(case: str) -> None:
    messages = {}
    for name, lib in LIBS.items():
        x = leaf(lib, [1.0, 2.0, 3.0])
        with pytest.raises(RuntimeError) as error:
            erroneous(lib, BAD_GRADIENTS[case]).apply(x, 2.0).sum().backward()
        messages[name] = str(error.value)
    assert messages["mta"] == messages["torch"]


def test_trailing_nones_and_a_broadcastable_gradient_are_accepted_as_in_pytorch() -> None:
    found = {}
    for name, lib in LIBS.items():
        x = leaf(lib, [1.0, 2.0, 3.0])
        erroneous(lib, lambda lib, g: (g.expand(2, 3), None, None)).apply(x, 2.0).sum().backward()
        found[name] = x.grad
    close(found["mta"], found["torch"])


def test_saved_tensor_checks_and_missing_backward_match_pytorch() -> None:
    messages: dict[str, list[str]] = {"mta": [], "torch": []}
    for name, lib in LIBS.items():
        exp_fn = exp_saving_its_output(lib)
        x = leaf(lib, [1.0, 2.0])
        y = exp_fn.apply(x)
        y.mul_(2)
        with pytest.raises(RuntimeError) as error:
            y.sum().backward()
        messages[name].append(str(error.value).split(" Hint")[0])
        y = exp_fn.apply(x)
        y.sum().backward()
        with pytest.raises(RuntimeError) as error:
            y.grad_fn.saved_tensors  # noqa: B018  (freed by the backward)
        messages[name].append(str(error.value))

        base: Any = lib.autograd.Function

        class NoBackward(base):
            @staticmethod
            def forward(ctx, x):
                return x * 2

        with pytest.raises(NotImplementedError) as failure:
            NoBackward.apply(x).sum().backward()
        messages[name].append(str(failure.value))

        class DirtyNotReturned(base):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x.clone()

        with pytest.raises(RuntimeError) as error:
            DirtyNotReturned.apply(x * 1)
        messages[name].append(str(error.value))
    mine, theirs = messages["mta"], messages["torch"]
    assert mine[0].replace("float64", "torch.DoubleTensor") == theirs[0]
    assert mine[1:] == theirs[1:]


# ------------------------------------------------------------------ autograd.functional
def f_pair(a: Any, b: Any) -> Any:
    return (a * b.sin()).exp(), (a**2).sum() * b


def f_scalar(a: Any, b: Any) -> Any:
    return (a.exp() * b).sum() + (a * a * b).sum()


POINT = ([0.3, -0.7, 1.1], [1.5, 0.2, -0.4])
VECTOR = ([1.0, -2.0, 0.5], [0.25, 1.0, -1.0])


@pytest.mark.parametrize("name", ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"])
def test_functional_matches_pytorch_in_float64(name: str) -> None:
    found = {}
    for label, lib in LIBS.items():
        fns = lib.autograd.functional
        xs = tuple(lib.tensor(np.array(p)) for p in POINT)
        vs = tuple(lib.tensor(np.array(v)) for v in VECTOR)
        if name == "jacobian":
            result = fns.jacobian(f_pair, xs), fns.jacobian(lambda a: a.sin() * a, xs[0])
        elif name == "hessian":
            result = fns.hessian(f_scalar, xs), fns.hessian(lambda a: (a**3).sum(), xs[0])
        elif name == "vjp":
            result = fns.vjp(f_pair, xs, (vs[0], lib.tensor(np.array(VECTOR[1]))))
        elif name == "jvp":
            result = fns.jvp(f_pair, xs, vs)
        else:
            result = getattr(fns, name)(f_scalar, xs, vs)
        found[label] = result
    flat_mine = _flatten(found["mta"])
    flat_theirs = _flatten(found["torch"])
    assert len(flat_mine) == len(flat_theirs)
    for mine, theirs in zip(flat_mine, flat_theirs, strict=True):
        assert tuple(mine.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(host(mine), host(theirs), rtol=1e-12, atol=1e-12)


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        return [leafv for item in value for leafv in _flatten(item)]
    return [value]


def test_functional_create_graph_results_are_differentiable_like_pytorch() -> None:
    found = {}
    for label, lib in LIBS.items():
        fns = lib.autograd.functional
        x = leaf(lib, POINT[0])
        v = lib.tensor(np.array(VECTOR[0]))
        _, hv = fns.hvp(lambda a: (a.exp() * a).sum(), x, v, create_graph=True)
        _, jv = fns.jvp(lambda a: a.sin() * a, x, v, create_graph=True)
        (hv.sum() + (jv * jv).sum()).backward()
        found[label] = x.grad
    close(found["mta"], found["torch"])


def functional_messages(lib: Any) -> list[str]:
    """The errors of autograd.functional's misuses (sizes written as tuples)."""
    messages: list[str] = []
    fns = lib.autograd.functional
    x, y = lib.tensor(np.array([1.0, 2.0])), lib.tensor(np.array([3.0]))
    _, (gx, gy) = fns.vjp(lambda a, b: a * 2, (x, y), lib.ones(2, dtype=x.dtype))
    np.testing.assert_array_equal(host(gy), [0.0])
    calls = [
        lambda: fns.vjp(lambda a: a * 2, x),
        lambda: fns.vjp(lambda a: a * 2, x, lib.ones(3, dtype=x.dtype)),
        lambda: fns.hessian(lambda a: a * 2, x),
        lambda: fns.hvp(lambda a: a * 2, x, x),
        lambda: fns.jacobian(lambda a: a.detach() * 2, x, strict=True),
        lambda: fns.vjp(lambda a, b: (a * 2).sum(), (x, y), strict=True),
    ]
    for call in calls:
        with pytest.raises(RuntimeError) as error:
            call()
        messages.append(re.sub(r"torch\.Size\(\[(\d+)\]\)", r"(\1,)", str(error.value)))
    with pytest.raises(TypeError) as type_error:
        fns.jacobian(lambda a: 3, x)
    messages.append(str(type_error.value))
    return messages


def test_functional_unused_inputs_and_errors_match_pytorch() -> None:
    assert functional_messages(mta) == functional_messages(torch)


# ------------------------------------------------------------------ Module hooks
def twin_models() -> dict[str, Any]:
    """The same small model in both libraries, with the same weights."""
    models = {}
    for name, lib in LIBS.items():
        lib.manual_seed(0)
        models[name] = lib.nn.Sequential(
            lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2)
        ).double()
    state = {k: v.detach().numpy() for k, v in models["torch"].state_dict().items()}
    models["mta"].load_state_dict(state)
    return models


def record_hooks(model: Any, log: list[Any]) -> list[Any]:
    """Hooks of every kind on every module; each call logged with what it saw."""
    handles = []

    def values(items: Any) -> list[Any]:
        return [None if t is None else host(t).round(12).tolist() for t in items]

    for name, module in model.named_modules():
        label = name or "root"
        handles += [
            module.register_forward_pre_hook(
                lambda m, args, label=label: log.append(("pre", label, values(args)))
            ),
            module.register_forward_hook(
                lambda m, args, out, label=label: log.append(("fwd", label, values([out])))
            ),
            module.register_full_backward_pre_hook(
                lambda m, g, label=label: log.append(("bpre", label, values(g)))
            ),
            module.register_full_backward_hook(
                lambda m, gi, go, label=label: log.append(("bwd", label, values(gi), values(go)))
            ),
        ]
    return handles


@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_hook_order_and_arguments_match_pytorch(input_requires_grad: bool) -> None:
    logs: dict[str, list[Any]] = {"mta": [], "torch": []}
    models = twin_models()
    handles = {}
    for name, lib in LIBS.items():
        handles[name] = record_hooks(models[name], logs[name])
        x = lib.tensor(np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]))
        x.requires_grad_(input_requires_grad)
        models[name](x).sum().backward()
    assert logs["mta"] == logs["torch"]
    for name, lib in LIBS.items():
        for handle in handles[name]:
            handle.remove()
        logs[name].clear()
        models[name](lib.ones(1, 3, dtype=lib.float64, requires_grad=True)).sum().backward()
        assert logs[name] == []


def replacing_hooks(name: str) -> tuple[list[Any], tuple[Any, ...]]:
    """Hooks that replace arguments, outputs and gradients; the log and the results."""
    lib = LIBS[name]
    log: list[Any] = []
    model = twin_models()[name]
    first, relu = model[0], model[1]
    relu.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    relu.register_forward_hook(lambda m, args, out: log.append("second"))
    relu.register_forward_hook(lambda m, args, out: log.append("first"), prepend=True)
    first.register_forward_pre_hook(
        lambda m, args, kwargs: log.append(("kwargs", sorted(kwargs))), with_kwargs=True
    )
    first.register_forward_hook(lambda m, args, kwargs, out: out + 1, with_kwargs=True)
    first.register_full_backward_hook(lambda m, gi, go: (gi[0] * 3,))
    model[2].register_full_backward_pre_hook(lambda m, go: (go[0] * -1,))
    x = leaf(lib, [[0.5, -1.0, 2.0]])
    y = model(x)
    y.sum().backward()
    results = (y, x.grad, model[0].weight.grad)

    relu.register_forward_hook(lambda m, args, out: log.append(("always", out)), always_call=True)
    relu.register_forward_hook(lambda m, args, out: log.append("not on error"))
    with pytest.raises(TypeError):
        relu("not a tensor")
    return log, results


def test_hooks_that_replace_values_prepend_kwargs_and_always_call() -> None:
    log, results = replacing_hooks("mta")
    expected_log, expected = replacing_hooks("torch")
    assert log == expected_log
    for mine, theirs in zip(results, expected, strict=True):
        close(mine, theirs)


def test_global_module_hooks() -> None:
    from minitorch_accel.nn.module_hooks import register_module_forward_hook

    seen = []
    handle = register_module_forward_hook(lambda m, args, out: seen.append(type(m).__name__))
    try:
        twin_models()["mta"](mta.ones(1, 3, dtype="float64"))
    finally:
        handle.remove()
    assert seen == ["Linear", "ReLU", "Linear", "Sequential"]
    nn.ReLU()(mta.ones(1))
    assert len(seen) == 4


# ------------------------------------------------------------------ lookups and traversals
def shared_model(lib: Any) -> Any:
    shared = lib.nn.Linear(2, 2)
    model = lib.nn.Sequential(shared, lib.nn.BatchNorm1d(2), shared)
    return model


def test_get_parameter_get_buffer_and_named_traversals_match_pytorch() -> None:
    found: dict[str, list[Any]] = {}
    for name, lib in LIBS.items():
        model = shared_model(lib)
        out: list[Any] = [
            tuple(model.get_parameter("0.weight").shape),
            host(model.get_buffer("1.running_var")).tolist(),
        ]
        for remove_duplicate in (True, False):
            out.append(
                [n for n, _ in model.named_modules(prefix="m", remove_duplicate=remove_duplicate)]
            )
            out.append([n for n, _ in model.named_parameters("p", True, remove_duplicate)])
            out.append([n for n, _ in model.named_buffers("b", remove_duplicate=remove_duplicate)])
        out.append([n for n, _ in model.named_modules(memo={model[1]})])
        out.append([n for n, _ in model.named_parameters(recurse=False)])
        for target, getter in [
            ("0.nope", "get_parameter"),
            ("1.running_mean", "get_parameter"),
            ("0.weight", "get_buffer"),
            ("1.nope", "get_buffer"),
        ]:
            with pytest.raises(AttributeError) as error:
                getattr(model, getter)(target)
            out.append(str(error.value).strip("'\""))
        found[name] = out
    assert found["mta"] == found["torch"]
