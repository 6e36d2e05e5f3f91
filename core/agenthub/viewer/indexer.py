"""Keeping the opened runs' indexes up to date from a child process, so pages never wait on it.

Why a process rather than a thread: indexing is CPU-bound Python (a JSON parse per
episode). In a thread of the server it held the GIL against the request threads, and
on a fresh 100,000-episode run every request (static files included) took 150-600 ms
while it ran; in a process of its own the server answers as if it were idle. SQLite in
WAL mode lets the server read while the child writes, and the index is built in
chunks, each its own transaction, so what is indexed shows at once.

The server tells the child which runs are opened through a pipe (``watch``). The child
brings each up to date a slice of time at a time, then polls their files for growth
(a run still being written) once a second. It stops when told to, or when the pipe
closes because the server is gone.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import sqlite3
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path

from agenthub.viewer.index import RunIndex


def index_forever(connection: Connection, slice_s: float, poll_s: float) -> None:
    """The child's loop: receive ``(run_dir, index_path)`` to watch, ``None`` to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the server stops us
    indexes: dict[str, RunIndex] = {}
    while True:
        busy = False
        for index in indexes.values():
            try:
                busy |= not index.update(max_seconds=slice_s).complete
            except (OSError, sqlite3.Error) as exc:  # a run removed, or its index locked: retry at the next poll
                print(f"agenthub view: cannot index {index.run_dir} yet ({exc}); retrying", file=sys.stderr)
        timeout = 0.0 if busy else poll_s
        try:
            while connection.poll(timeout):
                message = connection.recv()
                if message is None:
                    return
                run_dir, index_path = message
                if run_dir not in indexes:
                    indexes[run_dir] = RunIndex(Path(run_dir), index_path=Path(index_path))
                timeout = 0.0
        except (EOFError, OSError):
            return  # the server is gone


class BackgroundIndexer:
    """The child process that indexes; ``watch(index)`` adds a run, ``stop()`` ends it."""

    def __init__(self, *, slice_s: float = 0.5, poll_s: float = 1.0) -> None:
        # spawn: the server has threads (uvicorn, its thread pool), which fork does not copy safely.
        context = multiprocessing.get_context("spawn")
        self._connection, child = context.Pipe()
        self._child_end = child
        self._process = context.Process(
            target=index_forever, args=(child, slice_s, poll_s), name="agenthub-viewer-indexer", daemon=True
        )
        self._watched: set[Path] = set()
        self._lock = threading.Lock()  # request threads call watch() at once; a pipe's send is not thread-safe

    def start(self) -> BackgroundIndexer:
        self._process.start()
        self._child_end.close()  # the child holds its own copy: EOF reaches it when ours closes
        return self

    @property
    def running(self) -> bool:
        return self._process.is_alive()

    def watch(self, index: RunIndex) -> None:
        with self._lock:
            if index.path in self._watched or not self.running:
                return
            self._watched.add(index.path)
            self._connection.send((str(index.run_dir), str(index.path)))

    def stop(self) -> None:
        with self._lock:
            if self.running:
                with contextlib.suppress(OSError):  # already gone
                    self._connection.send(None)
                self._process.join(timeout=10)
                if self._process.is_alive():
                    self._process.terminate()
                    self._process.join(timeout=10)
            self._connection.close()
            self._child_end.close()  # when never started
