"""The MPI world: start-up from ``mpiexec``, rank and size, and collectives that cannot
hang forever.

MPI itself is the engine (through mpi4py), as in ChainerMN and Horovod. What this
module adds is safety: an exception on one rank aborts every rank (instead of leaving
the others blocked in a collective), and every collective has a deadline after which
the whole job is aborted with a message saying which collective and which rank.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

T = TypeVar("T")

INSTALL_HINT = (
    "install the `dist` extra: pip install 'minitorch_accel[dist]' (mpi4py and MPICH "
    "from PyPI), or mpi4py built against your cluster's MPI"
)


class _World:
    comm: Any = None
    mpi: Any = None
    timeout: float = 300.0


_world = _World()


def _import_mpi() -> Any:
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise RuntimeError(f"minitorch_accel.distributed needs mpi4py: {INSTALL_HINT}") from exc
    return MPI


def init(timeout: float = 300.0, abort_on_error: bool = True) -> Any:
    """Join the MPI job started by ``mpiexec`` (a job of one process without it).

    Parameters
    ----------
    timeout : float
        Seconds any collective may take before the whole job is aborted: a rank that
        hangs or died without MPI noticing cannot block the others forever.
    abort_on_error : bool
        Install an exception hook that prints the error with the rank and aborts every
        rank, so that one failing process ends the job within seconds.

    Returns
    -------
    mpi4py.MPI.Comm
        The world communicator.
    """
    mpi = _import_mpi()
    _world.mpi, _world.comm, _world.timeout = mpi, mpi.COMM_WORLD, float(timeout)
    if abort_on_error:
        sys.excepthook = _abort_on_uncaught
    return _world.comm


def is_initialized() -> bool:
    """Whether :func:`init` has been called in this process."""
    return _world.comm is not None


def _comm() -> Any:
    if _world.comm is None:
        raise RuntimeError("minitorch_accel.distributed is not initialized: call init() first")
    return _world.comm


def rank() -> int:
    """This process's rank in the world (0 when not initialized)."""
    return 0 if _world.comm is None else int(_world.comm.Get_rank())


def world_size() -> int:
    """How many processes the job has (1 when not initialized)."""
    return 1 if _world.comm is None else int(_world.comm.Get_size())


def local_rank() -> int:
    """This process's rank among the processes on the same machine (0 when not
    initialized): with one process per GPU, rank ``r`` of a node uses ``cuda:r``.
    """
    if _world.comm is None:
        return 0
    node = _world.comm.Split_type(_world.mpi.COMM_TYPE_SHARED)
    try:
        return int(node.Get_rank())
    finally:
        node.Free()


def abort(message: str, code: int = 1) -> None:
    """Print ``message`` with this rank and end every process of the job.

    The message goes to stderr and, when the environment variable
    ``MINITORCH_ACCEL_ABORT_LOG`` names a file, is appended to that file as well.
    Logging never stands between a failure and the abort: a log that cannot be
    written (a missing folder, no permission, a full disk) is reported on stderr and
    the job is aborted all the same.
    """
    try:
        text = f"[rank {rank()}] {message}\n"
        _write_stderr(text)
        log = os.environ.get("MINITORCH_ACCEL_ABORT_LOG")
        if log:  # launchers may drop a dying job's output: keep the reason in a file too
            try:
                with open(log, "a") as f:
                    f.write(text)
            except OSError as exc:
                _write_stderr(f"[rank {rank()}] could not write MINITORCH_ACCEL_ABORT_LOG: {exc}\n")
        time.sleep(0.5)  # let the launcher forward the message before the job is torn down
    finally:
        if _world.comm is not None:
            _world.comm.Abort(code)
        os._exit(code)


def _write_stderr(text: str) -> None:
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except Exception:
        pass


def _abort_on_uncaught(
    kind: type[BaseException], error: BaseException, tb: TracebackType | None
) -> None:
    text = "".join(traceback.format_exception(kind, error, tb))
    abort(f"uncaught {kind.__name__}; aborting every rank.\n{text}")


def guarded(name: str, operation: Callable[[], T]) -> T:
    """Run a collective ``operation``; abort the job if it outlasts the timeout."""
    timer = threading.Timer(
        _world.timeout,
        abort,
        args=(
            f"collective '{name}' did not finish within {_world.timeout:g} s: another rank "
            "has probably died, hung or raised; aborting every rank",
        ),
    )
    timer.daemon = True
    timer.start()
    try:
        return operation()
    finally:
        timer.cancel()


def barrier() -> None:
    """Wait until every rank reaches this point."""
    comm = _comm()
    guarded("barrier", comm.Barrier)


def allreduce_array(array: Any, average: bool = False) -> Any:
    """Sum (or average) a host NumPy array over all ranks, in place; returns it."""
    comm = _comm()
    mpi = _world.mpi
    guarded("allreduce", lambda: comm.Allreduce(mpi.IN_PLACE, array, op=mpi.SUM))
    if average:
        array /= world_size()
    return array


def broadcast_array(array: Any, root: int = 0) -> Any:
    """Overwrite a host NumPy array on every rank with ``root``'s, in place."""
    comm = _comm()
    guarded("broadcast", lambda: comm.Bcast(array, root=root))
    return array


def broadcast_object(obj: T, root: int = 0) -> T:
    """A small picklable Python object from ``root`` to every rank."""
    comm = _comm()
    return guarded("broadcast_object", lambda: comm.bcast(obj, root=root))  # type: ignore[no-any-return]


def allgather_object(obj: T) -> list[T]:
    """A small picklable Python object from every rank, as a list indexed by rank."""
    comm = _comm()
    gathered: list[T] = guarded("allgather_object", lambda: comm.allgather(obj))
    return gathered
