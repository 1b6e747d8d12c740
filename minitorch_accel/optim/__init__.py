"""Optimizers, learning-rate schedules and gradient clipping.

An optimizer updates parameters in place from their gradients, once per
``optimizer.step()``::

    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in loader:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

They accept any iterable of tensors with ``requires_grad=True`` (or of parameter-group
dicts), on any device; the update runs on the parameter's own device through its array
module. ``lr_scheduler`` changes the learning rate between steps.
"""

from __future__ import annotations

from . import lr_scheduler
from .adadelta import Adadelta, adadelta_update
from .adagrad import Adagrad, adagrad_update
from .adam import Adam, AdamW, adam_update
from .adamax import Adamax, adamax_update
from .asgd import ASGD, asgd_update
from .clip import clip_grad_norm_, clip_grad_value_
from .lbfgs import LBFGS
from .nadam import NAdam, nadam_update
from .optimizer import Optimizer
from .per_param import PerParameterOptimizer
from .radam import RAdam, radam_update
from .rmsprop import RMSprop, rmsprop_update
from .rprop import Rprop, rprop_update
from .sgd import SGD, sgd_update

__all__ = [
    "ASGD",
    "LBFGS",
    "SGD",
    "Adadelta",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "NAdam",
    "Optimizer",
    "PerParameterOptimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "adadelta_update",
    "adagrad_update",
    "adam_update",
    "adamax_update",
    "asgd_update",
    "nadam_update",
    "radam_update",
    "rmsprop_update",
    "rprop_update",
    "clip_grad_norm_",
    "clip_grad_value_",
    "lr_scheduler",
    "sgd_update",
]
