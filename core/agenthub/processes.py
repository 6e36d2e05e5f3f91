"""Child processes that die with the process that started them, even when it is killed with SIGKILL.

A parent killed with ``kill -9`` runs no cleanup, so its children must notice on their own:

* on Linux, :func:`popen` asks the kernel (``prctl(PR_SET_PDEATHSIG)``) to signal the child the
  moment its parent dies. The kernel ties that to the *thread* that forked, not the process, so
  every child is forked by one daemon thread that lives as long as the process;
* everywhere, a child that is an agenthub process (``agenthub serve``) is given its parent's pid in
  ``$AGENTHUB_PARENT_PID`` and runs :func:`watch_parent`, which stops it once that parent is gone.

Example::

    process = popen(["java", "-jar", "sim.jar"], stdin=subprocess.PIPE)
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

PARENT_ENV_VAR = "AGENTHUB_PARENT_PID"
"""Set by :class:`~agenthub.service.launcher.LocalServer`: the pid its ``agenthub serve`` child watches."""

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_libc: Any = None
_Job = tuple[Callable[[], "subprocess.Popen[bytes]"], "Future[subprocess.Popen[bytes]]"]
_spawner: queue.SimpleQueue[_Job] | None = None
_spawner_lock = threading.Lock()


def parent_death_supported() -> bool:
    """Whether the kernel can signal a child when its parent dies (Linux with a loadable libc)."""
    return _load_libc() is not None


def _load_libc() -> Any:
    global _libc
    if _libc is None and sys.platform.startswith("linux"):
        try:
            # loaded before any fork: the child must not load libraries between fork and exec
            _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        except OSError:
            _libc = False
    return _libc or None


def _die_with(parent: int, sig: signal.Signals, libc: Any) -> Callable[[], None]:
    def preexec() -> None:  # runs in the child, between fork and exec
        libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect: no signal will come
            os._exit(1)

    return preexec


def _spawn_loop(jobs: queue.SimpleQueue[_Job]) -> None:
    while True:
        start, result = jobs.get()
        try:
            result.set_result(start())
        except BaseException as exc:  # handed to the caller's thread
            result.set_exception(exc)


def _forget_spawner() -> None:
    """In a forked child: the spawner thread was not copied by fork, so the next popen starts its own."""
    global _spawner, _spawner_lock
    _spawner, _spawner_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_spawner)


def _in_spawner(start: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    """Run ``start`` in the process-wide spawner thread, which never exits before the process does."""
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            _spawner = queue.SimpleQueue()
            threading.Thread(target=_spawn_loop, args=(_spawner,), name="agenthub-spawner", daemon=True).start()
    result: Future[subprocess.Popen[bytes]] = Future()
    _spawner.put((start, result))
    return result.result()


def popen(
    args: Sequence[str], *, parent_death_signal: signal.Signals = signal.SIGKILL, **kwargs: Any
) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(args, **kwargs)``, its child signalled with ``parent_death_signal`` when this process dies.

    On systems without ``PR_SET_PDEATHSIG`` this is a plain ``Popen``: the child must watch its
    parent itself (:func:`watch_parent`, or a pipe it reads to its end).
    """
    libc = _load_libc()
    if libc is None:
        return subprocess.Popen(args, **kwargs)
    if "preexec_fn" in kwargs:
        raise TypeError("popen sets preexec_fn itself")
    preexec = _die_with(os.getpid(), parent_death_signal, libc)
    return _in_spawner(lambda: subprocess.Popen(args, preexec_fn=preexec, **kwargs))


def watch_parent(parent: int, *, grace_s: float = 10.0, interval_s: float = 0.25) -> threading.Thread:
    """Stop this process once ``parent`` has died: SIGTERM to itself, then ``os._exit`` after ``grace_s``.

    SIGTERM lets a server close its sessions (and their own children) as on any stop; the hard exit
    covers a shutdown that hangs. Works without kernel help, so it is the fallback off Linux.
    """
    # A dead parent's child is re-parented at once, while the parent's own pid may linger as a zombie
    # until its parent reaps it: watching getppid() sees the death, os.kill(pid, 0) may not.
    by_ppid = os.getppid() == parent

    def gone() -> bool:
        if by_ppid:
            return os.getppid() != parent
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            return True
        except PermissionError:  # alive, and owned by someone else
            return False
        return False

    def watch() -> None:
        while not gone():
            time.sleep(interval_s)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(grace_s)
        os._exit(1)

    thread = threading.Thread(target=watch, name="agenthub-parent-watch", daemon=True)
    thread.start()
    return thread


def watch_parent_from_env() -> threading.Thread | None:
    """:func:`watch_parent` for the pid in ``$AGENTHUB_PARENT_PID``, if set; the variable is then removed,
    so that this process's own children do not watch a grandparent."""
    raw = os.environ.pop(PARENT_ENV_VAR, None)
    if not raw or sys.platform == "win32":  # there os.kill(pid, 0) would terminate the parent
        return None
    try:
        parent = int(raw)
    except ValueError:
        print(f"agenthub: ignoring ${PARENT_ENV_VAR}={raw!r}: not a process id", file=sys.stderr)
        return None
    return watch_parent(parent)
