"""Worker processes that generate TextWorld games, shared by every environment of a process.

A worker (:mod:`agenthub_env_textworld._worker`) is started on the first
cache miss and kept for the next one: importing TextWorld and parsing its
grammars costs seconds that each later game then saves. An idle worker exits
by itself after ``idle_seconds``, so a server whose games are all cached
holds no worker at all.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, NamedTuple

from agenthub import popen

WORKERS_ENV_VAR = "AGENTHUB_TEXTWORLD_GENERATORS"
"""How many games one process may generate at once (default: the CPU count, at most 4)."""

_WORKER_ENV_DROP = ("TEXTWORLD_I6_DEBUG", "TEXTWORLD_DEBUG")
"""TextWorld flags that would change the compiled game (debug verbs) or print to stdout."""


class GenerationError(RuntimeError):
    """TextWorld could not generate a game; the message says which and why."""


class Generated(NamedTuple):
    seed: int
    """The seed TextWorld was given: the one asked for, or a later one if that seed admitted no quest."""
    seconds: float
    """Time the worker spent making and compiling the game."""


class _Worker:
    def __init__(self, idle_seconds: float) -> None:
        env = {k: v for k, v in os.environ.items() if k not in _WORKER_ENV_DROP}
        env["PYTHONHASHSEED"] = "0"
        # -P: the worker's cwd (a temp dir) must not shadow installed packages. popen: the worker dies
        # with this process even on SIGKILL (in the middle of a game it would see its stdin close only after).
        self.process = popen(
            [sys.executable, "-P", "-m", "agenthub_env_textworld._worker", str(idle_seconds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=tempfile.gettempdir(),
            env=env,
        )
        self.last_used = time.monotonic()
        self.idle_seconds = idle_seconds

    def usable(self) -> bool:
        # A worker near its idle limit may exit while the request is on its way.
        fresh = time.monotonic() - self.last_used < self.idle_seconds * 0.8
        return fresh and self.process.poll() is None

    def request(self, payload: dict[str, Any], timeout: float) -> dict[str, Any] | None:
        """The worker's reply, or None if it was gone before it answered."""
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(json.dumps(payload).encode() + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError):
            return None
        deadline = time.monotonic() + timeout
        out = self.process.stdout
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            ready, _, _ = select.select([out], [], [], max(left, 0))
            if not ready:
                self.kill()
                raise GenerationError(
                    f"generating a game took longer than {timeout:g}s and was stopped; "
                    "raise the env's generation_timeout if this level is known to be slow"
                )
            chunk = os.read(out.fileno(), 1 << 16)
            if not chunk:
                return None
            line += chunk
        self.last_used = time.monotonic()
        reply: dict[str, Any] = json.loads(line)
        return reply

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        self._close_pipes()

    def _close_pipes(self) -> None:
        for pipe in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError, ValueError):
                if pipe is not None:
                    pipe.close()

    def stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._close_pipes()


class GeneratorPool:
    """At most ``max_workers`` games generated at once, each in a worker process kept warm for the next."""

    def __init__(self, max_workers: int, *, idle_seconds: float = 120.0) -> None:
        if max_workers < 1:
            raise ValueError(f"max_workers must be >= 1, got {max_workers}")
        self.max_workers = max_workers
        self.idle_seconds = idle_seconds
        self._slots = threading.BoundedSemaphore(max_workers)
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._closed = False

    def _take(self) -> _Worker:
        with self._lock:
            if self._closed:
                raise GenerationError("the game generator pool was shut down; no more games can be generated")
            while self._idle:
                worker = self._idle.pop()
                if worker.usable():
                    return worker
                worker.stop()
        return _Worker(self.idle_seconds)

    def _give_back(self, worker: _Worker) -> None:
        with self._lock:
            if not self._closed:
                self._idle.append(worker)
                return
        worker.stop()

    def generate(self, challenge: str, settings: dict[str, Any], seed: int, path: str, *, timeout: float) -> Generated:
        """Generate and compile one game to ``path``."""
        payload = {"challenge": challenge, "settings": settings, "seed": seed, "path": path}
        with self._slots:
            for _ in range(2):  # a worker that exited on its own between requests gets one replacement
                worker = self._take()
                try:
                    reply = worker.request(payload, timeout)
                except BaseException:
                    worker.kill()
                    raise
                if reply is not None:
                    self._give_back(worker)
                    break
                worker.stop()
            else:
                raise GenerationError(
                    f"the generator process (python -m agenthub_env_textworld._worker) for {challenge} seed {seed} "
                    "died without answering; check that `python -c 'import textworld, agenthub_env_textworld'` "
                    "works with this interpreter"
                )
        if not reply.get("ok"):
            raise GenerationError(
                f"TextWorld failed to generate {challenge} {settings} seed {seed}: {reply.get('error')}\n"
                f"{reply.get('traceback', '')}"
            )
        return Generated(seed=int(reply["seed"]), seconds=float(reply["seconds"]))

    def shutdown(self) -> None:
        """Stop every idle worker; later calls to :meth:`generate` fail."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.stop()


_POOL: GeneratorPool | None = None
_POOL_LOCK = threading.Lock()


def default_workers() -> int:
    raw = os.environ.get(WORKERS_ENV_VAR)
    if raw:
        try:
            workers = int(raw)
        except ValueError:
            workers = 0
        if workers < 1:
            raise ValueError(f"${WORKERS_ENV_VAR} must be a positive integer, got {raw!r}")
        return workers
    return max(1, min(4, os.cpu_count() or 1))


def generator_pool() -> GeneratorPool:
    """The process's pool, started on first use and stopped at exit."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL._closed:
            _POOL = GeneratorPool(default_workers())
            atexit.register(_POOL.shutdown)
        return _POOL


def shutdown_generators() -> None:
    """Stop this process's generator workers now (the next cache miss starts new ones)."""
    global _POOL
    with _POOL_LOCK:
        pool, _POOL = _POOL, None
    if pool is not None:
        pool.shutdown()
