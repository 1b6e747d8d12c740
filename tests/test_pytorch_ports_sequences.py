"""pytorch/examples programs ported by renaming ``torch`` to ``minitorch_accel``: the
variational autoencoder (``vae/main.py``), the polynomial regression
(``regression/main.py``), the sine waves predicted by two LSTM cells with L-BFGS
(``time_sequence_prediction/generate_sine_wave.py`` and ``train.py``) and the LSTM over
the rows of MNIST digits (``mnist_rnn/main.py``).

Each program's classes and functions are copied with only the imports changed; its
top-level script code is a ``main`` function, argparse's defaults are passed directly
(fewer epochs, steps and digits, so that a test takes seconds) and each ``main`` returns
the losses it printed. torchvision is not part of minitorch_accel: ``datasets.MNIST``
here reads the MNIST sample embedded in the package (nothing is downloaded), and
``save_image`` is :class:`ImageFiles`, which keeps what the program saves.

Each program then runs a second time under PyTorch: :func:`pytorch_twin` compiles the
same source again with the real ``torch`` modules as its globals. The two runs start
from the same weights (:class:`SharedStart`: each module the first run builds records its
initial ``state_dict``, and PyTorch's twin of it loads that), read the same batches
(each DataLoader the first run makes is a :class:`RecordedLoader`), draw the same
random numbers (``randn``/``randn_like``) and drop the same units, so their losses must
agree step by step and their final parameters at the end. Each program also has a
check that needs no PyTorch: its first loss against a NumPy reference written here, and
properties that can fail.
"""

# The programs' own style is kept: str.format and %, if/else blocks, unused loop
# variables, names such as W_target and BCE, super(Class, self).
# ruff: noqa: UP008, UP031, UP032, SIM108, B007, B023, N803, N806

from __future__ import annotations
import __future__

import inspect
import io
import math
import textwrap
import types
from collections.abc import Callable, Iterator
from itertools import count
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minitorch_accel as torch
import minitorch_accel.datasets
import minitorch_accel.nn as nn
import minitorch_accel.nn.functional as F
import minitorch_accel.optim as optim
import minitorch_accel.utils.data
from minitorch_accel import transforms
from minitorch_accel.optim.lr_scheduler import StepLR

mta = torch  # the framework under its own name, where the test (not the program) uses it


# ------------------------------------------------------------------ the two runs
def pytorch_twin(*programs: Any, **names: Any) -> dict[str, Any]:
    """The classes and functions ``programs`` (of this file) compiled again from their
    source, with the real PyTorch modules bound to the names this file binds to
    minitorch_accel, plus ``names``; the namespace they were compiled into."""
    real = pytest.importorskip("torch")
    namespace: dict[str, Any] = {
        "torch": real,
        "nn": real.nn,
        "F": real.nn.functional,
        "optim": real.optim,
        "StepLR": real.optim.lr_scheduler.StepLR,
        "np": np,
        "Any": Any,
        "count": count,
        **names,
    }
    for program in programs:
        source = textwrap.dedent(inspect.getsource(program))
        code = compile(
            source,
            str(inspect.getsourcefile(program)),
            "exec",
            flags=__future__.annotations.compiler_flag,
            dont_inherit=True,
        )
        exec(code, namespace)
    return namespace


@pytest.fixture
def real_torch() -> Iterator[Any]:
    """PyTorch (skipped without it), held at one thread while the test runs: on these
    small ops its pool of threads waits more than it works (4x slower here)."""
    real = pytest.importorskip("torch")
    before = real.get_num_threads()
    real.set_num_threads(1)
    yield real
    real.set_num_threads(before)


def as_numpy(t: Any) -> np.ndarray:
    """A copy of a minitorch_accel or PyTorch tensor's values."""
    return np.array(t.detach().cpu().numpy(), copy=True)


class SharedStart:
    """What the two runs of one program share besides the data.

    ``record`` (before the minitorch_accel run): every module of the given classes
    records its ``state_dict`` when its ``__init__`` returns, the given random factories
    (``randn``, ``randn_like``) record what they return, the given dropout modules which
    units they kept, and each ``torch.utils.data.DataLoader`` the program makes is a
    :class:`RecordedLoader`. ``replay`` (before PyTorch's run): PyTorch's modules of the
    same classes, built in the same order by the same program, load those states, its
    factories return the recorded values (checking that the shape asked for is the
    same), its dropout modules keep the same units, and its DataLoaders give the
    recorded batches.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.monkeypatch = monkeypatch
        self.states: list[dict[str, np.ndarray]] = []
        self.draws: list[np.ndarray] = []
        self.loaders: list[RecordedLoader] = []

    def record(
        self,
        classes: list[str],
        factories: tuple[str, ...] = (),
        dropouts: tuple[str, ...] = (),
        loaders: bool = False,
    ) -> None:
        if loaders:
            make = mta.utils.data.DataLoader

            def recorded_loader(*args: Any, **kwargs: Any) -> RecordedLoader:
                self.loaders.append(RecordedLoader(make(*args, **kwargs)))
                return self.loaders[-1]

            self.monkeypatch.setattr(mta.utils.data, "DataLoader", recorded_loader)
        for name in classes:
            cls = getattr(mta.nn, name)
            self.monkeypatch.setattr(cls, "__init__", self._recording_init(cls))
        for name in factories:
            self.monkeypatch.setattr(mta, name, self._recording(getattr(mta, name)))
        for name in dropouts:
            cls = getattr(mta.nn, name)
            self.monkeypatch.setattr(cls, "forward", self._recording_dropout(cls.forward))

    def replay(
        self,
        classes: list[str],
        factories: tuple[str, ...] = (),
        dropouts: tuple[str, ...] = (),
        loaders: bool = False,
    ) -> None:
        real = pytest.importorskip("torch")
        if loaders:
            recorded = iter(self.loaders)
            self.monkeypatch.setattr(
                real.utils.data, "DataLoader", lambda *args, **kwargs: next(recorded).replay()
            )
        for name in classes:
            cls = getattr(real.nn, name)
            self.monkeypatch.setattr(cls, "__init__", self._loading_init(cls, real))
        for name in factories:
            self.monkeypatch.setattr(real, name, self._replaying(getattr(real, name), real))
        for name in dropouts:
            self.monkeypatch.setattr(getattr(real.nn, name), "forward", self._replaying_dropout())

    def _recording_dropout(self, forward: Callable[..., Any]) -> Callable[..., Any]:
        """A dropout module's forward that records which units it kept (as draws), after
        checking that it kept them unchanged but for the scale ``1 / (1 - p)``."""

        def dropout(module: Any, input: Any) -> Any:
            out = forward(module, input)
            if module.training:
                kept = as_numpy(out) != 0
                want = np.where(kept, as_numpy(input) / (1 - module.p), 0)
                np.testing.assert_allclose(as_numpy(out), want, rtol=1e-6)
                self.draws.append(kept)
            return out

        return dropout

    def _replaying_dropout(self) -> Callable[..., Any]:
        def dropout(module: Any, input: Any) -> Any:
            if not module.training:
                return input
            kept = self.draws.pop(0)
            assert kept.shape == tuple(input.shape), (kept.shape, input.shape)
            return input * input.new_tensor(kept) / (1 - module.p)

        return dropout

    def _recording_init(self, cls: Any) -> Callable[..., None]:
        original = cls.__init__

        def init(module: Any, *args: Any, **kwargs: Any) -> None:
            original(module, *args, **kwargs)
            if type(module) is cls:
                self.states.append({k: as_numpy(v) for k, v in module.state_dict().items()})

        return init

    def _loading_init(self, cls: Any, real: Any) -> Callable[..., None]:
        original = cls.__init__

        def init(module: Any, *args: Any, **kwargs: Any) -> None:
            original(module, *args, **kwargs)
            if type(module) is cls:
                state = self.states.pop(0)
                assert list(state) == list(module.state_dict()), (cls, list(state))
                module.load_state_dict({k: real.from_numpy(v) for k, v in state.items()})

        return init

    def _recording(self, factory: Callable[..., Any]) -> Callable[..., Any]:
        def draw(*args: Any, **kwargs: Any) -> Any:
            out = factory(*args, **kwargs)
            self.draws.append(as_numpy(out))
            return out

        return draw

    def _replaying(self, factory: Callable[..., Any], real: Any) -> Callable[..., Any]:
        def draw(*args: Any, **kwargs: Any) -> Any:
            like = factory(*args, **kwargs)
            values = self.draws.pop(0)
            assert values.shape == tuple(like.shape), (values.shape, like.shape)
            return real.from_numpy(values).to(dtype=like.dtype, device=like.device)

        return draw


class RecordedLoader:
    """A loader's batches as NumPy arrays, one list per pass (epoch).

    Iterating it passes through ``loader`` (the minitorch_accel run) and records the
    batches; :meth:`replay` is a loader for PyTorch's run that gives the recorded passes
    in the same order, as PyTorch tensors.
    """

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.dataset = loader.dataset
        self.passes: list[list[tuple[np.ndarray, ...]]] = []

    def __len__(self) -> int:
        return len(self.loader)

    def __iter__(self) -> Iterator[Any]:
        self.passes.append([])
        for batch in self.loader:
            self.passes[-1].append(tuple(as_numpy(t) for t in batch))
            yield batch

    def replay(self) -> Any:
        real = pytest.importorskip("torch")
        passes = iter(self.passes)
        size = len(self.dataset)
        batches = len(self)

        class Replayed:
            dataset = range(size)

            def __len__(self) -> int:
                return batches

            def __iter__(self) -> Iterator[Any]:
                for batch in next(passes):
                    yield [real.from_numpy(a) for a in batch]

        return Replayed()


def numpy_lstm_step(
    x: np.ndarray, h: np.ndarray, c: np.ndarray, state: dict[str, np.ndarray], suffix: str
) -> tuple[np.ndarray, np.ndarray]:
    """One LSTM step in NumPy (gates i, f, g, o in PyTorch's order)."""
    gates = (
        x @ state["weight_ih" + suffix].T
        + state["bias_ih" + suffix]
        + h @ state["weight_hh" + suffix].T
        + state["bias_hh" + suffix]
    )
    i, f, g, o = np.split(gates, 4, axis=1)

    def sigmoid(v: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-v))

    c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    return sigmoid(o) * np.tanh(c), c


MNIST_DIGITS = {True: 512, False: 256}  # training and test digits the programs read


class datasets:  # noqa: N801  (stands for torchvision.datasets)
    """What the programs import as ``torchvision.datasets``: its ``MNIST`` is the first
    digits of the MNIST sample embedded in minitorch_accel (nothing is downloaded)."""

    @staticmethod
    def MNIST(  # noqa: N802  (torchvision's name)
        root: str, train: bool = True, download: bool = False, transform: Any = None
    ) -> Any:
        digits = mta.datasets.MNIST(sample=True, train=train, transform=transform)
        return mta.utils.data.Subset(digits, range(MNIST_DIGITS[train]))


# ================================================================== regression/main.py
POLY_DEGREE = 4


def regression_main() -> tuple[list[float], Any, Any, Any]:
    W_target = torch.randn(POLY_DEGREE, 1) * 5
    b_target = torch.randn(1) * 5

    def make_features(x: Any) -> Any:
        """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
        x = x.unsqueeze(1)
        return torch.cat([x**i for i in range(1, POLY_DEGREE + 1)], 1)

    def f(x: Any) -> Any:
        """Approximated function."""
        return x.mm(W_target) + b_target.item()

    def poly_desc(W: Any, b: Any) -> str:
        """Creates a string description of a polynomial."""
        result = "y = "
        for i, w in enumerate(W):
            result += "{:+.2f} x^{} ".format(w, i + 1)
        result += "{:+.2f}".format(b[0])
        return result

    def get_batch(batch_size: int = 32) -> tuple[Any, Any]:
        """Builds a batch i.e. (x, f(x)) pair."""
        random = torch.randn(batch_size)
        x = make_features(random)
        y = f(x)
        return x, y

    # Define model
    fc = torch.nn.Linear(W_target.size(0), 1)

    losses = []
    for batch_idx in count(1):
        # Get data
        batch_x, batch_y = get_batch()

        # Reset gradients
        fc.zero_grad()

        # Forward pass
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()
        losses.append(loss)

        # Backward pass
        output.backward()

        # Apply gradients
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)

        # Stop criterion
        if loss < 1e-3:
            break

    print("Loss: {:.6f} after {} batches".format(loss, batch_idx))
    print("==> Learned function:\t" + poly_desc(fc.weight.view(-1), fc.bias))
    print("==> Actual function:\t" + poly_desc(W_target.view(-1), b_target))
    return losses, fc, W_target, b_target


def numpy_regression(draws: list[np.ndarray], state: dict[str, np.ndarray]) -> list[float]:
    """The regression's losses in float64 NumPy, from the same draws and first weights:
    smooth L1 (beta 1) of a linear model, its gradient written out by hand."""
    w_target, b_target = draws[0] * 5, draws[1] * 5
    weight, bias = state["weight"].astype(np.float64), state["bias"].astype(np.float64)
    losses = []
    for random in draws[2:]:
        x = np.stack([random.astype(np.float64) ** i for i in range(1, POLY_DEGREE + 1)], 1)
        y = x @ w_target + b_target
        diff = x @ weight.T + bias - y
        small = np.abs(diff) < 1.0
        losses.append(float(np.where(small, 0.5 * diff**2, np.abs(diff) - 0.5).mean()))
        grad_out = np.where(small, diff, np.sign(diff)) / diff.size
        weight = weight - 0.1 * grad_out.T @ x
        bias = bias - 0.1 * grad_out.sum(0)
    return losses


def run_regression(monkeypatch: pytest.MonkeyPatch, dtype: Any) -> Any:
    """The program run with ``dtype`` as the default dtype (float32 as written, float64
    for the comparisons).

    With a step of 0.1 on features up to x^4, some steps overshoot (the smooth L1 loss's
    clipped gradient keeps them bounded), so the descent amplifies rounding about a
    million times over its ~600 steps, in PyTorch as here: float32 runs part by 1e-4 of
    a loss after ~120 steps, float64 runs by ~5e-8. Comparisons allow 1e-6 in float64
    over the whole run, and 1e-5 in float32 over the first 100 steps.
    """
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        torch.manual_seed(0)
        shared = SharedStart(monkeypatch)
        shared.record(["Linear"], ("randn",))
        losses, fc, w_target, b_target = regression_main()
        monkeypatch.undo()
    finally:
        torch.set_default_dtype(previous)
    return types.SimpleNamespace(
        losses=losses, fc=fc, w_target=w_target, b_target=b_target, shared=shared
    )


def pytorch_regression(run: Any, dtype: Any) -> Any:
    real = pytest.importorskip("torch")
    twin = pytorch_twin(regression_main, POLY_DEGREE=POLY_DEGREE)
    previous = real.get_default_dtype()
    real.set_default_dtype(dtype)
    try:
        run.shared.replay(["Linear"], ("randn",))
        losses, fc, w_target, _ = twin["regression_main"]()
    finally:
        real.set_default_dtype(previous)
    assert not run.shared.states and not run.shared.draws  # the same modules and draws
    return types.SimpleNamespace(losses=losses, fc=fc, w_target=w_target)


def test_the_regression_program_fits_the_polynomial(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = run_regression(monkeypatch, torch.float32)
    assert run.fc.weight.dtype == torch.float32
    assert run.losses[-1] < 1e-3 <= min(run.losses[:-1])  # it stopped at the first one
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"Loss: {run.losses[-1]:.6f} after {len(run.losses)} batches"
    learned = [float(v) for v in lines[1].split("\t")[1].split()[2::2]]  # y = +1.23 x^1 ...
    actual = [float(v) for v in lines[2].split("\t")[1].split()[2::2]]
    want = [*as_numpy(run.w_target).reshape(-1), as_numpy(run.b_target)[0]]
    np.testing.assert_allclose(actual, want, atol=0.005 + 1e-6)
    np.testing.assert_allclose(learned, want, atol=0.2)
    # Until rounding is amplified (see run_regression), float32 follows float64 NumPy.
    reference = numpy_regression(run.shared.draws, run.shared.states[0])
    np.testing.assert_allclose(run.losses[:100], reference[:100], rtol=1e-5)


def test_the_regression_program_in_float64_is_numpy_s_gradient_descent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = run_regression(monkeypatch, torch.float64)
    reference = numpy_regression(run.shared.draws, run.shared.states[0])
    np.testing.assert_allclose(run.losses, reference, rtol=1e-6)  # see run_regression
    assert run.losses[-1] < 1e-3 <= min(run.losses[:-1])


def test_the_regression_program_matches_pytorch(
    monkeypatch: pytest.MonkeyPatch, real_torch: Any
) -> None:
    real = real_torch
    run = run_regression(monkeypatch, torch.float64)
    twin = pytorch_regression(run, real.float64)
    assert len(twin.losses) == len(run.losses)
    np.testing.assert_allclose(run.losses[:100], twin.losses[:100], rtol=1e-12)
    np.testing.assert_allclose(run.losses, twin.losses, rtol=1e-6)  # see run_regression
    np.testing.assert_allclose(as_numpy(run.fc.weight), as_numpy(twin.fc.weight), rtol=1e-6)
    np.testing.assert_allclose(as_numpy(run.fc.bias), as_numpy(twin.fc.bias), rtol=1e-6)
    np.testing.assert_array_equal(as_numpy(run.w_target), as_numpy(twin.w_target))
    # As written (float32): the same until rounding is amplified (see run_regression).
    run = run_regression(monkeypatch, torch.float32)
    twin = pytorch_regression(run, real.float32)
    assert twin.fc.weight.dtype == real.float32
    np.testing.assert_allclose(run.losses[:100], twin.losses[:100], rtol=1e-5)


# ------------------------------------------- defects the regression program found
NON_FINITE = [-math.inf, -2.0, -0.0, 0.0, 0.5, 2.0, math.inf, math.nan]
FORMAT_SPECS = ["", ".3f", "+.2f", "e", ">10.4g", ".0%"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_0d_tensor_formats_as_its_number(dtype: str) -> None:
    """``"{:+.2f}".format(w)`` for a 0-d tensor (``poly_desc``) raised TypeError."""
    for value in NON_FINITE:
        t = torch.tensor(value, dtype=getattr(torch, dtype))
        for spec in FORMAT_SPECS:
            want = format(float(np.array(value, dtype=dtype)), spec)  # NumPy, then Python
            assert format(t, spec) == want, (value, spec)
    w = torch.tensor([1.5, -2.25], requires_grad=True).view(-1)[1]  # a graph, as poly_desc
    assert "{:+.2f} x^{} ".format(w, 2) == "-2.25 x^2 "
    assert f"{torch.tensor(7):>4d}|{torch.tensor(True)}" == "   7|True"
    assert format(torch.tensor([1.0, 2.0]), "") == str(torch.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="unsupported format string"):
        format(torch.tensor([1.0]), ".2f")  # one element, but not 0-d: as PyTorch


def test_tensor_format_matches_pytorch(real_torch: Any) -> None:
    for dtype in ["float32", "float64", "float16"]:
        for value in NON_FINITE + [0.1, 1e-8, 123456.789]:
            ours = torch.tensor(value, dtype=getattr(torch, dtype))
            theirs = real_torch.tensor(value, dtype=getattr(real_torch, dtype))
            for spec in FORMAT_SPECS:
                assert format(ours, spec) == format(theirs, spec), (dtype, value, spec)
    for value in [-3, 0, 7]:
        for spec in ["", "d", ">5", "+d", "x"]:
            assert format(torch.tensor(value), spec) == format(real_torch.tensor(value), spec)
    assert format(torch.tensor(False), "") == format(real_torch.tensor(False), "")
    for make in (torch.tensor, real_torch.tensor):
        with pytest.raises(TypeError, match="unsupported format string passed to Tensor"):
            format(make([1.0, 2.0]), ".2f")


# ================================================ time_sequence_prediction/*.py
SINE_LENGTH = 30  # L: 1000 in the program; shorter, so that a test takes seconds
SINE_COUNT = 7  # N: 100 in the program; the first 3 are the test set
FUTURE = 20  # 1000 in the program


def generate_sine_wave() -> None:
    np.random.seed(2)

    T = 20
    L = SINE_LENGTH
    N = SINE_COUNT

    x = np.empty((N, L), "int64")
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    data = np.sin(x / 1.0 / T).astype("float64")
    torch.save(data, open("traindata.pt", "wb"))  # noqa: SIM115  (the program's idiom)


# --------------------------------------- defects the time-sequence program found
def test_save_and_load_take_open_files(tmp_path: Path) -> None:
    """``torch.save(data, open('traindata.pt', 'wb'))`` raised TypeError: save and load
    took only paths."""
    data = np.sin(np.arange(12.0)).reshape(3, 4)
    state = {"w": torch.tensor([[1.0, -0.0], [math.inf, math.nan]]), "step": 3, "x": data}
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)
    assert buffer.read() == b""  # read to the end, as PyTorch
    assert loaded["step"] == 3 and loaded["x"].dtype == np.float64
    np.testing.assert_array_equal(loaded["x"], data)
    w = as_numpy(loaded["w"])
    np.testing.assert_array_equal(w, as_numpy(state["w"]))
    assert np.signbit(w[0, 1]) and np.isnan(w[1, 1])  # -0.0 and NaN kept bit for bit
    torch.save(data, open(tmp_path / "traindata.pt", "wb"))  # noqa: SIM115  (the idiom)
    np.testing.assert_array_equal(torch.load(tmp_path / "traindata.pt"), data)
    with open(tmp_path / "traindata.pt", "rb") as f:
        np.testing.assert_array_equal(torch.load(f), data)
    with pytest.raises(ValueError, match="<file object>' is not a minitorch_accel checkpoint"):
        torch.load(io.BytesIO(b"\x80\x02 a pickle"))
    (tmp_path / "empty.pt").write_bytes(b"")
    with open(tmp_path / "empty.pt", "rb") as f, pytest.raises(ValueError, match="is empty"):
        torch.load(f)
    with open(tmp_path / "text.pt", "w") as f, pytest.raises(TypeError, match="binary mode"):
        torch.save(data, f)
    with open(tmp_path / "text.pt") as f, pytest.raises(TypeError, match="binary mode"):
        torch.load(f)


def test_open_safetensors_files(tmp_path: Path) -> None:
    pytest.importorskip("safetensors")
    w = torch.tensor([[1.0, -0.0], [math.inf, math.nan]])
    with open(tmp_path / "model.safetensors", "wb") as f:  # the format from the file's name
        torch.save({"w": w}, f)
    with open(tmp_path / "model.safetensors", "rb") as f:
        assert f.read(1) != b"P"  # not a zip (.npz) file
        f.seek(0)
        np.testing.assert_array_equal(as_numpy(torch.load(f)["w"]), as_numpy(w))
    buffer = io.BytesIO()
    torch.save({"w": w}, buffer, format="safetensors")
    buffer.seek(0)
    loaded = as_numpy(torch.load(buffer, format="safetensors")["w"])
    np.testing.assert_array_equal(loaded.view(np.uint32), as_numpy(w).view(np.uint32))


def test_save_and_load_with_open_files_match_pytorch(tmp_path: Path, real_torch: Any) -> None:
    data = np.sin(np.arange(-3.0, 9.0)).reshape(3, 4)
    real_torch.save(data, open(tmp_path / "pytorch.pt", "wb"))  # noqa: SIM115
    torch.save(data, open(tmp_path / "ours.pt", "wb"))  # noqa: SIM115
    theirs = real_torch.load(tmp_path / "pytorch.pt", weights_only=False)
    ours = torch.load(tmp_path / "ours.pt")
    assert type(ours) is type(theirs) and ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)
    values = [-math.inf, -2.0, -0.0, 0.0, 0.5, 2.0, math.inf, math.nan]
    ours_buffer, theirs_buffer = io.BytesIO(), io.BytesIO()
    torch.save({"w": torch.tensor(values)}, ours_buffer)
    real_torch.save({"w": real_torch.tensor(values)}, theirs_buffer)
    for buffer in (ours_buffer, theirs_buffer):
        buffer.seek(0)
    got = as_numpy(torch.load(ours_buffer)["w"])
    want = as_numpy(real_torch.load(theirs_buffer)["w"])
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


class Sequence(nn.Module):
    def __init__(self) -> None:
        super(Sequence, self).__init__()
        self.lstm1 = nn.LSTMCell(1, 51)
        self.lstm2 = nn.LSTMCell(51, 51)
        self.linear = nn.Linear(51, 1)

    def forward(self, input: Any, future: int = 0) -> Any:
        outputs: Any = []
        h_t = torch.zeros(input.size(0), 51, dtype=torch.double)
        c_t = torch.zeros(input.size(0), 51, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):  # if we should predict the future
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


def time_sequence_main(opt: Any) -> tuple[list[float], list[float], Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # set random seed to 0
    np.random.seed(0)
    torch.manual_seed(0)
    # load data and make training set
    data = torch.load("traindata.pt")
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])
    # build the model
    seq = Sequence()
    seq.double()
    criterion = nn.MSELoss()
    # use LBFGS as optimizer since we can load the whole data to train
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8)
    losses, test_losses = [], []
    # begin to train
    for i in range(opt.steps):
        print("STEP: ", i)

        def closure() -> Any:
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            print("loss:", loss.item())
            losses.append(loss.item())
            loss.backward()
            return loss

        optimizer.step(closure)
        # begin to predict, no need to track gradient here
        with torch.no_grad():
            future = FUTURE
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            print("test loss:", loss.item())
            test_losses.append(loss.item())
            y = pred.detach().numpy()
        # draw the result
        plt.figure(figsize=(30, 10))
        plt.title(
            "Predict future values for time sequences\n(Dashlines are predicted values)",
            fontsize=30,
        )
        plt.xlabel("x", fontsize=20)
        plt.ylabel("y", fontsize=20)
        plt.xticks(fontsize=20)
        plt.yticks(fontsize=20)

        def draw(yi: Any, color: str) -> None:
            plt.plot(np.arange(input.size(1)), yi[: input.size(1)], color, linewidth=2.0)
            plt.plot(
                np.arange(input.size(1), input.size(1) + future),
                yi[input.size(1) :],
                color + ":",
                linewidth=2.0,
            )

        draw(y[0], "r")
        draw(y[1], "g")
        draw(y[2], "b")
        plt.savefig("predict%d.pdf" % i)
        plt.close()
    return losses, test_losses, y, seq


def numpy_sequence(data: np.ndarray, states: list[dict[str, np.ndarray]]) -> np.ndarray:
    """The Sequence model's outputs in NumPy (float64) from its recorded weights."""
    lstm1, lstm2, linear = states
    x = data[3:, :-1]
    h = c = h2 = c2 = np.zeros((len(x), 51))
    outputs = []
    for t in range(x.shape[1]):
        h, c = numpy_lstm_step(x[:, t : t + 1], h, c, lstm1, "")
        h2, c2 = numpy_lstm_step(h, h2, c2, lstm2, "")
        outputs.append(h2 @ linear["weight"].T + linear["bias"])
    return np.concatenate(outputs, axis=1)


def run_time_sequence(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    pytest.importorskip("matplotlib")
    folder.mkdir()
    monkeypatch.chdir(folder)
    shared = SharedStart(monkeypatch)
    shared.record(["LSTMCell", "Linear"])
    generate_sine_wave()
    data = torch.load("traindata.pt")
    losses, test_losses, y, seq = time_sequence_main(types.SimpleNamespace(steps=2))
    monkeypatch.undo()
    return types.SimpleNamespace(
        losses=losses, test_losses=test_losses, y=y, seq=seq, data=data, shared=shared
    )


def test_the_time_sequence_program_trains_two_lstm_cells_with_lbfgs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = run_time_sequence(tmp_path / "minitorch_accel", monkeypatch)
    assert isinstance(run.data, np.ndarray) and run.data.dtype == np.float64
    assert run.data.shape == (SINE_COUNT, SINE_LENGTH)
    assert all(p.dtype == torch.float64 for p in run.seq.parameters())
    assert run.y.shape == (3, SINE_LENGTH - 1 + FUTURE) and run.y.dtype == np.float64
    assert sorted(p.name for p in (tmp_path / "minitorch_accel").iterdir()) == [
        "predict0.pdf",
        "predict1.pdf",
        "traindata.pt",
    ]
    # The first closure: the loss of the first weights, as NumPy computes it.
    states = [{k: v.astype(np.float64) for k, v in s.items()} for s in run.shared.states]
    want = np.mean((numpy_sequence(run.data, states) - run.data[3:, 1:]) ** 2)
    np.testing.assert_allclose(run.losses[0], want, rtol=1e-12)
    # L-BFGS: at most max_eval = 25 evaluations a step, and the loss falls.
    assert 2 < len(run.losses) <= 50
    assert run.losses[-1] < 0.5 * run.losses[0]
    assert run.test_losses[1] < run.test_losses[0]


def test_the_time_sequence_program_matches_pytorch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_torch: Any
) -> None:
    real = real_torch
    run = run_time_sequence(tmp_path / "minitorch_accel", monkeypatch)
    twin = pytorch_twin(
        generate_sine_wave,
        Sequence,
        time_sequence_main,
        SINE_LENGTH=SINE_LENGTH,
        SINE_COUNT=SINE_COUNT,
        FUTURE=FUTURE,
    )
    (tmp_path / "pytorch").mkdir()
    monkeypatch.chdir(tmp_path / "pytorch")
    # PyTorch 2.6 made torch.load's weights_only=True the default, which refuses the
    # NumPy array this program saves; load as PyTorch did when the program was written.
    load = real.load
    monkeypatch.setattr(real, "load", lambda f: load(f, weights_only=False))
    run.shared.replay(["LSTMCell", "Linear"])
    twin["generate_sine_wave"]()
    np.testing.assert_array_equal(real.load("traindata.pt"), run.data)
    losses, test_losses, y, seq = twin["time_sequence_main"](types.SimpleNamespace(steps=2))
    assert not run.shared.states
    # float64 throughout: the same evaluations (L-BFGS asks for as many), equal to
    # rounding that the 40 L-BFGS iterations amplify little.
    assert len(losses) == len(run.losses)
    np.testing.assert_allclose(run.losses, losses, rtol=1e-9)
    np.testing.assert_allclose(run.test_losses, test_losses, rtol=1e-9)
    np.testing.assert_allclose(run.y, y, rtol=1e-9, atol=1e-12)
    assert [n for n, _ in run.seq.named_parameters()] == [n for n, _ in seq.named_parameters()]
    for ours, theirs in zip(run.seq.parameters(), seq.parameters(), strict=True):
        np.testing.assert_allclose(as_numpy(ours), as_numpy(theirs), rtol=1e-9, atol=1e-10)


# ================================================================== mnist_rnn/main.py
class Net(nn.Module):
    def __init__(self) -> None:
        super(Net, self).__init__()
        self.rnn = nn.LSTM(input_size=28, hidden_size=64, batch_first=True)
        self.batchnorm = nn.BatchNorm1d(64)
        self.dropout1 = nn.Dropout2d(0.25)
        self.dropout2 = nn.Dropout2d(0.5)
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, input: Any) -> Any:
        # Shape of input is (batch_size,1, 28, 28)
        # converting shape of input to (batch_size, 28, 28)
        # as required by RNN when batch_first is set True
        input = input.reshape(-1, 28, 28)
        output, hidden = self.rnn(input)

        # RNN output shape is (seq_len, batch, input_size)
        # Get last output of RNN
        output = output[:, -1, :]
        output = self.batchnorm(output)
        output = self.dropout1(output)
        output = self.fc1(output)
        output = F.relu(output)
        output = self.dropout2(output)
        output = self.fc2(output)
        output = F.log_softmax(output, dim=1)
        return output


def train(
    args: Any, model: Any, device: Any, train_loader: Any, optimizer: Any, epoch: int
) -> list[float]:
    model.train()
    losses = []
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if batch_idx % args.log_interval == 0:
            print(
                "Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                    epoch,
                    batch_idx * len(data),
                    len(train_loader.dataset),
                    100.0 * batch_idx / len(train_loader),
                    loss.item(),
                )
            )
            if args.dry_run:
                break
    return losses


def test(args: Any, model: Any, device: Any, test_loader: Any) -> tuple[float, int]:
    model.eval()
    test_loss: float = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)  # get the index of the max log-probability
            correct += pred.eq(target.view_as(pred)).sum().item()
            if args.dry_run:
                break

    test_loss /= len(test_loader.dataset)

    print(
        "\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n".format(
            test_loss,
            correct,
            len(test_loader.dataset),
            100.0 * correct / len(test_loader.dataset),
        )
    )
    return test_loss, correct


test.__test__ = False  # type: ignore[attr-defined]  # the program's name, not a pytest test


def mnist_rnn_main(args: Any) -> tuple[Any, list[Any]]:
    if args.accel:
        device = torch.accelerator.current_accelerator()
    else:
        device = torch.device("cpu")

    torch.manual_seed(args.seed)

    kwargs = {"num_workers": 1, "pin_memory": True} if args.accel else {}
    train_loader = torch.utils.data.DataLoader(
        datasets.MNIST(
            "../data",
            train=True,
            download=True,
            transform=transforms.Compose(
                [transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))]
            ),
        ),
        batch_size=args.batch_size,
        shuffle=True,
        **kwargs,
    )
    test_loader = torch.utils.data.DataLoader(
        datasets.MNIST(
            "../data",
            train=False,
            transform=transforms.Compose(
                [transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))]
            ),
        ),
        batch_size=args.test_batch_size,
        shuffle=True,
        **kwargs,
    )

    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    history: list[Any] = []
    for epoch in range(1, args.epochs + 1):
        history.append(train(args, model, device, train_loader, optimizer, epoch))
        history.append(test(args, model, device, test_loader))
        scheduler.step()

    if args.save_model:
        torch.save(model.state_dict(), "mnist_rnn.pt")
    return model, history


MNIST_RNN_ARGS = dict(
    batch_size=64,
    test_batch_size=1000,
    epochs=1,  # 14 in the program
    lr=0.1,
    gamma=0.7,
    accel=False,
    dry_run=False,
    seed=1,
    log_interval=10,
    save_model=True,  # False in the program: the saved file is checked here
)


def numpy_mnist_rnn_loss(
    data: np.ndarray, target: np.ndarray, states: list[dict[str, np.ndarray]], masks: list[Any]
) -> float:
    """The loss of the first step in NumPy (float64): LSTM, the last step's output,
    BatchNorm with the batch's statistics, the recorded dropout masks, two linear layers,
    log-softmax and the mean negative log-likelihood."""
    lstm, _, fc1, fc2 = ({k: v.astype(np.float64) for k, v in s.items()} for s in states)
    x = data.reshape(-1, 28, 28).astype(np.float64)
    h = c = np.zeros((len(x), 64))
    for t in range(28):
        h, c = numpy_lstm_step(x[:, t], h, c, lstm, "_l0")
    z = (h - h.mean(0)) / np.sqrt(h.var(0) + 1e-5) * masks[0] / 0.75
    z = np.maximum(z @ fc1["weight"].T + fc1["bias"], 0.0) * masks[1] / 0.5
    z = z @ fc2["weight"].T + fc2["bias"]
    log_p = z - z.max(1, keepdims=True)
    log_p = log_p - np.log(np.exp(log_p).sum(1, keepdims=True))
    return float(-log_p[np.arange(len(target)), target].mean())


RNN_SHARED = dict(classes=["LSTM", "BatchNorm1d", "Linear"], dropouts=("Dropout2d",), loaders=True)


def run_mnist_rnn(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.chdir(folder)
    args = types.SimpleNamespace(**MNIST_RNN_ARGS)
    shared = SharedStart(monkeypatch)
    shared.record(**RNN_SHARED)  # type: ignore[arg-type]
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        model, history = mnist_rnn_main(args)
    monkeypatch.undo()
    return types.SimpleNamespace(args=args, model=model, history=history, shared=shared)


def test_the_mnist_rnn_program_trains_an_lstm_over_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = run_mnist_rnn(tmp_path, monkeypatch)
    losses, (test_loss, correct) = run.history
    assert len(losses) == MNIST_DIGITS[True] // 64
    assert len(run.shared.draws) == 2 * len(losses)  # two dropout masks a step
    data, target = run.shared.loaders[0].passes[0][0]
    assert data.shape == (64, 1, 28, 28) and data.dtype == np.float32
    want = numpy_mnist_rnn_loss(data, target, run.shared.states, run.shared.draws[:2])
    np.testing.assert_allclose(losses[0], want, rtol=1e-5)  # float32 against float64
    assert math.isfinite(test_loss) and 0 <= correct <= MNIST_DIGITS[False]
    # A few steps of Adadelta at lr 0.1 learn little; they move every parameter.
    for (name, p), start in zip(run.model.named_parameters(), _initial(run), strict=True):
        assert not np.array_equal(as_numpy(p), start[name.split(".")[1]]), name
    assert run.model.batchnorm.num_batches_tracked.item() == len(losses)
    again = Net()
    again.load_state_dict(torch.load(tmp_path / "mnist_rnn.pt"))
    for (name, ours), theirs in zip(
        run.model.state_dict().items(), again.state_dict().values(), strict=True
    ):
        np.testing.assert_array_equal(as_numpy(ours), as_numpy(theirs), err_msg=name)
    # manual_seed(args.seed) makes the run repeat: the same batches and the same losses.
    folder = tmp_path / "again"
    folder.mkdir()
    second = run_mnist_rnn(folder, monkeypatch)
    assert second.history == run.history


def _initial(run: Any) -> list[dict[str, np.ndarray]]:
    """The recorded first state of the module each parameter belongs to, in order."""
    lstm, batchnorm, fc1, fc2 = run.shared.states
    return [lstm] * 4 + [batchnorm] * 2 + [fc1] * 2 + [fc2] * 2


def test_the_mnist_rnn_program_matches_pytorch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_torch: Any
) -> None:
    run = run_mnist_rnn(tmp_path, monkeypatch)
    twin = pytorch_twin(Net, train, test, mnist_rnn_main, datasets=datasets, transforms=transforms)
    (tmp_path / "pytorch").mkdir()
    monkeypatch.chdir(tmp_path / "pytorch")
    run.shared.replay(**RNN_SHARED)
    model, history = twin["mnist_rnn_main"](run.args)
    assert not run.shared.states and not run.shared.draws
    # float32, the same ops summed in other orders (GEMMs, the LSTM's 28 steps): the
    # losses agree to ~1e-7 and the parameters to ~3e-8 here; the bounds leave room.
    np.testing.assert_allclose(run.history[0], history[0], rtol=2e-6)
    np.testing.assert_allclose(run.history[1][0], history[1][0], rtol=2e-6)
    assert run.history[1][1] == history[1][1]
    theirs = model.state_dict()
    assert list(run.model.state_dict()) == list(theirs)
    for name, ours in run.model.state_dict().items():
        np.testing.assert_allclose(
            as_numpy(ours), as_numpy(theirs[name]), rtol=1e-5, atol=1e-6, err_msg=name
        )
    assert (tmp_path / "pytorch" / "mnist_rnn.pt").exists()


# ======================================================================== vae/main.py
class VAE(nn.Module):
    def __init__(self) -> None:
        super(VAE, self).__init__()

        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)

    def encode(self, x: Any) -> tuple[Any, Any]:
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu: Any, logvar: Any) -> Any:
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z: Any) -> Any:
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x: Any) -> tuple[Any, Any, Any]:
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


class ImageFiles:
    """A stand-in for ``torchvision.utils.save_image`` (torchvision is not part of
    minitorch_accel): it keeps what the program asks it to save."""

    def __init__(self) -> None:
        self.saved: dict[str, tuple[np.ndarray, int]] = {}

    def save_image(self, tensor: Any, fp: str, nrow: int = 8) -> None:
        self.saved[fp] = (as_numpy(tensor), nrow)


def vae_main(args: Any, save_image: Any) -> list[Any]:
    use_accel = not args.no_accel and torch.accelerator.is_available()

    torch.manual_seed(args.seed)

    if use_accel:
        device = torch.accelerator.current_accelerator()
    else:
        device = torch.device("cpu")

    print(f"Using device: {device}")

    kwargs = {"num_workers": 1, "pin_memory": True} if use_accel else {}
    train_loader = torch.utils.data.DataLoader(
        datasets.MNIST("../data", train=True, download=True, transform=transforms.ToTensor()),
        batch_size=args.batch_size,
        shuffle=True,
        **kwargs,
    )
    test_loader = torch.utils.data.DataLoader(
        datasets.MNIST("../data", train=False, transform=transforms.ToTensor()),
        batch_size=args.batch_size,
        shuffle=False,
        **kwargs,
    )

    model = VAE().to(device)
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    history: list[Any] = []

    # Reconstruction + KL divergence losses summed over all elements and batch
    def loss_function(recon_x: Any, x: Any, mu: Any, logvar: Any) -> Any:
        BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction="sum")

        # see Appendix B from VAE paper:
        # Kingma and Welling. Auto-Encoding Variational Bayes. ICLR, 2014
        # https://arxiv.org/abs/1312.6114
        # 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
        KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())

        return BCE + KLD

    def train(epoch: int) -> None:
        model.train()
        train_loss = 0
        for batch_idx, (data, _) in enumerate(train_loader):
            data = data.to(device)
            optimizer.zero_grad()
            recon_batch, mu, logvar = model(data)
            loss = loss_function(recon_batch, data, mu, logvar)
            loss.backward()
            train_loss += loss.item()
            optimizer.step()
            history.append(loss.item())
            if batch_idx % args.log_interval == 0:
                print(
                    "Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                        epoch,
                        batch_idx * len(data),
                        len(train_loader.dataset),
                        100.0 * batch_idx / len(train_loader),
                        loss.item() / len(data),
                    )
                )

        print(
            "====> Epoch: {} Average loss: {:.4f}".format(
                epoch, train_loss / len(train_loader.dataset)
            )
        )

    def test(epoch: int) -> None:
        model.eval()
        test_loss: float = 0
        with torch.no_grad():
            for i, (data, _) in enumerate(test_loader):
                data = data.to(device)
                recon_batch, mu, logvar = model(data)
                test_loss += loss_function(recon_batch, data, mu, logvar).item()
                if i == 0:
                    n = min(data.size(0), 8)
                    comparison = torch.cat(
                        [data[:n], recon_batch.view(args.batch_size, 1, 28, 28)[:n]]
                    )
                    save_image(
                        comparison.cpu(), "results/reconstruction_" + str(epoch) + ".png", nrow=n
                    )

        test_loss /= len(test_loader.dataset)
        print("====> Test set loss: {:.4f}".format(test_loss))
        history.append(test_loss)

    for epoch in range(1, args.epochs + 1):
        train(epoch)
        test(epoch)
        with torch.no_grad():
            sample = torch.randn(64, 20).to(device)
            sample = model.decode(sample).cpu()
            save_image(sample.view(64, 1, 28, 28), "results/sample_" + str(epoch) + ".png")
    history.append(model)
    return history


VAE_ARGS = dict(batch_size=128, epochs=2, no_accel=False, seed=1, log_interval=10)  # 10 epochs
VAE_SHARED = dict(classes=["Linear"], factories=("randn", "randn_like"), loaders=True)


def numpy_vae_loss(data: np.ndarray, states: list[dict[str, np.ndarray]], eps: np.ndarray) -> float:
    """The first step's loss in NumPy (float64): binary cross-entropy (logs clamped at
    -100, as PyTorch's) summed, plus the KL divergence of N(mu, exp(logvar)) from N(0, 1)."""
    fc1, fc21, fc22, fc3, fc4 = ({k: v.astype(np.float64) for k, v in s.items()} for s in states)

    def linear(layer: dict[str, np.ndarray], v: np.ndarray) -> np.ndarray:
        return v @ layer["weight"].T + layer["bias"]

    x = data.reshape(-1, 784).astype(np.float64)
    h1 = np.maximum(linear(fc1, x), 0)
    mu, logvar = linear(fc21, h1), linear(fc22, h1)
    z = mu + eps * np.exp(0.5 * logvar)
    recon = 1 / (1 + np.exp(-linear(fc4, np.maximum(linear(fc3, z), 0))))
    bce = -np.sum(
        x * np.maximum(np.log(recon), -100) + (1 - x) * np.maximum(np.log1p(-recon), -100)
    )
    kld = -0.5 * np.sum(1 + logvar - mu**2 - np.exp(logvar))
    return float(bce + kld)


def run_vae(monkeypatch: pytest.MonkeyPatch) -> Any:
    args = types.SimpleNamespace(**VAE_ARGS)
    shared = SharedStart(monkeypatch)
    shared.record(**VAE_SHARED)  # type: ignore[arg-type]
    images = ImageFiles()
    history = vae_main(args, images.save_image)
    monkeypatch.undo()
    return types.SimpleNamespace(
        args=args, history=history, shared=shared, images=images, draws=list(shared.draws)
    )


def test_the_vae_program_trains_an_autoencoder(monkeypatch: pytest.MonkeyPatch) -> None:
    run = run_vae(monkeypatch)
    model = run.history.pop()
    train_loader, test_loader = run.shared.loaders
    steps = MNIST_DIGITS[True] // VAE_ARGS["batch_size"]
    assert len(run.history) == VAE_ARGS["epochs"] * (steps + 1)
    losses = run.history[:steps] + run.history[steps + 1 : -1]
    data = train_loader.passes[0][0][0]
    want = numpy_vae_loss(data, run.shared.states, run.draws[0])
    np.testing.assert_allclose(losses[0], want, rtol=1e-5)  # float32 against float64
    assert losses[-1] < 0.8 * losses[0]
    assert run.history[-1] < run.history[steps]  # the test loss falls from epoch to epoch
    assert sorted(run.images.saved) == [
        "results/reconstruction_1.png",
        "results/reconstruction_2.png",
        "results/sample_1.png",
        "results/sample_2.png",
    ]
    comparison, nrow = run.images.saved["results/reconstruction_2.png"]
    assert comparison.shape == (16, 1, 28, 28) and nrow == 8
    np.testing.assert_array_equal(comparison[:8], test_loader.passes[1][0][0][:8])
    samples, _ = run.images.saved["results/sample_2.png"]
    with torch.no_grad():
        decoded = model.decode(torch.tensor(run.draws[-1]))
    np.testing.assert_array_equal(samples.reshape(64, 784), as_numpy(decoded))
    assert ((samples > 0) & (samples < 1)).all()
    # manual_seed(args.seed) makes the run repeat: the same batches, draws and losses.
    assert run_vae(monkeypatch).history[:-1] == run.history


def test_the_vae_program_matches_pytorch(monkeypatch: pytest.MonkeyPatch, real_torch: Any) -> None:
    run = run_vae(monkeypatch)
    twin = pytorch_twin(VAE, vae_main, datasets=datasets, transforms=transforms)
    run.shared.replay(**VAE_SHARED)
    images = ImageFiles()
    history = twin["vae_main"](run.args, images.save_image)
    assert not run.shared.states and not run.shared.draws
    model, ours = history.pop(), run.history.pop()
    # float32, sums of 100,000 terms (BCE over 128 x 784 pixels) in other orders: the
    # losses agree to ~1e-7. Adam's first steps move a weight by ~lr whatever the size of
    # its gradient, so the weights of a pixel that is ink in a digit or two, whose
    # gradients are mostly rounding, differ most (5e-7 here; lr = 1e-3); others ~3e-8.
    np.testing.assert_allclose(run.history, history, rtol=2e-6)
    theirs = model.state_dict()
    for name, value in ours.state_dict().items():
        np.testing.assert_allclose(
            as_numpy(value), as_numpy(theirs[name]), rtol=1e-5, atol=5e-6, err_msg=name
        )
    assert list(images.saved) == list(run.images.saved)
    for name, (image, nrow) in images.saved.items():
        np.testing.assert_allclose(run.images.saved[name][0], image, rtol=1e-5, atol=1e-6)
        assert run.images.saved[name][1] == nrow
