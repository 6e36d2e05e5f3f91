"""An index over a run's ``trajectories.jsonl``: byte offsets and summary fields in SQLite.

Why a sidecar SQLite file (stdlib ``sqlite3``) rather than reading the JSONL on
each request: a run of 100,000 ten-turn episodes is several hundred MB, and a
page of episodes, a filter or a per-task table must answer in milliseconds.
One row per episode holds where its line starts and how long it is, plus the
fields the viewer filters and groups on (env, task, outcome, reward, turns,
duration, whether tokens are stored); the full episode is read by seeking.

The index is a cache, never the source of truth:

* it lives in the run directory (``.viewer-index.sqlite``), or, where that is
  not writable, under ``$XDG_CACHE_HOME/agenthub/viewer/``;
* it grows incrementally by file size, so a run still being written shows its
  new episodes; a line without its newline (a run killed mid-write, or a write
  in progress) is left for the next update;
* a file that shrank or whose first bytes changed (a different run copied in)
  is indexed again from the start, and so is an index of an older schema or a
  damaged SQLite file;
* a line that is not a trajectory is recorded as damaged (shown as a warning),
  and the rest of the run is still viewable.

Updates run in chunks, each its own transaction, so readers (other threads or
processes, WAL mode) see the first episodes while a large run is still being
indexed; ``update(max_seconds=...)`` bounds one call for a background thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from agenthub.rollout.store import TRAJECTORIES_FILE
from agenthub.types import Outcome

INDEX_FILE = ".viewer-index.sqlite"
SCHEMA_VERSION = 3  # 3: role, seat, seat_result (multi-player runs score the agent's seats only)
CHUNK_BYTES = 4 << 20  # one transaction per ~4 MB: the first page is readable after ~50 ms of a fresh build
HEAD_BYTES = 1024  # a fingerprint of the file's start tells a replaced file from a grown one
ERROR_CHARS = 300
OUTCOMES = frozenset(o.value for o in Outcome)

SCHEMA = """
CREATE TABLE IF NOT EXISTS state (name TEXT PRIMARY KEY, value);
CREATE TABLE IF NOT EXISTS episodes (
    id INTEGER PRIMARY KEY,
    line INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    length INTEGER NOT NULL,
    env TEXT NOT NULL,
    task TEXT,
    split TEXT,
    key TEXT,
    outcome TEXT NOT NULL,
    reward REAL NOT NULL,
    turns INTEGER NOT NULL,
    duration_s REAL,
    has_tokens INTEGER NOT NULL,
    error TEXT,
    role TEXT,
    seat INTEGER,
    seat_result TEXT
);
CREATE INDEX IF NOT EXISTS episodes_outcome ON episodes (outcome);
CREATE INDEX IF NOT EXISTS episodes_task ON episodes (task);
-- env filters, and covering for the per-task table (GROUP BY env, task): 120 -> 50 ms on 100,000 rows
CREATE INDEX IF NOT EXISTS episodes_env_task ON episodes (env, task, outcome, reward, key, role);
-- covering for the run summary, which scores the agent's seats only, and its win/draw/loss per seat
CREATE INDEX IF NOT EXISTS episodes_role ON episodes (role, outcome, reward);
CREATE INDEX IF NOT EXISTS episodes_seat ON episodes (seat, role, seat_result);
CREATE TABLE IF NOT EXISTS damaged (line INTEGER PRIMARY KEY, offset INTEGER NOT NULL, message TEXT NOT NULL);
"""


@dataclass(frozen=True)
class IndexStatus:
    """How far the index has got: ``complete`` once every full line of the file is indexed."""

    episodes: int
    damaged: int
    bytes_indexed: int
    bytes_total: int
    complete: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "episodes": self.episodes,
            "damaged_lines": self.damaged,
            "bytes_indexed": self.bytes_indexed,
            "bytes_total": self.bytes_total,
            "indexing": not self.complete,
        }


def task_text(task_id: Any) -> str | None:
    """A task id as the index stores and filters it: ``3`` and ``"3"`` both read ``3``."""
    return None if task_id is None else str(task_id)


def summarize(record: dict[str, Any]) -> tuple[Any, ...]:
    """The indexed fields of one parsed trajectory line; raises ValueError when it is not a trajectory.

    ``role`` is ``provenance["role"]`` (``opponent`` for an opponent's seat, which no score counts)."""
    try:
        task = record["task"]
        outcome = record["outcome"]
        env = task["env"]
        reward = float(record.get("reward", 0.0))
        turns = len(record.get("turns") or ())
    except (KeyError, TypeError) as exc:
        raise ValueError(f"missing or malformed field {exc}") from None
    if outcome not in OUTCOMES or not isinstance(env, str):
        raise ValueError(f"outcome {outcome!r} is not one of {', '.join(sorted(OUTCOMES))}")
    error = record.get("error")
    duration = record.get("duration_s")
    provenance = record.get("provenance")
    role = provenance.get("role") if isinstance(provenance, dict) else None
    seat = record.get("seat")
    return (
        env,
        task_text(task.get("task_id")),
        task.get("split"),
        record.get("key"),
        outcome,
        reward,
        turns,
        float(duration) if isinstance(duration, int | float) else None,
        int(record.get("tokens") is not None),
        str(error)[:ERROR_CHARS] if error is not None else None,
        str(role) if role is not None else None,
        seat if isinstance(seat, int) else None,
        record.get("seat_result") if record.get("seat_result") in ("win", "draw", "loss") else None,
    )


def default_index_path(run_dir: Path) -> Path:
    """In the run directory when it is writable, else in the user's cache directory."""
    run_dir = run_dir.resolve()
    if os.access(run_dir, os.W_OK):
        return run_dir / INDEX_FILE
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agenthub" / "viewer"
    cache.mkdir(parents=True, exist_ok=True)
    return cache / (hashlib.sha1(str(run_dir).encode()).hexdigest()[:16] + ".sqlite")


class RunIndex:
    """The index of one run directory. Thread-safe: updates are serialized, readers open their own connection."""

    def __init__(self, run_dir: Path, *, index_path: Path | None = None) -> None:
        self.run_dir = Path(run_dir)
        self.file = self.run_dir / TRAJECTORIES_FILE
        self.path = index_path or default_index_path(self.run_dir)
        self._update_lock = threading.Lock()
        self._progress = threading.Condition()
        self._open_schema()

    # -- connections ----------------------------------------------------------------

    def connect(self) -> sqlite3.Connection:
        """A new connection (one per thread or request); rows come back as tuples."""
        connection = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        try:
            connection.execute("PRAGMA journal_mode=WAL")  # readers never block the writer, nor it them
            connection.execute("PRAGMA synchronous=OFF")  # a cache: a crash costs a rebuild, not data
        except sqlite3.Error:
            connection.close()  # a damaged file fails here; the caller rebuilds, and nothing is left open
            raise
        return connection

    @contextlib.contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        connection = self.connect()
        try:
            yield connection
        finally:
            connection.close()

    def _open_schema(self) -> None:
        try:
            with contextlib.closing(self.connect()) as db:
                self._ensure_schema(db)
        except sqlite3.DatabaseError:
            # Not a database, or damaged: it is only a cache, so start it again.
            for suffix in ("", "-wal", "-shm"):
                Path(str(self.path) + suffix).unlink(missing_ok=True)
            with contextlib.closing(self.connect()) as db:
                self._ensure_schema(db)

    @staticmethod
    def _ensure_schema(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE IF NOT EXISTS state (name TEXT PRIMARY KEY, value)")
        row = db.execute("SELECT value FROM state WHERE name = 'schema'").fetchone()
        if row is not None and row[0] != SCHEMA_VERSION:  # before SCHEMA: its indexes name the new columns
            db.executescript("DROP TABLE IF EXISTS episodes; DROP TABLE IF EXISTS damaged; DELETE FROM state;")
        db.executescript(SCHEMA)
        db.execute("INSERT OR REPLACE INTO state VALUES ('schema', ?)", (SCHEMA_VERSION,))
        db.commit()

    # -- reading ----------------------------------------------------------------------

    def status(self) -> IndexStatus:
        with self.reading() as db:
            state = _state(db)  # kept with the rows in each transaction: no COUNT(*) over 100,000 rows
            damaged = int(state.get("lines", 0)) - int(state.get("episodes", 0))
            episodes = int(state.get("episodes", 0))
        total = self.file.stat().st_size if self.file.exists() else 0
        indexed = int(state.get("bytes", 0))
        tail = int(state.get("tail", 0))  # bytes after the last newline at the last update
        return IndexStatus(episodes, damaged, indexed, total, complete=indexed + tail >= total)

    def location(self, episode: int) -> tuple[int, int] | None:
        """(offset, length) of episode ``episode`` in the trajectories file, or None."""
        with self.reading() as db:
            row = db.execute("SELECT offset, length FROM episodes WHERE id = ?", (episode,)).fetchone()
        return None if row is None else (int(row[0]), int(row[1]))

    def read(self, episode: int) -> dict[str, Any] | None:
        """The full stored trajectory of episode ``episode`` as JSON data, or None if there is none."""
        where = self.location(episode)
        if where is None:
            return None
        with self.file.open("rb") as handle:
            handle.seek(where[0])
            record: dict[str, Any] = orjson.loads(handle.read(where[1]))
        return record

    def wait_for(self, episodes: int, timeout: float) -> None:
        """Block until ``episodes`` rows are indexed, the index is complete, or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        with self._progress:
            while (left := deadline - time.monotonic()) > 0:
                status = self.status()
                if status.complete or status.episodes >= episodes:
                    return
                self._progress.wait(min(left, 0.05))  # woken by updates in this process; polls for others

    # -- updating ---------------------------------------------------------------------

    def update(self, *, max_seconds: float | None = None) -> IndexStatus:
        """Index the lines appended since the last update; stop early after ``max_seconds``."""
        with self._update_lock:
            start = time.monotonic()
            while self._update_chunk():
                if max_seconds is not None and time.monotonic() - start >= max_seconds:
                    break
        return self.status()

    def _update_chunk(self) -> bool:
        """Index up to ~CHUNK_BYTES of new complete lines in one transaction; False when none was left."""
        if not self.file.exists():
            return False
        with contextlib.closing(self.connect()) as db, self.file.open("rb") as handle:
            db.execute("BEGIN IMMEDIATE")  # another process updating the same index waits here
            state = _state(db)
            size = os.fstat(handle.fileno()).st_size
            offset = int(state.get("bytes", 0))
            if size < offset or _head(handle, offset) != state.get("head", _head(handle, offset)):
                db.execute("DELETE FROM episodes")
                db.execute("DELETE FROM damaged")
                db.execute("DELETE FROM state WHERE name != 'schema'")
                offset, state = 0, {}
            handle.seek(offset)
            data = _read_lines(handle, CHUNK_BYTES)
            if not data:
                db.execute("INSERT OR REPLACE INTO state VALUES ('tail', ?)", (size - offset,))
                db.execute("INSERT OR REPLACE INTO state VALUES ('bytes', ?)", (offset,))
                db.commit()
                return False
            rows, damaged = self._parse(data, offset, int(state.get("lines", 0)), int(state.get("episodes", 0)))
            db.executemany("INSERT INTO episodes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
            db.executemany("INSERT OR REPLACE INTO damaged VALUES (?,?,?)", damaged)
            end = offset + len(data)
            updates = {
                "bytes": end,
                "lines": int(state.get("lines", 0)) + len(rows) + len(damaged),
                "episodes": int(state.get("episodes", 0)) + len(rows),
                "head": _head(handle, end),
                "tail": 0,
            }
            db.executemany("INSERT OR REPLACE INTO state VALUES (?, ?)", updates.items())
            db.commit()
        with self._progress:
            self._progress.notify_all()
        return True

    @staticmethod
    def _parse(
        data: bytes, offset: int, lines_before: int, episodes_before: int
    ) -> tuple[list[tuple[Any, ...]], list[tuple[int, int, str]]]:
        rows: list[tuple[Any, ...]] = []
        damaged: list[tuple[int, int, str]] = []
        position = 0
        line_number = lines_before
        for line in data.split(b"\n")[:-1]:  # data ends with a newline: the last piece is empty
            line_number += 1
            start = offset + position
            position += len(line) + 1
            if not line.strip():
                damaged.append((line_number, start, "an empty line"))
                continue
            try:
                summary = summarize(orjson.loads(line))
            except (orjson.JSONDecodeError, ValueError) as exc:
                damaged.append((line_number, start, f"not a trajectory: {exc}"))
                continue
            rows.append((episodes_before + len(rows), line_number, start, len(line), *summary))
        return rows, damaged


def _state(db: sqlite3.Connection) -> dict[str, Any]:
    return dict(db.execute("SELECT name, value FROM state").fetchall())


def _head(handle: IO[bytes], indexed: int) -> str:
    """A fingerprint of the first bytes already indexed (at most HEAD_BYTES of them)."""
    position = handle.tell()
    handle.seek(0)
    head = handle.read(min(indexed, HEAD_BYTES))
    handle.seek(position)
    return hashlib.sha1(head).hexdigest()


def _read_lines(handle: IO[bytes], size: int) -> bytes:
    """About ``size`` bytes ending at a newline (more if one line is longer); b"" if no line is complete."""
    data = handle.read(size)
    cut = data.rfind(b"\n")
    while cut < 0:
        more = handle.read(size)
        if not more:
            return b""
        data += more
        cut = data.rfind(b"\n")
    return data[: cut + 1]
