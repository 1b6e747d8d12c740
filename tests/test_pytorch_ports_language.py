"""pytorch/examples programs ported by renaming ``torch`` to ``minitorch_accel``: the word
language model (``word_language_model/``: data.py, model.py, main.py, generate.py),
REINFORCE and actor-critic (``reinforcement_learning/``), and the forward-forward
MNIST network (``mnist_forward_forward/main.py``).

Each program's text is copied inside a function whose parameters are its imports
(``torch``, ``nn``, ``F``, ``optim``, ``Categorical``...), so that the same text runs on
this framework and on PyTorch. Each port is compared with PyTorch itself, step by step,
from the same initial weights (copied through NumPy): the losses at every step and the
parameters after training. Where a program samples, PyTorch's run replays this
framework's draws (a stand-in for ``Categorical``/``torch.multinomial`` that returns the
recorded draw), so that ``log_prob``, the losses and the updates are compared on the same
actions and words. Dropout is turned off for those comparisons (its masks come from each
framework's own generator); each port also runs with it, checked without PyTorch.

What differs from the programs (besides argparse, whose defaults are passed directly):
the text corpus is a small synthetic one written to ``tmp_path``; gymnasium's CartPole is
replaced by a tiny deterministic corridor written here (:class:`Corridor`); MNIST comes
from the package's sample; sizes and step counts are small. main.py saves the whole
model with ``torch.save(model, f)`` (a pickle) and reloads it under
``torch.serialization.safe_globals``: this framework never pickles, so the port saves and
loads the ``state_dict`` instead; ONNX export is left out.
"""

# The programs' text is kept as written (``super(Policy, self)``, ``class X(object)``,
# ``io.open``, ``str.format``, ``R`` for the return, the unused loop variable ``t``...).
# ruff: noqa: UP004, UP008, UP020, UP029, UP032, SIM117, N803, N806, B007, B905, C901

from __future__ import annotations

import math
import os
import re
from collections import deque, namedtuple
from io import open
from itertools import count
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import minitorch_accel as torch
import minitorch_accel.nn as nn
import minitorch_accel.nn.functional as F
import minitorch_accel.optim as optim
from minitorch_accel import datasets, transforms
from minitorch_accel.distributions import Categorical, Normal


# ------------------------------------------------------------------ shared test helpers
def _real_torch() -> Any:
    return pytest.importorskip("torch")


def _modules(lib: Any) -> SimpleNamespace:
    """The program's imports, from this framework or from PyTorch."""
    return SimpleNamespace(torch=lib, nn=lib.nn, F=lib.nn.functional, optim=lib.optim)


def _state_to_torch(model: Any, rt: Any) -> dict[str, Any]:
    return {k: rt.from_numpy(np.array(v.detach().numpy())) for k, v in model.state_dict().items()}


def _params(model: Any) -> list[np.ndarray]:
    return [np.array(p.detach().numpy()) for p in model.parameters()]


def _assert_params_close(ours: Any, theirs: Any, rtol: float, atol: float = 0.0) -> None:
    a, b = _params(ours), _params(theirs)
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


def _dropout_off(model: Any) -> None:
    """Dropout p = 0 everywhere (also inside attention), in either framework."""
    for m in model.modules():
        if type(m).__name__ == "Dropout":
            m.p = 0.0
        if type(m).__name__ == "MultiheadAttention":
            m.dropout = 0.0


class _Draws:
    """Stands in for the ``torch`` module of a program that samples: records each
    ``multinomial``/``randint`` result (and the weights given to ``multinomial``) or,
    given recorded draws, replays them. Every other name is the library's."""

    def __init__(self, lib: Any, replay: list[int] | None = None) -> None:
        self._lib = lib
        self.replay = replay
        self.draws: list[int] = []
        self.weights: list[np.ndarray] = []
        self.text = ""  # what the program wrote, read back by the test

    def __getattr__(self, name: str) -> Any:
        return getattr(self._lib, name)

    def _draw(self, made: Any) -> Any:
        if self.replay is not None:
            made = self._lib.full_like(made, self.replay[len(self.draws)])
        self.draws.append(int(made.reshape(-1)[0].item()))
        return made

    def multinomial(self, input: Any, num_samples: int, *args: Any, **kwargs: Any) -> Any:
        self.weights.append(np.array(input.numpy(), dtype=np.float64))
        return self._draw(self._lib.multinomial(input, num_samples, *args, **kwargs))

    def randint(self, *args: Any, **kwargs: Any) -> Any:
        return self._draw(self._lib.randint(*args, **kwargs))


@pytest.fixture
def float64_default() -> Any:
    """Both frameworks' default dtype float64 for the test, so comparisons are tight."""
    rt = _real_torch()
    saved_ours, saved_theirs = torch.get_default_dtype(), rt.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    rt.set_default_dtype(rt.float64)
    yield rt
    torch.set_default_dtype(saved_ours)
    rt.set_default_dtype(saved_theirs)


# ======================================================== word_language_model/data.py
def data_py(torch: Any) -> SimpleNamespace:
    class Dictionary(object):
        def __init__(self):
            self.word2idx = {}
            self.idx2word = []

        def add_word(self, word):
            if word not in self.word2idx:
                self.idx2word.append(word)
                self.word2idx[word] = len(self.idx2word) - 1
            return self.word2idx[word]

        def __len__(self):
            return len(self.idx2word)

    class Corpus(object):
        def __init__(self, path):
            self.dictionary = Dictionary()
            self.train = self.tokenize(os.path.join(path, "train.txt"))
            self.valid = self.tokenize(os.path.join(path, "valid.txt"))
            self.test = self.tokenize(os.path.join(path, "test.txt"))

        def tokenize(self, path):
            """Tokenizes a text file."""
            assert os.path.exists(path)
            # Add words to the dictionary
            with open(path, "r", encoding="utf8") as f:
                for line in f:
                    words = line.split() + ["<eos>"]
                    for word in words:
                        self.dictionary.add_word(word)

            # Tokenize file content
            with open(path, "r", encoding="utf8") as f:
                idss = []
                for line in f:
                    words = line.split() + ["<eos>"]
                    ids = []
                    for word in words:
                        ids.append(self.dictionary.word2idx[word])
                    idss.append(torch.tensor(ids).type(torch.int64))
                ids = torch.cat(idss)

            return ids

    return SimpleNamespace(Dictionary=Dictionary, Corpus=Corpus)


# ======================================================= word_language_model/model.py
def model_py(torch: Any, nn: Any, F: Any) -> SimpleNamespace:
    class RNNModel(nn.Module):
        """Container module with an encoder, a recurrent module, and a decoder."""

        def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
            super(RNNModel, self).__init__()
            self.ntoken = ntoken
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            if rnn_type in ["LSTM", "GRU"]:
                self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
            else:
                try:
                    nonlinearity = {"RNN_TANH": "tanh", "RNN_RELU": "relu"}[rnn_type]
                except KeyError as e:
                    raise ValueError(
                        """An invalid option for `--model` was supplied,
                                 options are ['LSTM', 'GRU', 'RNN_TANH' or 'RNN_RELU']"""
                    ) from e
                self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)

            if tie_weights:
                if nhid != ninp:
                    raise ValueError("When using the tied flag, nhid must be equal to emsize")
                self.decoder.weight = self.encoder.weight

            self.init_weights()

            self.rnn_type = rnn_type
            self.nhid = nhid
            self.nlayers = nlayers

        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.encoder.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            output = self.drop(output)
            decoded = self.decoder(output)
            decoded = decoded.view(-1, self.ntoken)
            return F.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            if self.rnn_type == "LSTM":
                return (
                    weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid),
                )
            else:
                return weight.new_zeros(self.nlayers, bsz, self.nhid)

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=5000):
            super(PositionalEncoding, self).__init__()
            self.dropout = nn.Dropout(p=dropout)

            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
            div_term = torch.exp(
                torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model)
            )
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            pe = pe.unsqueeze(0).transpose(0, 1)
            self.register_buffer("pe", pe)

        def forward(self, x):
            x = x + self.pe[: x.size(0), :]
            return self.dropout(x)

    class TransformerModel(nn.Transformer):
        """Container module with an encoder, a recurrent or transformer module, and a decoder."""

        def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
            super(TransformerModel, self).__init__(
                d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers
            )
            self.model_type = "Transformer"
            self.src_mask = None
            self.pos_encoder = PositionalEncoding(ninp, dropout)

            self.input_emb = nn.Embedding(ntoken, ninp)
            self.ninp = ninp
            self.decoder = nn.Linear(ninp, ntoken)

            self.init_weights()

        def _generate_square_subsequent_mask(self, sz):
            return torch.log(torch.tril(torch.ones(sz, sz)))

        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, src, has_mask=True):
            if has_mask:
                device = src.device
                if self.src_mask is None or self.src_mask.size(0) != len(src):
                    mask = self._generate_square_subsequent_mask(len(src)).to(device)
                    self.src_mask = mask
            else:
                self.src_mask = None

            src = self.input_emb(src) * math.sqrt(self.ninp)
            src = self.pos_encoder(src)
            output = self.encoder(src, mask=self.src_mask)
            output = self.decoder(output)
            return F.log_softmax(output, dim=-1)

    return SimpleNamespace(
        RNNModel=RNNModel, PositionalEncoding=PositionalEncoding, TransformerModel=TransformerModel
    )


# ======================================================== word_language_model/main.py
def main_py(
    torch: Any, nn: Any, data: Any, model_module: Any, args: Any, initial_state: Any = None
) -> SimpleNamespace:
    """main.py after argparse; returns what it printed as numbers. ``initial_state``
    (the test's hook) loads the other framework's initial weights into the model."""
    RNNModel, TransformerModel = model_module.RNNModel, model_module.TransformerModel
    record = SimpleNamespace(train_losses=[], val_losses=[], lrs=[])

    torch.manual_seed(args.seed)

    if args.accel and torch.accelerator.is_available():
        device = torch.accelerator.current_accelerator()
    else:
        device = torch.device("cpu")

    corpus = data.Corpus(args.data)

    def batchify(data, bsz):
        # Work out how cleanly we can divide the dataset into bsz parts.
        nbatch = data.size(0) // bsz
        # Trim off any extra elements that wouldn't cleanly fit (remainders).
        data = data.narrow(0, 0, nbatch * bsz)
        # Evenly divide the data across the bsz batches.
        data = data.view(bsz, -1).t().contiguous()
        return data.to(device)

    eval_batch_size = 10
    train_data = batchify(corpus.train, args.batch_size)
    val_data = batchify(corpus.valid, eval_batch_size)
    test_data = batchify(corpus.test, eval_batch_size)

    ntokens = len(corpus.dictionary)
    if args.model == "Transformer":
        model = TransformerModel(
            ntokens, args.emsize, args.nhead, args.nhid, args.nlayers, args.dropout
        ).to(device)
    else:
        model = RNNModel(
            args.model, ntokens, args.emsize, args.nhid, args.nlayers, args.dropout, args.tied
        ).to(device)
    if initial_state is not None:  # the test's hook
        model.load_state_dict(initial_state(model))

    criterion = nn.NLLLoss()
    if args.use_optimizer:
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    def repackage_hidden(h):
        """Wraps hidden states in new Tensors, to detach them from their history."""

        if isinstance(h, torch.Tensor):
            return h.detach()
        else:
            return tuple(repackage_hidden(v) for v in h)

    def get_batch(source, i):
        seq_len = min(args.bptt, len(source) - 1 - i)
        data = source[i : i + seq_len]
        target = source[i + 1 : i + 1 + seq_len].view(-1)
        return data, target

    def evaluate(data_source):
        # Turn on evaluation mode which disables dropout.
        model.eval()
        total_loss = 0.0
        ntokens = len(corpus.dictionary)
        if args.model != "Transformer":
            hidden = model.init_hidden(eval_batch_size)
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, args.bptt):
                data, targets = get_batch(data_source, i)
                if args.model == "Transformer":
                    output = model(data)
                    output = output.view(-1, ntokens)
                else:
                    output, hidden = model(data, hidden)
                    hidden = repackage_hidden(hidden)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(data_source) - 1)

    def train():
        # Turn on training mode which enables dropout.
        model.train()
        total_loss = 0.0
        ntokens = len(corpus.dictionary)
        if args.model != "Transformer":
            hidden = model.init_hidden(args.batch_size)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
            data, targets = get_batch(train_data, i)
            if args.use_optimizer:
                optimizer.zero_grad()
            else:
                model.zero_grad()
            if args.model == "Transformer":
                output = model(data)
                output = output.view(-1, ntokens)
            else:
                hidden = repackage_hidden(hidden)
                output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()

            # `clip_grad_norm` helps prevent the exploding gradient problem in RNNs / LSTMs.
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            if args.use_optimizer:
                optimizer.step()
            else:
                for p in model.parameters():
                    p.data.add_(p.grad, alpha=-lr)

            total_loss += loss.item()
            record.train_losses.append(loss.item())  # the test's record

            if batch % args.log_interval == 0 and batch > 0:
                cur_loss = total_loss / args.log_interval
                print(
                    "| epoch {:3d} | {:5d}/{:5d} batches | lr {:02.2f} | loss {:5.2f} | "
                    "ppl {:8.2f}".format(
                        epoch,
                        batch,
                        len(train_data) // args.bptt,
                        lr,
                        cur_loss,
                        math.exp(cur_loss),
                    )
                )
                total_loss = 0
            if args.dry_run:
                break

    # Loop over epochs.
    lr = args.lr
    best_val_loss = None

    for epoch in range(1, args.epochs + 1):
        train()
        val_loss = evaluate(val_data)
        record.val_losses.append(val_loss)
        record.lrs.append(lr)
        print(f"| end of epoch {epoch:3d} | valid loss {val_loss:5.2f}")
        # Save the model if the validation loss is the best we've seen so far.
        if not best_val_loss or val_loss < best_val_loss:
            torch.save(model.state_dict(), args.save)  # the program: torch.save(model, f)
            best_val_loss = val_loss
        else:
            # Anneal the learning rate if no improvement has been seen in the validation dataset.
            lr /= 4.0

    # Load the best saved model.
    model.load_state_dict(torch.load(args.save))  # the program: model = torch.load(f)
    if args.model in ["RNN_TANH", "RNN_RELU", "LSTM", "GRU"]:
        model.rnn.flatten_parameters()

    # Run on test data.
    record.test_loss = evaluate(test_data)
    record.model, record.corpus = model, corpus
    return record


# ==================================================== word_language_model/generate.py
def generate_py(torch: Any, data: Any, model: Any, args: Any) -> None:
    """generate.py after loading the checkpoint (the model is given)."""
    torch.manual_seed(args.seed)
    device = torch.device("cpu")
    model.eval()

    corpus = data.Corpus(args.data)
    ntokens = len(corpus.dictionary)

    is_transformer_model = hasattr(model, "model_type") and model.model_type == "Transformer"
    if not is_transformer_model:
        hidden = model.init_hidden(1)
    input = torch.randint(ntokens, (1, 1), dtype=torch.long).to(device)

    with open(args.outf, "w") as outf:
        with torch.no_grad():  # no tracking history
            for i in range(args.words):
                if is_transformer_model:
                    output = model(input, False)
                    word_weights = output[-1].squeeze().div(args.temperature).exp().cpu()
                    word_idx = torch.multinomial(word_weights, 1)[0]
                    word_tensor = torch.Tensor([[word_idx]]).long().to(device)
                    input = torch.cat([input, word_tensor], 0)
                else:
                    output, hidden = model(input, hidden)
                    word_weights = output.squeeze().div(args.temperature).exp().cpu()
                    word_idx = torch.multinomial(word_weights, 1)[0]
                    input.fill_(word_idx)

                word = corpus.dictionary.idx2word[word_idx]

                outf.write(word + ("\n" if i % 20 == 19 else " "))

                if i % args.log_interval == 0:
                    print("| Generated {}/{} words".format(i, args.words))


# ---------------------------------------------------------------- the corpus and args
SUBJECTS = ["the cat", "a dog", "my friend", "the old man", "she", "he"]
VERBS = ["sees", "likes", "eats", "finds", "wants"]
OBJECTS = ["the fish", "an apple", "the ball", "a book", "the red hat"]


def write_corpus(path: Path, lines: tuple[int, int, int] = (150, 20, 20)) -> Path:
    """A small corpus of simple sentences (a fixed seed), as wikitext's three files."""
    rng = np.random.default_rng(0)
    for name, n in zip(("train", "valid", "test"), lines, strict=True):
        text = []
        for _ in range(n):
            words = [rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS)]
            text.append(" ".join(words) + " .")
        (path / f"{name}.txt").write_text("\n".join(text) + "\n", encoding="utf8")
    return path


def lm_args(tmp_path: Path, model: str, **changes: Any) -> SimpleNamespace:
    """main.py's defaults, smaller (sizes, bptt, batch, epochs)."""
    args = SimpleNamespace(
        data=str(write_corpus(tmp_path)),
        model=model,
        emsize=16,
        nhid=16,
        nlayers=2,
        lr=5,  # the program: 20; this tiny model learns at 5
        clip=0.25,
        epochs=3,
        batch_size=4,
        bptt=7,
        dropout=0.2,
        tied=False,
        seed=1111,
        log_interval=200,
        save=str(tmp_path / "model.pt"),
        nhead=2,
        dry_run=False,
        accel=False,
        use_optimizer=False,
    )
    for k, v in changes.items():
        setattr(args, k, v)
    return args


def _run_lm_both(tmp_path: Path, rt: Any, model: str, **changes: Any) -> tuple[Any, Any]:
    """main.py on this framework, then on PyTorch from the same initial weights (dropout
    off in both); returns both records."""
    initial: dict[str, Any] = {}

    def ours_init(model: Any) -> Any:
        _dropout_off(model)
        initial.update(_state_to_torch(model, rt))
        return model.state_dict()

    def theirs_init(model: Any) -> Any:
        _dropout_off(model)
        return initial

    args = lm_args(tmp_path, model, dropout=0.0, **changes)
    ours = main_py(torch, nn, data_py(torch), model_py(torch, nn, F), args, ours_init)
    args.save = str(tmp_path / "model_torch.pt")
    theirs_nn, theirs_f = rt.nn, rt.nn.functional
    theirs = main_py(
        rt, theirs_nn, data_py(rt), model_py(rt, theirs_nn, theirs_f), args, theirs_init
    )
    return ours, theirs


@pytest.mark.slow
@pytest.mark.parametrize("rnn_type", ["LSTM", "GRU", "RNN_TANH"])
def test_word_language_model_rnn_matches_pytorch_step_by_step(
    tmp_path: Path, float64_default: Any, rnn_type: str
) -> None:
    """main.py's loop (batchify, get_batch, repackage_hidden, clip_grad_norm_, the manual
    ``p.data.add_(p.grad, alpha=-lr)``, evaluate, the lr annealing, save/load) in float64:
    every training loss, every validation loss, the test loss and the final parameters
    equal PyTorch's to 1e-9."""
    rt = float64_default
    ours, theirs = _run_lm_both(tmp_path, rt, rnn_type)
    assert len(ours.train_losses) == len(theirs.train_losses) > 10
    np.testing.assert_allclose(ours.train_losses, theirs.train_losses, rtol=1e-9)
    np.testing.assert_allclose(ours.val_losses, theirs.val_losses, rtol=1e-9)
    assert ours.lrs == theirs.lrs
    assert ours.test_loss == pytest.approx(theirs.test_loss, rel=1e-9)
    _assert_params_close(ours.model, theirs.model, rtol=1e-9, atol=1e-12)
    # Without PyTorch: the model learnt the corpus (its loss starts near log(ntokens)).
    ntokens = len(ours.corpus.dictionary)
    assert ours.train_losses[0] == pytest.approx(math.log(ntokens), rel=0.05)
    assert min(ours.val_losses) < 0.8 * math.log(ntokens)


@pytest.mark.slow
def test_word_language_model_transformer_matches_pytorch_step_by_step(
    tmp_path: Path, float64_default: Any
) -> None:
    """The Transformer model (nn.Transformer subclass, PositionalEncoding buffer, the
    ``log(tril(ones))`` float mask) through main.py's loop, float64, against PyTorch."""
    rt = float64_default
    ours, theirs = _run_lm_both(tmp_path, rt, "Transformer", nlayers=1, epochs=2)
    assert len(ours.train_losses) == len(theirs.train_losses) > 5
    np.testing.assert_allclose(ours.train_losses, theirs.train_losses, rtol=1e-9)
    np.testing.assert_allclose(ours.val_losses, theirs.val_losses, rtol=1e-9)
    assert ours.test_loss == pytest.approx(theirs.test_loss, rel=1e-9)
    _assert_params_close(ours.model, theirs.model, rtol=1e-8, atol=1e-12)
    ntokens = len(ours.corpus.dictionary)
    assert min(ours.val_losses) < math.log(ntokens)


def test_word_language_model_trains_with_dropout(tmp_path: Path) -> None:
    """main.py as written (float32, dropout 0.2): without PyTorch, the validation loss
    falls well below the uniform guess log(ntokens), and the saved best model reloads."""
    args = lm_args(tmp_path, "LSTM")
    ours = main_py(torch, nn, data_py(torch), model_py(torch, nn, F), args)
    ntokens = len(ours.corpus.dictionary)
    assert all(math.isfinite(v) for v in ours.train_losses)
    assert min(ours.val_losses) < 0.8 * math.log(ntokens)
    assert ours.test_loss == pytest.approx(min(ours.val_losses), rel=0.2)


def _generate_both(tmp_path: Path, rt: Any, model_kind: str, words: int) -> tuple[Any, Any]:
    """generate.py with this framework (its draws recorded), then with PyTorch replaying
    them, from one model's weights; returns both ``_Draws`` records."""
    args = SimpleNamespace(
        data=str(write_corpus(tmp_path)),
        outf=str(tmp_path / "generated.txt"),
        words=words,
        seed=1111,
        temperature=0.8,
        log_interval=100,
    )
    corpus = data_py(torch).Corpus(args.data)
    ntokens = len(corpus.dictionary)
    records: list[Any] = []
    for lib in (torch, rt):
        lib.manual_seed(0)
        m = model_py(lib, lib.nn, lib.nn.functional)
        if model_kind == "Transformer":
            model = m.TransformerModel(ntokens, 8, 2, 16, 1, dropout=0.0)
        else:
            model = m.RNNModel(model_kind, ntokens, 8, 16, 2, dropout=0.0)
        if lib is torch:
            weights = _state_to_torch(model, rt)
            draws = _Draws(torch)
        else:
            model.load_state_dict(weights)
            draws = _Draws(rt, replay=records[0].draws)
            args.outf = str(tmp_path / "generated_torch.txt")
        generate_py(draws, data_py(lib), model, args)
        draws.text = Path(args.outf).read_text(encoding="utf8")
        records.append(draws)
    return records[0], records[1]


@pytest.mark.parametrize("model_kind", ["LSTM", "Transformer"])
def test_word_language_model_generate_matches_pytorch_on_the_same_words(
    tmp_path: Path, float64_default: Any, model_kind: str
) -> None:
    """generate.py (``torch.randint(ntokens, (1, 1))``, ``torch.multinomial``,
    ``fill_`` with a 0-d tensor, ``torch.Tensor([[word_idx]]).long()``, a word list
    indexed by a tensor): PyTorch, fed the same drawn words, gives the same word weights
    at every step (float64, 1e-9) and writes the same text."""
    rt = float64_default
    words = 25
    ours, theirs = _generate_both(tmp_path, rt, model_kind, words)
    assert len(ours.weights) == len(theirs.weights) == words
    for a, b in zip(ours.weights, theirs.weights, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9)
    assert ours.text == theirs.text
    # Without PyTorch: the text is 25 words of the corpus, 20 to a line, and each drawn
    # word had positive weight (exp(log_softmax / T)).
    corpus = data_py(torch).Corpus(str(tmp_path))
    written = ours.text.split()
    assert len(written) == words and ours.text.count("\n") == 1
    assert all(w in corpus.dictionary.word2idx for w in written)
    for weights, word in zip(ours.weights, written, strict=True):
        assert weights[corpus.dictionary.word2idx[word]] > 0


# ============================================== reinforcement_learning: the environment
class StopEpisodes(Exception):  # noqa: N818  (named for what happened, as StopIteration)
    """Raised by :meth:`Corridor.reset` once its episodes are used up: it ends the
    program's endless ``for i_episode in count(1)`` loop, as Ctrl-C would."""


class Corridor:
    """A tiny deterministic stand-in for gymnasium's CartPole-v1 (not a physics model).

    The state is 4 floats ``(position, last move, steps / 10, 1)`` as a float64 NumPy
    array (gymnasium's observations are NumPy arrays). Action 1 steps right, 0 left; the
    reward is 1 per step; the episode is terminated when ``|position| >= 2`` and
    truncated after ``max_steps`` steps, so the return is largest for a policy that
    stays near the middle. ``reset`` serves ``episodes`` episodes, calling
    ``on_reset`` (a test's hook) before each, then raises :class:`StopEpisodes`.
    """

    def __init__(self, episodes: int, max_steps: int = 30) -> None:
        self.episodes, self.max_steps = episodes, max_steps
        self.spec = SimpleNamespace(reward_threshold=475.0)  # CartPole-v1's
        self.actions: list[int] = []
        self.on_reset: Any = None
        self.served = 0

    def _state(self) -> np.ndarray:
        return np.array([self.position, self.move, self.steps / 10.0, 1.0])

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is None:  # the program's first call only seeds: not an episode
            if self.on_reset is not None:
                self.on_reset()
            if self.served == self.episodes:
                raise StopEpisodes
            self.served += 1
        self.position, self.move, self.steps = 0, 0.0, 0
        return self._state(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        assert action in (0, 1), action
        self.actions.append(action)
        self.move = 1.0 if action == 1 else -1.0
        self.position += int(self.move)
        self.steps += 1
        terminated = abs(self.position) >= 2
        truncated = self.steps >= self.max_steps
        return self._state(), 1.0, terminated, truncated, {}


class ReplayCategorical:
    """PyTorch's ``Categorical`` whose ``sample()`` returns recorded actions, in order
    (shaped as its own sample would be): the replayed run sees the same actions."""

    def __init__(self, rt: Any, actions: list[int]) -> None:
        self.rt, self.actions = rt, list(actions)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        dist = self.rt.distributions.Categorical(*args, **kwargs)
        actions, rt = self.actions, self.rt

        def sample(sample_shape: Any = ()) -> Any:
            return rt.full(dist.batch_shape, actions.pop(0), dtype=rt.int64)

        dist.sample = sample
        return dist


# ====================================================== reinforcement_learning/reinforce.py
def reinforce_py(
    torch: Any, nn: Any, F: Any, optim: Any, Categorical: Any, env: Any, args: Any
) -> Any:
    env.reset(seed=args.seed)
    torch.manual_seed(args.seed)

    class Policy(nn.Module):
        def __init__(self):
            super(Policy, self).__init__()
            self.affine1 = nn.Linear(4, 128)
            self.dropout = nn.Dropout(p=0.6)
            self.affine2 = nn.Linear(128, 2)

            self.saved_log_probs = []
            self.rewards = []

        def forward(self, x):
            x = self.affine1(x)
            x = self.dropout(x)
            x = F.relu(x)
            action_scores = self.affine2(x)
            return F.softmax(action_scores, dim=1)

    policy = Policy()
    if args.initial_state is not None:  # the test's hook
        policy.load_state_dict(args.initial_state(policy))
    optimizer = optim.Adam(policy.parameters(), lr=1e-2)
    eps = np.finfo(np.float32).eps.item()

    def select_action(state):
        state = torch.from_numpy(state).float().unsqueeze(0)
        probs = policy(state)
        m = Categorical(probs)
        action = m.sample()
        policy.saved_log_probs.append(m.log_prob(action))
        return action.item()

    def finish_episode():
        R = 0
        policy_loss = []
        returns = deque()  # type: ignore[var-annotated]
        for r in policy.rewards[::-1]:
            R = r + args.gamma * R
            returns.appendleft(R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        for log_prob, R in zip(policy.saved_log_probs, returns):
            policy_loss.append(-log_prob * R)
        optimizer.zero_grad()
        policy_loss = torch.cat(policy_loss).sum()
        args.losses.append(policy_loss.item())  # the test's record
        policy_loss.backward()
        optimizer.step()
        del policy.rewards[:]
        del policy.saved_log_probs[:]

    def main():
        running_reward = 10
        for i_episode in count(1):
            state, _ = env.reset()
            ep_reward = 0
            for t in range(1, 10000):  # Don't infinite loop while learning
                action = select_action(state)
                state, reward, terminated, truncated, _ = env.step(action)
                policy.rewards.append(reward)
                ep_reward += reward
                if terminated or truncated:
                    break

            running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward  # type: ignore[assignment]
            args.episode_rewards.append(ep_reward)  # the test's record
            finish_episode()
            if i_episode % args.log_interval == 0:
                print(
                    f"Episode {i_episode}\tLast reward: {ep_reward:.2f}\t"
                    f"Average reward: {running_reward:.2f}"
                )
            if running_reward > env.spec.reward_threshold:
                print(
                    f"Solved! Running reward is now {running_reward} and "
                    f"the last episode runs to {t} time steps!"
                )
                break

    return SimpleNamespace(policy=policy, main=main, select_action=select_action)


# =================================================== reinforcement_learning/actor_critic.py
def actor_critic_py(
    torch: Any, nn: Any, F: Any, optim: Any, Categorical: Any, env: Any, args: Any
) -> Any:
    env.reset(seed=args.seed)
    torch.manual_seed(args.seed)

    SavedAction = namedtuple("SavedAction", ["log_prob", "value"])

    class Policy(nn.Module):
        """
        implements both actor and critic in one model
        """

        def __init__(self):
            super(Policy, self).__init__()
            self.affine1 = nn.Linear(4, 128)

            # actor's layer
            self.action_head = nn.Linear(128, 2)

            # critic's layer
            self.value_head = nn.Linear(128, 1)

            # action & reward buffer
            self.saved_actions = []
            self.rewards = []

        def forward(self, x):
            """
            forward of both actor and critic
            """
            x = F.relu(self.affine1(x))

            # actor: choses action to take from state s_t
            # by returning probability of each action
            action_prob = F.softmax(self.action_head(x), dim=-1)

            # critic: evaluates being in the state s_t
            state_values = self.value_head(x)

            # return values for both actor and critic as a tuple of 2 values:
            # 1. a list with the probability of each action over the action space
            # 2. the value from state s_t
            return action_prob, state_values

    model = Policy()
    if args.initial_state is not None:  # the test's hook
        model.load_state_dict(args.initial_state(model))
    optimizer = optim.Adam(model.parameters(), lr=3e-2)
    eps = np.finfo(np.float32).eps.item()

    def select_action(state):
        state = torch.from_numpy(state).float()
        probs, state_value = model(state)

        # create a categorical distribution over the list of probabilities of actions
        m = Categorical(probs)

        # and sample an action using the distribution
        action = m.sample()

        # save to action buffer
        model.saved_actions.append(SavedAction(m.log_prob(action), state_value))

        # the action to take (left or right)
        return action.item()

    def finish_episode():
        """
        Training code. Calculates actor and critic loss and performs backprop.
        """
        R = 0
        saved_actions = model.saved_actions
        policy_losses = []  # list to save actor (policy) loss
        value_losses = []  # list to save critic (value) loss
        returns = []  # type: ignore[var-annotated]  # list to save the true values

        # calculate the true value using rewards returned from the environment
        for r in model.rewards[::-1]:
            # calculate the discounted value
            R = r + args.gamma * R
            returns.insert(0, R)

        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)

        for (log_prob, value), R in zip(saved_actions, returns):
            advantage = R - value.item()

            # calculate actor (policy) loss
            policy_losses.append(-log_prob * advantage)

            # calculate critic (value) loss using L1 smooth loss
            value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))

        # reset gradients
        optimizer.zero_grad()

        # sum up all the values of policy_losses and value_losses
        loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
        args.losses.append(loss.item())  # the test's record

        # perform backprop
        loss.backward()
        optimizer.step()

        # reset rewards and action buffer
        del model.rewards[:]
        del model.saved_actions[:]

    def main():
        running_reward = 10

        # run infinitely many episodes
        for i_episode in count(1):
            # reset environment and episode reward
            state, _ = env.reset()
            ep_reward = 0

            # for each episode, only run 9999 steps so that we don't
            # infinite loop while learning
            for t in range(1, 10000):
                # select action from policy
                action = select_action(state)

                # take the action
                state, reward, terminated, truncated, _ = env.step(action)

                model.rewards.append(reward)
                ep_reward += reward
                if terminated or truncated:
                    break

            # update cumulative reward
            running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward  # type: ignore[assignment]
            args.episode_rewards.append(ep_reward)  # the test's record

            # perform backprop
            finish_episode()

            # log results
            if i_episode % args.log_interval == 0:
                print(
                    f"Episode {i_episode}\tLast reward: {ep_reward:.2f}\t"
                    f"Average reward: {running_reward:.2f}"
                )

            # check if we have "solved" the cart pole problem
            if running_reward > env.spec.reward_threshold:
                print(
                    f"Solved! Running reward is now {running_reward} and "
                    f"the last episode runs to {t} time steps!"
                )
                break

    return SimpleNamespace(policy=model, main=main, select_action=select_action)


def _rl_args(initial_state: Any = None) -> SimpleNamespace:
    return SimpleNamespace(
        gamma=0.99,
        seed=543,
        render=False,
        log_interval=10,
        initial_state=initial_state,  # the test's hook
        losses=[],
        episode_rewards=[],
    )


def _run_rl_both(program: Any, rt: Any, episodes: int, dropout_off: bool) -> tuple[Any, Any]:
    """The program on this framework (its actions recorded by the environment), then on
    PyTorch from the same initial weights, replaying those actions. Parameters are
    snapshot at every reset: after each episode's update."""
    runs: list[Any] = []
    initial: dict[str, Any] = {}
    for lib in (torch, rt):
        env = Corridor(episodes)
        if lib is torch:
            categorical: Any = Categorical

            def hook(model: Any) -> Any:
                if dropout_off:
                    _dropout_off(model)
                initial.update(_state_to_torch(model, rt))
                return model.state_dict()
        else:
            categorical = ReplayCategorical(rt, runs[0].env.actions)

            def hook(model: Any) -> Any:
                if dropout_off:
                    _dropout_off(model)
                return initial

        args = _rl_args(hook)
        m = _modules(lib)
        run = program(lib, m.nn, m.F, m.optim, categorical, env, args)
        snapshots: list[list[np.ndarray]] = []
        env.on_reset = lambda run=run, snapshots=snapshots: snapshots.append(_params(run.policy))
        with pytest.raises(StopEpisodes):
            run.main()
        runs.append(SimpleNamespace(env=env, args=args, snapshots=snapshots, policy=run.policy))
    return runs[0], runs[1]


# float32 (the programs' .float() and the states): Adam's division by sqrt(v) + eps
# amplifies the float32 rounding of the two frameworks' different summation orders.
RL_RTOL, RL_ATOL = 2e-4, 2e-6


@pytest.mark.slow
@pytest.mark.parametrize("program", [reinforce_py, actor_critic_py])
def test_reinforcement_learning_matches_pytorch_on_the_same_actions(program: Any) -> None:
    """REINFORCE and actor-critic (Categorical, log_prob, np.finfo eps, returns
    normalised with std, smooth_l1_loss, Adam) on the corridor: PyTorch replaying this
    framework's sampled actions gives the same loss every episode and the same
    parameters after every update (float32: RL_RTOL)."""
    rt = _real_torch()
    episodes = 8
    ours, theirs = _run_rl_both(program, rt, episodes, dropout_off=True)
    assert len(ours.env.actions) == len(theirs.env.actions) > episodes
    assert ours.env.actions == theirs.env.actions
    assert ours.args.episode_rewards == theirs.args.episode_rewards
    np.testing.assert_allclose(ours.args.losses, theirs.args.losses, rtol=RL_RTOL, atol=RL_ATOL)
    assert len(ours.snapshots) == episodes + 1
    for a, b in zip(ours.snapshots, theirs.snapshots, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_allclose(x, y, rtol=RL_RTOL, atol=RL_ATOL)


# A uniformly random policy survives about 3 steps in the corridor (it must step back to
# the middle every other step); 30 is the most an episode gives.
LEARNT_REWARD = 25.0


@pytest.mark.slow
@pytest.mark.parametrize("program", [reinforce_py, actor_critic_py])
def test_reinforcement_learning_programs_learn_the_corridor(program: Any) -> None:
    """The programs as written (REINFORCE's dropout 0.6 on), no PyTorch: over 60
    episodes the policy learns to stay in the corridor."""
    env, args = Corridor(60), _rl_args()
    run = program(torch, nn, F, optim, Categorical, env, args)
    with pytest.raises(StopEpisodes):
        run.main()
    rewards = args.episode_rewards
    assert len(rewards) == len(args.losses) == 60
    assert all(math.isfinite(v) for v in args.losses)
    assert np.mean(rewards[:3]) < 10 and np.mean(rewards[-10:]) >= LEARNT_REWARD, rewards


def test_select_action_log_prob_matches_a_numpy_policy() -> None:
    """select_action of REINFORCE (dropout off: eval mode is not used by the program, so
    p = 0): the saved log-probability is log(softmax(W2 relu(W1 s + b1) + b2))[action],
    computed here with NumPy, and the action is 0 or 1."""
    env, args = Corridor(1), _rl_args()
    run = reinforce_py(torch, nn, F, optim, Categorical, env, args)
    _dropout_off(run.policy)
    w1, b1, w2, b2 = _params(run.policy)
    for state in (np.array([0.0, 1.0, 0.3, 1.0]), np.array([-1.0, -1.0, 1.2, 1.0])):
        action = run.select_action(state)
        h = np.maximum(w1.astype(np.float64) @ state + b1, 0.0)
        scores = w2.astype(np.float64) @ h + b2
        log_probs = scores - np.log(np.exp(scores - scores.max()).sum()) - scores.max()
        saved = run.policy.saved_log_probs[-1]
        assert action in (0, 1) and saved.shape == (1,)
        np.testing.assert_allclose(saved.item(), log_probs[action], rtol=1e-5)


# ================================================= framework features the ports needed
# ---------------------------------------------------------------- torch.multinomial
def _counts(draws: Any, k: int) -> np.ndarray:
    return np.bincount(np.asarray(draws.numpy()).ravel(), minlength=k)


def test_multinomial_with_replacement_draws_each_category_in_proportion() -> None:
    """20,000 draws: every frequency within 5 standard deviations of its probability,
    and a category of weight 0 never drawn (a fixed seed: the same draws every run)."""
    torch.manual_seed(0)
    weights = torch.tensor([1.0, 0.0, 6.0, 3.0])  # not normalised
    n = 20000
    draws = torch.multinomial(weights, n, replacement=True)
    assert draws.shape == (n,) and draws.dtype == np.int64
    p = np.array([0.1, 0.0, 0.6, 0.3])
    freq = _counts(draws, 4) / n
    assert freq[1] == 0
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1e-12), freq


def test_multinomial_without_replacement_takes_each_category_once() -> None:
    """Each row a permutation of distinct categories; the first draw is category i with
    probability p_i; categories of weight 0 come after all the others, as PyTorch's."""
    torch.manual_seed(1)
    rows = 4000
    weights = torch.tensor([[0.0, 1.0, 0.0, 3.0]] * rows)
    draws = weights.multinomial(4).numpy()
    assert draws.shape == (rows, 4)
    assert all(sorted(row) == [0, 1, 2, 3] for row in draws)
    assert np.all(np.isin(draws[:, :2], [1, 3])) and np.all(np.isin(draws[:, 2:], [0, 2]))
    first = np.bincount(draws[:, 0], minlength=4) / rows
    assert abs(first[3] - 0.75) <= 5 * math.sqrt(0.75 * 0.25 / rows)


def test_multinomial_shapes_and_dtypes_match_pytorch() -> None:
    rt = _real_torch()
    for shape, n, replacement in [((5,), 3, False), ((2, 5), 4, True), ((3, 2), 7, True)]:
        w = np.random.default_rng(0).random(shape) + 0.1
        for dtype in (np.float16, np.float32, np.float64):
            ours = torch.multinomial(torch.tensor(w.astype(dtype)), n, replacement)
            theirs = rt.multinomial(rt.tensor(w.astype(dtype)), n, replacement)
            assert ours.shape == tuple(theirs.shape) and str(ours.dtype) == "int64"
            assert ours.numpy().min() >= 0 and ours.numpy().max() < shape[-1]
    gen = np.random.default_rng(3)
    again = np.random.default_rng(3)
    weights = torch.tensor([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(
        torch.multinomial(weights, 5, True, generator=gen).numpy(),
        torch.multinomial(weights, 5, True, generator=again).numpy(),
    )


@pytest.mark.parametrize(
    "weights,n,replacement,message",
    [
        ([0.5, -1.0], 1, True, "probability tensor contains either `inf`, `nan` or element < 0"),
        (
            [0.5, math.inf],
            1,
            True,
            "probability tensor contains either `inf`, `nan` or element < 0",
        ),
        (
            [0.5, math.nan],
            1,
            False,
            "probability tensor contains either `inf`, `nan` or element < 0",
        ),
        ([0.0, -0.0], 1, True, "invalid multinomial distribution (sum of probabilities <= 0)"),
        ([[[1.0, 2.0]]], 1, True, "prob_dist must be 1 or 2 dim"),
        ([1.0, 2.0], 0, True, "cannot sample n_sample <= 0 samples"),
        (
            [1.0, 2.0],
            3,
            False,
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement",
        ),
    ],
)
def test_multinomial_refuses_what_pytorch_refuses(
    weights: Any, n: int, replacement: bool, message: str
) -> None:
    """PyTorch raises RuntimeError with these messages; here a ValueError containing them."""
    with pytest.raises(ValueError, match="multinomial: " + re.escape(message)):
        torch.multinomial(torch.tensor(weights), n, replacement)
    rt = _real_torch()
    with pytest.raises(RuntimeError, match=re.escape(message)):
        rt.multinomial(rt.tensor(weights), n, replacement)


def test_multinomial_refuses_integer_weights() -> None:
    with pytest.raises(TypeError, match="floating-point"):
        torch.multinomial(torch.tensor([1, 2]), 1)


# ---------------------------------------------------------------- torch.randint
def test_randint_takes_pytorchs_overloads() -> None:
    """``randint(high, size)``, ``randint(low, high, size)``, ``size=`` by keyword,
    ``dtype``: the values in range, the shapes and dtypes PyTorch's."""
    rt = _real_torch()
    torch.manual_seed(0)
    cases: list[tuple[tuple[Any, ...], dict[str, Any], int, int]] = [
        ((10, (3, 4)), {}, 0, 10),
        ((5, 7, (50,)), {}, 5, 7),
        ((4,), {"size": (2, 2)}, 0, 4),
        ((-3, 3, (100,)), {"dtype": "int32"}, -3, 3),
        ((6, (1, 1)), {"dtype": "int64"}, 0, 6),
    ]
    for args, kwargs, low, high in cases:
        ours = torch.randint(
            *args, **{k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()}
        )
        theirs = rt.randint(
            *args, **{k: getattr(rt, v) if k == "dtype" else v for k, v in kwargs.items()}
        )
        assert ours.shape == tuple(theirs.shape)
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
        values = ours.numpy()
        assert values.min() >= low and values.max() < high
    draws = torch.randint(3, (3000,)).numpy()
    assert set(draws.tolist()) == {0, 1, 2}


def test_randint_refuses_bad_bounds() -> None:
    with pytest.raises(ValueError, match="low < high"):
        torch.randint(3, 3, (2,))
    with pytest.raises(TypeError, match=r"\(high, size\) or \(low, high, size\)"):
        torch.randint(3)


# ---------------------------------------------------------------- torch.distributions
def _value_error(make: Any, lib: Any, dist: Any) -> str:
    """The first line of the ValueError that ``make(lib, dist)`` raises, as PyTorch's
    would read (see :func:`_first_line_as_pytorch`)."""
    try:
        make(lib, dist)
    except ValueError as exc:
        return _first_line_as_pytorch(str(exc))
    raise AssertionError(f"{lib.__name__}: no ValueError")


def _first_line_as_pytorch(message: str) -> str:
    """An error's first line with PyTorch's ``torch.Size([2, 3])`` written as ``(2, 3)``."""
    line = message.split("\n")[0]
    return re.sub(
        r"torch\.Size\(\[([^\]]*)\]\)",
        lambda m: f"({m.group(1)},)" if "," not in m.group(1) and m.group(1) else f"({m.group(1)})",
        line,
    )


CATEGORICAL_PARAMS = [
    ("probs", [0.2, 0.3, 0.5]),
    ("probs", [[1.0, 0.0, 3.0], [0.5, 0.5, 0.0]]),  # unnormalised, with zeros
    ("logits", [[0.0, 1.0, -math.inf], [2.0, -2.0, 0.5]]),
    ("logits", [[[1.0, 2.0], [-1.0, 0.0]], [[0.0, 0.0], [5.0, -5.0]]]),
]


@pytest.mark.parametrize("kind,values", CATEGORICAL_PARAMS)
def test_categorical_matches_pytorch(kind: str, values: Any) -> None:
    """probs, logits, log_prob of every category, entropy, mode, shapes, enumerate_support
    and the gradients of log_prob and entropy, float64 against PyTorch."""
    rt = _real_torch()
    ours_param = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    theirs_param = rt.tensor(values, dtype=rt.float64, requires_grad=True)
    ours = Categorical(**{kind: ours_param})
    theirs = rt.distributions.Categorical(**{kind: theirs_param})
    assert ours.batch_shape == tuple(theirs.batch_shape) and ours.event_shape == ()
    assert ours.param_shape == tuple(theirs.param_shape)
    for name in ("probs", "logits"):
        np.testing.assert_allclose(
            getattr(ours, name).detach().numpy(), getattr(theirs, name).detach().numpy(), rtol=1e-12
        )
    support = ours.enumerate_support()
    np.testing.assert_array_equal(support.numpy(), theirs.enumerate_support().numpy())
    assert ours.enumerate_support(expand=False).shape == tuple(
        theirs.enumerate_support(expand=False).shape
    )
    np.testing.assert_array_equal(ours.mode.numpy(), theirs.mode.numpy())
    assert np.isnan(ours.mean.numpy()).all() and ours.mean.shape == tuple(theirs.mean.shape)
    ours_lp, theirs_lp = ours.log_prob(support), theirs.log_prob(theirs.enumerate_support())
    np.testing.assert_allclose(ours_lp.detach().numpy(), theirs_lp.detach().numpy(), rtol=1e-12)
    ours_h, theirs_h = ours.entropy(), theirs.entropy()
    np.testing.assert_allclose(
        ours_h.detach().numpy(), theirs_h.detach().numpy(), rtol=1e-12, atol=1e-300
    )
    finite = np.isfinite(theirs_lp.detach().numpy())
    (ours_lp[torch.tensor(finite)].sum() + ours_h.sum()).backward()
    (theirs_lp[rt.tensor(finite)].sum() + theirs_h.sum()).backward()
    np.testing.assert_allclose(
        ours_param.grad.numpy(), theirs_param.grad.numpy(), rtol=1e-10, atol=1e-12
    )
    shape = (2, 3)
    assert ours.sample(shape).shape == tuple(theirs.sample(shape).shape)
    assert ours.sample().shape == tuple(theirs.sample().shape)
    assert str(ours.sample().dtype) == "int64"


def test_categorical_against_numpy_and_finite_differences() -> None:
    """log_prob = log(p / sum p), entropy = -sum p log p (NumPy), and gradcheck of both
    through logits and probs (float64)."""
    from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

    w = np.array([[0.5, 1.5, 2.0], [3.0, 0.25, 0.75]])
    p = w / w.sum(-1, keepdims=True)
    d = Categorical(torch.tensor(w))
    np.testing.assert_allclose(
        d.log_prob(torch.tensor([2, 0])).numpy(), np.log(p[[0, 1], [2, 0]]), rtol=1e-13
    )
    np.testing.assert_allclose(d.entropy().numpy(), -(p * np.log(p)).sum(-1), rtol=1e-13)
    value = torch.tensor([[1, 2], [0, 1]])
    for kind, start in (("logits", np.log(w)), ("probs", w)):
        x = torch.tensor(start, requires_grad=True)

        def f(t: Any, kind: str = kind) -> Any:
            dist = Categorical(**{kind: t})
            return dist.log_prob(value) + dist.entropy()

        assert gradcheck(f, (x,))
        assert gradgradcheck(f, (x,))


def test_categorical_samples_follow_probs() -> None:
    """A batch of two distributions, 10,000 draws each: frequencies within 5 sigma."""
    torch.manual_seed(2)
    p = np.array([[0.7, 0.2, 0.1], [0.0, 0.5, 0.5]])
    draws = Categorical(torch.tensor(p)).sample((10000,)).numpy()
    assert draws.shape == (10000, 2)
    for row in range(2):
        freq = np.bincount(draws[:, row], minlength=3) / 10000
        assert np.all(np.abs(freq - p[row]) <= 5 * np.sqrt(p[row] * (1 - p[row]) / 10000) + 1e-12)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib, d: d(lib.tensor([0.5, -0.1])),
        lambda lib, d: d(probs=lib.tensor([math.nan, 0.5])),
        lambda lib, d: d(logits=lib.tensor([[math.nan, 0.0]])),
        lambda lib, d: d(logits=lib.tensor([math.inf, 0.0])),
        lambda lib, d: d(),
        lambda lib, d: d(lib.tensor([0.5]), lib.tensor([0.5])),
        lambda lib, d: d(lib.tensor(0.5)),
        lambda lib, d: d(logits=lib.tensor(0.5)),
        lambda lib, d: d(lib.tensor([0.5, 0.5])).log_prob(lib.tensor(2)),
        lambda lib, d: d(lib.tensor([0.5, 0.5])).log_prob(lib.tensor(0.5)),
        lambda lib, d: d(lib.tensor([0.5, 0.5])).log_prob(1),
        lambda lib, d: d(lib.tensor([[0.5, 0.5]] * 2)).log_prob(lib.tensor([0, 1, 1])),
    ],
)
def test_categorical_validation_matches_pytorch(make: Any) -> None:
    """The same ValueError, message included (its first line; PyTorch's
    ``torch.Size([2])`` is ``(2,)`` here)."""
    rt = _real_torch()
    theirs = _value_error(make, rt, rt.distributions.Categorical)
    assert _value_error(make, torch, Categorical) == theirs


def test_categorical_validate_args_false_skips_the_checks() -> None:
    rt = _real_torch()
    ours = Categorical(torch.tensor([0.5, 0.5]), validate_args=False).log_prob(torch.tensor(1.5))
    theirs = rt.distributions.Categorical(rt.tensor([0.5, 0.5]), validate_args=False).log_prob(
        rt.tensor(1.5)
    )
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    assert repr(Categorical(torch.tensor([0.5, 0.5]))) == "Categorical(probs: (2,))"


NONFINITE = [-math.inf, -2.0, -0.0, 0.0, 0.5, 2.0, math.inf, math.nan]


def test_normal_matches_pytorch_on_nonfinite_values() -> None:
    """log_prob, cdf (values in NONFINITE, validation off for NaN), icdf, entropy, mean,
    stddev, variance and the gradients with respect to loc and scale, float64; the bit
    pattern of non-finite results (NaN vs inf) included."""
    rt = _real_torch()
    v = np.array(NONFINITE)
    loc, scale = np.array([0.3, -1.0]), np.array([0.5, 2.0])
    results = []
    for lib, dist in ((torch, Normal), (rt, rt.distributions.Normal)):
        lo = lib.tensor(loc[:, None], dtype=lib.float64, requires_grad=True)
        sc = lib.tensor(scale[:, None], dtype=lib.float64, requires_grad=True)
        d = dist(lo, sc, validate_args=False)
        value = lib.tensor(v, dtype=lib.float64)
        q = lib.tensor([0.0, 0.1, 0.5, 0.9, 1.0], dtype=lib.float64)
        out = [
            d.log_prob(value),
            d.cdf(value),
            d.icdf(q),
            d.entropy(),
            d.mean,
            d.stddev,
            d.variance,
        ]
        finite = [o for o in out if np.isfinite(o.detach().numpy()).all()]
        sum(o.sum() for o in finite).backward()  # type: ignore[union-attr]
        results.append(([o.detach().numpy() for o in out], lo.grad.numpy(), sc.grad.numpy()))
    (ours, ours_gl, ours_gs), (theirs, theirs_gl, theirs_gs) = results
    # cdf and icdf go through erf and erfinv, accurate here to about 1e-13 (absolute)
    for a, b, atol in zip(ours, theirs, [1e-300, 1e-13, 1e-12, 0, 0, 0, 0], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=atol)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_array_equal(np.isposinf(a), np.isposinf(b))
    np.testing.assert_allclose(ours_gl, theirs_gl, rtol=1e-12)
    np.testing.assert_allclose(ours_gs, theirs_gs, rtol=1e-12)


def test_normal_against_numpy_and_its_samples() -> None:
    """log_prob is the Gaussian log density (NumPy); rsample is differentiable
    (d/d loc = 1, d/d scale = the standard normal draw) and sample is not; 20,000
    samples have the mean and deviation asked for (5 sigma)."""
    x = np.array([-1.0, 0.0, 2.5])
    d = Normal(torch.tensor(0.5, dtype=torch.float64), torch.tensor(1.5, dtype=torch.float64))
    want = -((x - 0.5) ** 2) / (2 * 1.5**2) - np.log(1.5) - 0.5 * np.log(2 * np.pi)
    np.testing.assert_allclose(d.log_prob(torch.tensor(x)).numpy(), want, rtol=1e-13)
    loc = torch.tensor([1.0, -1.0], requires_grad=True)
    scale = torch.tensor([2.0, 0.5], requires_grad=True)
    torch.manual_seed(4)
    r = Normal(loc, scale).rsample()
    r.sum().backward()
    np.testing.assert_array_equal(loc.grad.numpy(), [1.0, 1.0])
    np.testing.assert_allclose(
        scale.grad.numpy(), (r.detach().numpy() - [1.0, -1.0]) / [2.0, 0.5], rtol=1e-6
    )
    s = Normal(loc, scale).sample((20000,))
    assert s.shape == (20000, 2) and not s.requires_grad
    samples = s.numpy().astype(np.float64)
    assert np.all(
        np.abs(samples.mean(0) - [1.0, -1.0]) < 5 * np.array([2.0, 0.5]) / math.sqrt(20000)
    )
    assert np.all(np.abs(samples.std(0) / [2.0, 0.5] - 1) < 5 / math.sqrt(2 * 20000))
    assert Normal(0.0, 1.0).batch_shape == () and Normal(torch.zeros(3), 1.0).batch_shape == (3,)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib, d: d(0.0, -1.0),
        lambda lib, d: d(lib.tensor([0.0, math.nan]), 1.0),
        lambda lib, d: d(0.0, 1.0).log_prob(lib.tensor(math.nan)),
        lambda lib, d: d(lib.zeros(3), 1.0).log_prob(lib.zeros(2)),
        lambda lib, d: d(0.0, 1.0).log_prob(0.5),
    ],
)
def test_normal_validation_matches_pytorch(make: Any) -> None:
    rt = _real_torch()
    assert _value_error(make, torch, Normal) == _value_error(make, rt, rt.distributions.Normal)


def test_normal_refuses_parameters_that_are_not_numbers() -> None:
    """PyTorch: "Input arguments must all be instances of Number, torch.Tensor or objects
    implementing __torch_function__." (no __torch_function__ here)."""
    with pytest.raises(ValueError, match="must all be instances of numbers.Number or Tensor"):
        Normal(0.0, "a")


# ===================================================== mnist_forward_forward/main.py
def forward_forward_py(torch: Any, nn: Any, Adam: Any, args: Any, device: Any) -> SimpleNamespace:
    def get_y_neg(y):
        y_neg = y.clone()
        for idx, y_samp in enumerate(y):
            allowed_indices = list(range(10))
            allowed_indices.remove(y_samp.item())
            y_neg[idx] = torch.tensor(allowed_indices)[
                torch.randint(len(allowed_indices), size=(1,))
            ].item()
        return y_neg.to(device)

    def overlay_y_on_x(x, y, classes=10):
        x_ = x.clone()
        x_[:, :classes] *= 0.0
        x_[range(x.shape[0]), y] = x.max()
        return x_

    class Net(torch.nn.Module):
        def __init__(self, dims):
            super().__init__()
            self.layers = []  # type: ignore[var-annotated]
            for d in range(len(dims) - 1):
                self.layers = self.layers + [Layer(dims[d], dims[d + 1]).to(device)]

        def predict(self, x):
            goodness_per_label = []
            for label in range(10):
                h = overlay_y_on_x(x, label)
                goodness = []  # type: ignore[var-annotated]
                for layer in self.layers:
                    h = layer(h)
                    goodness = goodness + [h.pow(2).mean(1)]
                goodness_per_label += [sum(goodness).unsqueeze(1)]
            goodness_per_label = torch.cat(goodness_per_label, 1)
            return goodness_per_label.argmax(1)

        def train(self, x_pos, x_neg):
            h_pos, h_neg = x_pos, x_neg
            for i, layer in enumerate(self.layers):
                print("training layer: ", i)
                h_pos, h_neg = layer.train(h_pos, h_neg)

    class Layer(nn.Linear):
        def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
            super().__init__(in_features, out_features, bias, device, dtype)
            self.relu = torch.nn.ReLU()
            self.opt = Adam(self.parameters(), lr=args.lr)
            self.threshold = args.threshold
            self.num_epochs = args.epochs

        def forward(self, x):
            x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
            return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

        def train(self, x_pos, x_neg):
            for i in range(self.num_epochs):
                g_pos = self.forward(x_pos).pow(2).mean(1)
                g_neg = self.forward(x_neg).pow(2).mean(1)
                loss = torch.log1p(
                    torch.exp(torch.cat([-g_pos + self.threshold, g_neg - self.threshold]))
                ).mean()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                args.losses.append(loss.item())  # the test's record
                if i % args.log_interval == 0:
                    print("Loss: ", loss.item())
            return self.forward(x_pos).detach(), self.forward(x_neg).detach()

    return SimpleNamespace(get_y_neg=get_y_neg, overlay_y_on_x=overlay_y_on_x, Net=Net, Layer=Layer)


def _ff_args() -> SimpleNamespace:
    """main's defaults, smaller: 200 epochs per layer (1000), 500 training digits (50,000)."""
    return SimpleNamespace(
        epochs=200,
        lr=0.03,
        no_accel=True,
        seed=1,
        save_model=False,
        train_size=500,
        threshold=2,
        test_size=200,
        log_interval=10,
        losses=[],
    )


def _ff_data(args: Any) -> tuple[Any, Any, Any, Any]:
    """main's data: the transform with ``Lambda(torch.flatten)``, one DataLoader batch."""
    from minitorch_accel.utils.data import DataLoader

    transform = transforms.Compose(
        [
            transforms.ToTensor(),
            transforms.Normalize((0.1307,), (0.3081,)),
            transforms.Lambda(lambda x: torch.flatten(x)),
        ]
    )
    train_kwargs = {"batch_size": args.train_size}
    test_kwargs = {"batch_size": args.test_size}
    train_loader = DataLoader(
        datasets.MNIST(sample=True, train=True, transform=transform), **train_kwargs
    )
    test_loader = DataLoader(
        datasets.MNIST(sample=True, train=False, transform=transform), **test_kwargs
    )
    x, y = next(iter(train_loader))
    x_te, y_te = next(iter(test_loader))
    return x, y, x_te, y_te


@pytest.mark.slow
def test_mnist_forward_forward_matches_pytorch_layer_by_layer() -> None:
    """main's steps (overlay the label, draw wrong labels, train each layer with its own
    Adam on the goodness loss, predict by the best goodness over the ten labels):
    PyTorch, from the same weights on the same positive and negative data, gives the
    same loss at every step and the same predictions. float32 throughout (the program's
    data): Adam's steps amplify rounding, so losses agree to 1e-4 and weights to FF_RTOL."""
    rt = _real_torch()
    args = _ff_args()
    torch.manual_seed(args.seed)
    device = torch.device("cpu")
    ours = forward_forward_py(torch, nn, optim.Adam, args, device)
    net = ours.Net([784, 64, 64])
    x, y, x_te, y_te = _ff_data(args)
    x_pos = ours.overlay_y_on_x(x, y)
    y_neg = ours.get_y_neg(y)
    x_neg = ours.overlay_y_on_x(x, y_neg)
    initial = [_state_to_torch(layer, rt) for layer in net.layers]
    net.train(x_pos, x_neg)
    train_error = 1.0 - net.predict(x).eq(y).float().mean().item()
    test_pred = net.predict(x_te)

    t_args = _ff_args()
    theirs = forward_forward_py(rt, rt.nn, rt.optim.Adam, t_args, rt.device("cpu"))
    t_net = theirs.Net([784, 64, 64])
    for layer, state in zip(t_net.layers, initial, strict=True):
        layer.load_state_dict(state)

    def as_torch(t: Any) -> Any:
        return rt.from_numpy(np.array(t.numpy()))

    np.testing.assert_array_equal(
        theirs.overlay_y_on_x(as_torch(x), as_torch(y)).numpy(), x_pos.numpy()
    )
    t_net.train(as_torch(x_pos), as_torch(x_neg))
    t_train_error = 1.0 - t_net.predict(as_torch(x)).eq(as_torch(y)).float().mean().item()

    assert len(args.losses) == len(t_args.losses) == 2 * args.epochs
    np.testing.assert_allclose(args.losses, t_args.losses, rtol=1e-4)
    for ours_layer, theirs_layer in zip(net.layers, t_net.layers, strict=True):
        _assert_params_close(ours_layer, theirs_layer, rtol=FF_RTOL, atol=FF_RTOL)
    assert train_error == pytest.approx(t_train_error, abs=2 / args.train_size)
    agree = (test_pred.numpy() == t_net.predict(as_torch(x_te)).numpy()).mean()
    assert agree >= 0.98
    # Without PyTorch: wrong labels are wrong and in range; the loss falls; the network
    # beats chance (10%) by far on the training digits.
    yn, yy = y_neg.numpy(), y.numpy()
    assert np.all(yn != yy) and yn.min() >= 0 and yn.max() <= 9
    assert args.losses[args.epochs - 1] < 0.7 * args.losses[0]
    assert train_error < 0.7


FF_RTOL = 1e-3


def test_sampling_stays_on_the_device(device: str) -> None:
    """multinomial, Categorical and Normal on every device: results where the inputs are,
    the same frequencies rule as on the host."""
    torch.manual_seed(5)
    weights = torch.tensor([[0.0, 1.0, 3.0]], device=device)
    draws = torch.multinomial(weights, 4000, replacement=True)
    assert draws.device == weights.device and draws.shape == (1, 4000)
    freq = _counts(draws.cpu(), 3) / 4000
    p = np.array([0.0, 0.25, 0.75])
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / 4000) + 1e-12)
    assert sorted(weights.multinomial(2).cpu().numpy()[0].tolist()) == [1, 2]
    d = Categorical(logits=weights)
    assert d.sample((3,)).device == weights.device
    lp = d.log_prob(torch.tensor([2], device=device))
    np.testing.assert_allclose(
        lp.cpu().numpy(), np.log(np.exp(3) / (1 + np.e + np.exp(3))), rtol=1e-6
    )
    n = Normal(torch.zeros(2, device=device), 2.0)
    assert n.rsample((3,)).device == weights.device and n.entropy().device == weights.device
