"""The runs a viewer shows: one run directory, or a ``runs/`` root holding many, and their indexes.

A run is found by its ``run.json`` (what :class:`~agenthub.rollout.store.RunStore`
writes first). Its id in URLs is its directory name, looked up in what was
found, never joined onto a path, so a URL cannot reach outside RUN_DIR.

Indexes are opened on first use; :mod:`agenthub.viewer.indexer` keeps them up to date.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from agenthub.errors import AgenthubError
from agenthub.rollout.store import CONFIG_FILE, META_FILE
from agenthub.viewer.index import RunIndex
from agenthub.viewer.tokens import TokenDecoder, decoder_for

CONFIG_SHOWN = ("env", "agent", "opponent", "seat", "trainer", "model", "split", "k", "n", "steps")


class RunNotFoundError(AgenthubError, LookupError):
    """A run directory or run id that does not exist (an HTTP 404)."""


@dataclass(frozen=True)
class RunInfo:
    id: str
    path: Path

    def meta(self) -> dict[str, Any]:
        try:
            return dict(json.loads((self.path / META_FILE).read_text()))
        except (OSError, ValueError):
            return {}  # being replaced right now, or damaged: the run is still viewable

    def config(self) -> dict[str, Any]:
        try:
            loaded = yaml.safe_load((self.path / CONFIG_FILE).read_text()) or {}
        except (OSError, yaml.YAMLError):
            return {}
        return dict(loaded) if isinstance(loaded, dict) else {}

    def describe(self) -> dict[str, Any]:
        meta, config = self.meta(), self.config()
        summary = meta.get("summary") or {}
        return {  # no path: the API names runs by id only (the disk's layout is not the page's business)
            "id": self.id,
            "status": meta.get("status"),
            "started_at": meta.get("started_at"),
            "finished_at": meta.get("finished_at"),
            "agenthub_version": meta.get("agenthub_version"),
            "config": {k: config[k] for k in CONFIG_SHOWN if k in config},
            "summary": summary if isinstance(summary, dict) else {},
        }


def discover(root: Path) -> list[RunInfo]:
    """The runs under ``root``: itself if it is a run, else its sub-directories that are, newest first."""
    if not root.exists():
        raise RunNotFoundError(f"{root} does not exist; give a run directory (runs/<run-id>) or a runs/ root")
    if not root.is_dir():
        raise RunNotFoundError(f"{root} is a file; give a run directory (runs/<run-id>) or a runs/ root")
    if (root / META_FILE).exists():
        return [RunInfo(root.name, root)]
    found = [RunInfo(p.name, p) for p in root.iterdir() if p.is_dir() and (p / META_FILE).exists()]
    return sorted(found, key=lambda r: (-float(r.meta().get("started_at") or 0), r.id))


def require_runs(root: Path) -> list[RunInfo]:
    runs = discover(root)
    if not runs:
        raise RunNotFoundError(
            f"{root} is not a run directory and holds none (no {META_FILE} in it or its sub-directories); "
            "give a directory that `agenthub eval` or `agenthub run` wrote, e.g. runs/<run-id>, or the runs/ root"
        )
    return runs


class RunCatalog:
    """The runs under RUN_DIR, each with its index and token decoder, opened on first use."""

    def __init__(self, root: str | Path, *, tokenizer: str | Path | None = None) -> None:
        self.root = Path(root)
        self.tokenizer = tokenizer
        self._lock = threading.Lock()
        self._indexes: dict[str, RunIndex] = {}
        self._decoders: dict[str, TokenDecoder | None] = {}
        self.runs()  # fail now, with what to do, on a missing or wrong directory
        if tokenizer is not None:
            TokenDecoder.load(tokenizer)

    def runs(self) -> list[RunInfo]:
        """Looked up again on each call, so runs started after the viewer appear."""
        return require_runs(self.root)

    def run(self, run_id: str) -> RunInfo:
        # Looked up directly (every request does this); a name with a path separator never matches.
        if (self.root / META_FILE).exists():
            if run_id == self.root.name:
                return RunInfo(run_id, self.root)
        elif "/" not in run_id and run_id not in ("", ".", "..") and (self.root / run_id / META_FILE).exists():
            return RunInfo(run_id, self.root / run_id)
        runs = self.runs()
        shown = ", ".join(r.id for r in runs[:10]) + (", ..." if len(runs) > 10 else "")
        raise RunNotFoundError(f"no run {run_id!r} in {self.root.name}; runs there: {shown} (GET /api/runs lists them)")

    def index(self, run_id: str) -> RunIndex:
        info = self.run(run_id)
        with self._lock:
            if run_id not in self._indexes:
                self._indexes[run_id] = RunIndex(info.path)
            return self._indexes[run_id]

    def decoder(self, run_id: str) -> TokenDecoder | None:
        info = self.run(run_id)
        with self._lock:
            if run_id not in self._decoders:
                self._decoders[run_id] = decoder_for(info.path, info.config(), self.tokenizer)
            return self._decoders[run_id]
