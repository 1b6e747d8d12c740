"""Utilities for training, named as in ``torch.nn.utils``.

- :mod:`~minitorch_accel.nn.utils.clip_grad`: :func:`clip_grad_norm_`,
  :func:`clip_grad_value_`, :func:`get_total_norm`, :func:`clip_grads_with_norm_`;
- :mod:`~minitorch_accel.nn.utils.convert_parameters`: :func:`parameters_to_vector`,
  :func:`vector_to_parameters`;
- :mod:`~minitorch_accel.nn.utils.rnn`: padded and packed sequences
  (:class:`~minitorch_accel.nn.utils.rnn.PackedSequence`,
  :func:`~minitorch_accel.nn.utils.rnn.pack_padded_sequence`, ...).

Examples
--------
>>> import minitorch_accel as mta
>>> from minitorch_accel import nn
>>> model = nn.Linear(2, 1)
>>> (model(mta.ones(5, 2)) * 100).sum().backward()
>>> total_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
>>> nn.utils.parameters_to_vector(model.parameters()).shape
(3,)
"""

from __future__ import annotations

from . import clip_grad, convert_parameters, rnn
from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "convert_parameters",
    "get_total_norm",
    "parameters_to_vector",
    "rnn",
    "vector_to_parameters",
]
