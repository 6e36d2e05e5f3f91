"""A run's directory: its resolved config, its trajectories, its metrics.

``runs/<run-id>/``
  ``config.yaml``        the resolved config the run started with, its secrets redacted
  ``run.json``           run id, versions, start time, status, summary
  ``trajectories.jsonl`` one trajectory per line, appended and flushed as each episode ends
  ``metrics.jsonl``      one record per training step or evaluation summary
  ``<name>.json``        a command's result, written whole (:meth:`RunStore.write_json`), e.g. ``eval.json``

A run killed at any moment (even SIGKILL) loses only its episodes in flight:
every finished one is already a complete line in the file. A torn last line
is cut off when the run is reopened, and ``completed_keys()`` tells the
executor which episodes not to run again.

No secret is written here: settings named like one (``token``, ``api_key``, ...) read ``<redacted>`` in
``config.yaml``, ``run.json`` and ``metrics.jsonl`` (:mod:`agenthub.redaction`), so a resumed run is given
them again (:func:`agenthub.redaction.fill_secrets`).
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import yaml

from agenthub._version import __version__
from agenthub.errors import AgenthubError, ConfigError
from agenthub.redaction import redact_secrets
from agenthub.types import Trajectory

CONFIG_FILE = "config.yaml"
META_FILE = "run.json"
TRAJECTORIES_FILE = "trajectories.jsonl"
METRICS_FILE = "metrics.jsonl"


def seat_key(episode_key: str, seat: int) -> str:
    """The key of one seat's trajectory of a multi-player episode: ``"<task index>/<sample>/seat<N>"``."""
    return f"{episode_key}/seat{seat}"


def episode_key(trajectory_key: str) -> str:
    """The episode key of a seat's trajectory key (the key itself for a single-player one)."""
    head, sep, tail = trajectory_key.rpartition("/seat")
    return head if sep and tail.isdigit() else trajectory_key


def write_config(run_dir: Path, config: Mapping[str, Any]) -> None:
    """``run_dir``'s config.yaml: ``config`` with its secrets redacted."""
    (Path(run_dir) / CONFIG_FILE).write_text(yaml.safe_dump(redact_secrets(config), sort_keys=True))


class RunStoreError(AgenthubError):
    """A run directory is missing, damaged, or belongs to a different config."""


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


class RunStore:
    """Append-only storage of one run. Use :meth:`create` for a new run and :meth:`resume` to continue one."""

    def __init__(self, path: Path, *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self._trajectories: IO[bytes] | None = None

    # -- opening --------------------------------------------------------------------

    @classmethod
    def create(
        cls, config: Mapping[str, Any], *, root: str | Path = "runs", run_id: str | None = None, fsync: bool = False
    ) -> RunStore:
        run_id = run_id or new_run_id()
        path = Path(root) / run_id
        if (path / META_FILE).exists():
            raise RunStoreError(f"run {path} already exists; continue it with --resume or choose another run id")
        path.mkdir(parents=True, exist_ok=True)
        store = cls(path, fsync=fsync)
        write_config(path, config)
        meta = {"run_id": run_id, "agenthub_version": __version__, "started_at": time.time(), "status": "running"}
        store._write_meta(meta)
        return store

    @classmethod
    def existing(cls, path: str | Path, *, fsync: bool = False) -> RunStore:
        """A run directory that must exist, for reading (or before :meth:`resume`)."""
        path = Path(path)
        if not (path / META_FILE).exists():
            raise RunStoreError(f"{path} is not a run directory (no {META_FILE}); check the path given to --resume")
        return cls(path, fsync=fsync)

    @classmethod
    def resume(cls, path: str | Path, config: Mapping[str, Any] | None = None, *, fsync: bool = False) -> RunStore:
        """Reopen a run; with ``config``, refuse one whose stored config differs (secrets, which are not
        stored, never count as a difference)."""
        store = cls.existing(path, fsync=fsync)
        path = store.path
        if config is not None:
            stored, config = store.config(), redact_secrets(config)
            changed = sorted(k for k in {*stored, *config} if stored.get(k) != config.get(k))
            if changed:
                details = ", ".join(f"{k}: {stored.get(k)!r} -> {config.get(k)!r}" for k in changed)
                raise ConfigError(
                    f"cannot resume {path}: its config differs in {details}; resume with the same settings "
                    "or start a new run"
                )
        store._repair_tail()
        store._update_meta(status="running", resumed_at=time.time())
        return store

    # -- reading ----------------------------------------------------------------------

    @property
    def run_id(self) -> str:
        return str(self.meta()["run_id"])

    def config(self) -> dict[str, Any]:
        loaded = yaml.safe_load((self.path / CONFIG_FILE).read_text()) or {}
        return dict(loaded)

    def meta(self) -> dict[str, Any]:
        return dict(json.loads((self.path / META_FILE).read_text()))

    def trajectories(self) -> Iterator[Trajectory]:
        file = self.path / TRAJECTORIES_FILE
        if not file.exists():
            return
        with file.open("rb") as lines:
            for number, line in enumerate(lines, 1):
                if not line.endswith(b"\n"):
                    return  # torn by a kill mid-write; cut off on resume
                try:
                    yield Trajectory.model_validate_json(line)
                except ValueError as exc:
                    raise RunStoreError(f"{file}:{number} is not a trajectory ({exc}); the file is damaged") from exc

    def completed_keys(self) -> set[str]:
        """Keys of the stored trajectories, and of each multi-player episode whose every seat is stored."""
        keys: set[str] = set()
        seats: dict[str, set[int]] = {}
        players: dict[str, int] = {}
        for t in self.trajectories():
            if t.key is None:
                continue
            keys.add(t.key)
            if t.seat is not None:
                episode = episode_key(t.key)
                seats.setdefault(episode, set()).add(t.seat)
                players[episode] = int(t.provenance.get("players", 0))
        keys.update(e for e, stored in seats.items() if len(stored) >= players[e])
        return keys

    def metrics(self) -> list[dict[str, Any]]:
        file = self.path / METRICS_FILE
        if not file.exists():
            return []
        return [json.loads(line) for line in file.read_text().splitlines() if line.strip()]

    # -- writing ------------------------------------------------------------------------

    def write(self, trajectory: Trajectory) -> None:
        """Append one finished episode; it is on disk (in the OS) when this returns."""
        if self._trajectories is None:
            self._trajectories = (self.path / TRAJECTORIES_FILE).open("ab")
        self._trajectories.write(trajectory.model_dump_json().encode() + b"\n")
        self._trajectories.flush()
        if self.fsync:
            os.fsync(self._trajectories.fileno())

    def log_metrics(self, record: Mapping[str, Any]) -> None:
        with (self.path / METRICS_FILE).open("a") as file:
            file.write(json.dumps(redact_secrets({"time": time.time(), **record}), default=str) + "\n")

    def write_json(self, name: str, data: Any) -> Path:
        """Write ``data`` as the run's ``name`` (e.g. ``eval.json``), indented; returns the file.

        Written whole or not at all (a kill mid-write leaves the previous file), as run.json is.
        """
        if Path(name).name != name or not name.endswith(".json") or name == META_FILE:
            raise RunStoreError(f"{name!r} is not a result file name: give a plain NAME.json other than {META_FILE}")
        out = self.path / name
        tmp = self.path / (name + ".tmp")
        tmp.write_text(json.dumps(data, indent=2, default=str))
        tmp.replace(out)
        return out

    def finish(self, summary: Mapping[str, Any] | None = None, *, status: str = "finished") -> None:
        self.close()
        self._update_meta(status=status, finished_at=time.time(), summary=dict(summary or {}))

    def close(self) -> None:
        if self._trajectories is not None:
            self._trajectories.close()
            self._trajectories = None

    def export_parquet(self, destination: str | Path | None = None) -> Path:
        """Write the trajectories as Parquet (needs ``pip install pyarrow``); returns the file."""
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise RunStoreError("Parquet export needs pyarrow: pip install 'agenthub[parquet]'") from exc
        rows = [t.model_dump(mode="json") for t in self.trajectories()]
        for row in rows:  # nested free-form dicts become JSON text so every row has one schema
            for column in ("task", "turns", "provenance", "tokens"):
                row[column] = json.dumps(row[column])
        out = Path(destination) if destination is not None else self.path / "trajectories.parquet"
        pq.write_table(pa.Table.from_pylist(rows), out)
        return out

    # -- internals ----------------------------------------------------------------------

    def _repair_tail(self) -> None:
        """Cut a last line that a kill left half-written, so appends start on a clean line."""
        file = self.path / TRAJECTORIES_FILE
        if not file.exists() or file.stat().st_size == 0:
            return
        with file.open("rb+") as handle:
            data = handle.read()
            if data.endswith(b"\n"):
                return
            handle.truncate(data.rfind(b"\n") + 1)

    def _write_meta(self, meta: Mapping[str, Any]) -> None:
        tmp = self.path / (META_FILE + ".tmp")
        tmp.write_text(json.dumps(redact_secrets(meta), indent=2, default=str))
        tmp.replace(self.path / META_FILE)  # atomic: a kill never leaves half a run.json

    def _update_meta(self, **changes: Any) -> None:
        self._write_meta({**self.meta(), **changes})

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
