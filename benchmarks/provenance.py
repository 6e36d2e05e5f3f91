"""What code a benchmark result describes, and whether that code has changed since.

Every benchmark writes its JSON through :func:`write_result`, which adds a ``provenance``
block: the commit measured (``+changes`` when tracked files differed from it), when, the
code paths the figures depend on (:data:`MEASURED_CODE`) and the settings that matter
(the benchmark's command-line options). :func:`freshness` compares that commit with the
last commit touching those paths, so the summary (``summarize.py``) can mark a result that
describes code which no longer exists. A result written before this block existed says
"commit unknown": re-run its benchmark to date it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# For each result (its JSON's stem): the code its figures depend on, besides its own script.
MEASURED_CODE: dict[str, tuple[str, ...]] = {
    "action_parsing": ("core/agenthub/builtin", "core/agenthub/testing/hostile_text.py", "plugins/envs"),
    "agentgym_recipe": ("examples/agentgym_recipe", "plugins/trainers/trl", "core/agenthub/rollout"),
    "env_client_transports": ("core/agenthub/service/client.py",),
    "env_plugins": ("plugins/envs", "core/agenthub/service"),
    "executor_scaling": ("core/agenthub/rollout", "core/agenthub/service"),
    "jvm_heap": ("plugins/envs/sciworld",),
    "ray_scaling": ("core/agenthub/rollout", "core/agenthub/service"),
    "search_retrieval": ("plugins/envs/search",),
    "service_throughput": ("core/agenthub/service",),
    "trl_learning": ("plugins/trainers/trl", "core/agenthub/rollout", "core/agenthub/builtin"),
    "trl_seeds": ("plugins/trainers/trl", "core/agenthub/rollout", "core/agenthub/builtin"),
    "viewer_index": ("core/agenthub/viewer",),
    "vllm_vs_hf": ("plugins/agents/hf", "core/agenthub/rollout/policy.py", "core/agenthub/testing/vllm_server.py"),
    "webarena_env": ("plugins/envs/webarena", "core/agenthub/service"),
}


def _git(*args: str, root: Path = ROOT) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def current_commit(root: Path = ROOT) -> str | None:
    """This checkout's commit, with ``+changes`` when tracked files differ from it; None outside git."""
    head = _git("rev-parse", "HEAD", root=root)
    if head is None:
        return None
    dirty = _git("status", "--porcelain", "--untracked-files=no", root=root)
    return head + ("+changes" if dirty else "")


def measured_paths(name: str) -> list[str]:
    """The code a result depends on: its benchmark script and the paths in :data:`MEASURED_CODE`."""
    return [f"benchmarks/{name}.py", *MEASURED_CODE.get(name, ())]


def settings_of(args: argparse.Namespace | Mapping[str, Any]) -> dict[str, Any]:
    """The options a result was measured with, as JSON (paths and other objects as text)."""
    values = vars(args) if isinstance(args, argparse.Namespace) else dict(args)
    return {key: value if isinstance(value, bool | int | float | str | type(None)) else _jsonable(value)
            for key, value in sorted(values.items())}  # fmt: skip


def _jsonable(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value if isinstance(value, bool | int | float | str | type(None)) else str(value)


def provenance(name: str, settings: argparse.Namespace | Mapping[str, Any]) -> dict[str, Any]:
    return {
        "commit": current_commit(),
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "measures": measured_paths(name),
        "settings": settings_of(settings),
    }


def write_result(
    path: Path, report: Mapping[str, Any], settings: argparse.Namespace | Mapping[str, Any], *, indent: int = 2
) -> dict[str, Any]:
    """Write ``report`` to ``path`` with its provenance (named after the file) and return what was written."""
    written = {**report, "provenance": provenance(path.stem, settings)}
    path.write_text(json.dumps(written, indent=indent) + "\n", encoding="utf-8")
    return written


@dataclass(frozen=True)
class Freshness:
    """Whether a result still describes the code: ``state`` is current, stale or unknown."""

    state: str
    commit: str | None
    detail: str


def recorded_commit(result: Mapping[str, Any]) -> str | None:
    """The commit a result names: its provenance block, or the ``commit`` key some results carried before it."""
    block = result.get("provenance")
    commit = block.get("commit") if isinstance(block, Mapping) else result.get("commit")
    return commit if isinstance(commit, str) and commit else None


def freshness(name: str, result: Mapping[str, Any], root: Path = ROOT) -> Freshness:
    recorded = recorded_commit(result)
    if recorded is None:
        return Freshness("unknown", None, "commit unknown: written before results recorded their commit; re-run it")
    measured = recorded.removesuffix("+changes")
    block = result.get("provenance")
    paths = list(block["measures"]) if isinstance(block, Mapping) and "measures" in block else measured_paths(name)
    if _git("cat-file", "-e", f"{measured}^{{commit}}", root=root) is None:
        return Freshness("unknown", recorded, f"commit {measured[:10]} is not in this repository's history")
    changed = _git("log", "-1", "--format=%H %cs", f"{measured}..HEAD", "--", *paths, root=root)
    if changed:
        sha, day = changed.split()
        return Freshness("stale", recorded, f"the measured code changed in {sha[:10]} ({day}), after it was measured")
    suffix = ", with uncommitted changes" if recorded.endswith("+changes") else ""
    return Freshness("current", recorded, f"no change to the measured code since {measured[:10]}{suffix}")
