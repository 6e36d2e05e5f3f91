"""What code a benchmark result describes, when and under what load it ran, and whether it still holds.

Every benchmark writes its JSON through :func:`write_result`, which adds a ``provenance``
block: the commit measured (``+changes`` when tracked files differed from it), when the
script started and finished, the load average at both ends, the settings (its command-line
options), the code paths the figures depend on (:data:`MEASURED_CODE`), a fingerprint of
that code as it was on disk, and a digest of everything else in the file. :func:`freshness`
reads the block back: a result is **current** only when the block is complete, the digest
still matches (nothing was added or edited by hand) and the measured code on disk is the
code that was measured; otherwise it is stale, with the reason. ``summarize.py`` renders
that verdict; ``tests/test_benchmark_provenance.py`` checks it for every committed result.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STARTED = datetime.now(UTC).isoformat(timespec="seconds")
LOAD_AT_START = [round(x, 2) for x in os.getloadavg()]
"""Taken when a benchmark imports this module, at its top: the run's start and the load it began under."""
QUIET_LOAD = 2.0
"""A result is measured on a quiet machine when the 1-minute load average at its start was below this: the
2-core machine's neighbours, or the previous benchmark's tail, otherwise take the cores it times."""


def started_quiet(block: Mapping[str, Any]) -> bool | None:
    """Whether a provenance block's run began under :data:`QUIET_LOAD`; None when it recorded no load."""
    load = block.get("load_average_start")
    return None if not load else float(load[0]) < QUIET_LOAD


REQUIRED = ("commit", "started", "finished", "load_average_start", "load_average_end", "settings", "code", "digest")

# For each result (its JSON's stem): the code its figures depend on, besides its own script.
MEASURED_CODE: dict[str, tuple[str, ...]] = {
    "action_parsing": ("core/agenthub/builtin", "core/agenthub/testing/hostile_text.py", "plugins/envs"),
    "agentgym_textcraft": (
        "core/agenthub/service",
        "plugins/envs/textcraft",
        "benchmarks/lean_http.py",
        "benchmarks/third_party/agentgym_textcraft",
    ),
    "agentgym_recipe": ("examples/agentgym_recipe", "plugins/trainers/trl", "core/agenthub/rollout"),
    "device_times": ("benchmarks/device_times.py", "examples/agentgym_recipe"),
    "env_client_transports": ("core/agenthub/service/client.py",),
    "env_plugins": ("plugins/envs", "core/agenthub/service"),
    "executor_scaling": (
        "core/agenthub/rollout",
        "core/agenthub/service",
        "benchmarks/llm_stand_in.py",
        "benchmarks/results/vllm_vs_hf.json",
    ),
    "importer_tables": (
        "core/agenthub/textarena_import.py",
        "core/agenthub/reasoning_gym_import.py",
        "core/agenthub/testing/conformance.py",
    ),
    "jvm_heap": ("plugins/envs/sciworld",),
    "maze_observation_ceiling": ("plugins/envs/maze",),
    "ray_scaling": ("core/agenthub/rollout", "core/agenthub/service"),
    "search_retrieval": ("plugins/envs/search",),
    "service_throughput": ("core/agenthub/service", "benchmarks/lean_http.py"),
    "serve_workers": ("core/agenthub/service", "core/agenthub/cli", "benchmarks/lean_http.py"),
    "service_compare": ("core/agenthub/service", "benchmarks/lean_http.py", "benchmarks/service_throughput.py"),
    "trl_learning": ("plugins/trainers/trl", "core/agenthub/rollout", "core/agenthub/builtin"),
    "trl_seeds": ("plugins/trainers/trl", "core/agenthub/rollout", "core/agenthub/builtin"),
    "tiny_model_envs": (
        "plugins/trainers/trl",
        "plugins/envs",
        "core/agenthub/rollout",
        "core/agenthub/builtin",
        "core/agenthub/training",
        "core/agenthub/testing/tiny_model.py",
        "core/agenthub/testing/tiny_tokenizer.py",
    ),
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


SCRIPT_OF = {"service_compare": "service_throughput"}
"""Results written by another benchmark's script (its ``--compare`` / ``--busy-loops`` mode)."""


def measured_paths(name: str) -> list[str]:
    """The code a result depends on: its benchmark script and the paths in :data:`MEASURED_CODE`."""
    return list(dict.fromkeys([f"benchmarks/{SCRIPT_OF.get(name, name)}.py", *MEASURED_CODE.get(name, ())]))


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


FINGERPRINT_VERSION = 4
"""How :func:`code_fingerprint` chooses files: 1 hashed every file under the paths, tests included, so a test
edited in a plugin made its results stale; 2 leaves out test files (a ``tests`` folder, ``test_*.py``,
``conftest.py``), which no figure depends on; 3 also leaves out Markdown (a plugin's README quoting a
result made that result stale); 4 also leaves out env plugins' ``footprints.json``, which the memory benchmarks
write from their own results (``--write-footprints``) and no figure reads: declaring what was measured no longer
made the measurement stale. A block records its version; one without it is read as 1."""


def is_test_file(path: str) -> bool:
    parts = path.split("/")
    return "tests" in parts[:-1] or parts[-1].startswith("test_") or parts[-1] == "conftest.py"


def is_prose(path: str) -> bool:
    return path.endswith(".md")


DECLARED_FOOTPRINTS = "footprints.json"
"""The file a memory benchmark writes into a plugin (``agenthub.measured_footprints``): an output, not code."""


def is_declared_footprint(path: str) -> bool:
    return path.rsplit("/", 1)[-1] == DECLARED_FOOTPRINTS


def counts_as_code(path: str, version: int) -> bool:
    """Whether a file under a result's measured paths is part of its fingerprint, by fingerprint version."""
    if version >= 2 and is_test_file(path):
        return False
    if version >= 4 and is_declared_footprint(path):
        return False
    return not (version >= 3 and is_prose(path))


def code_fingerprint(paths: list[str], root: Path = ROOT, *, version: int = FINGERPRINT_VERSION) -> str | None:
    """A hash of the files under ``paths`` as they are on disk (tracked and new, not ignored); None outside git.

    It names the code itself, not a commit: a result measured on uncommitted changes is still current
    once those changes are committed as they were. From ``version`` 2 test files are left out, from 3 Markdown.
    """
    listed = _git("ls-files", "--cached", "--others", "--exclude-standard", "--", *paths, root=root)
    if listed is None:
        return None
    files = sorted({f for f in listed.splitlines() if (root / f).is_file() and counts_as_code(f, version)})
    if not files:
        return hashlib.sha256(b"").hexdigest()[:16]
    try:
        done = subprocess.run(
            ["git", "hash-object", "--stdin-paths"], cwd=root, input="\n".join(files),
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    pairs = "\n".join(f"{f} {blob}" for f, blob in zip(files, done.stdout.split(), strict=True))
    return hashlib.sha256(pairs.encode()).hexdigest()[:16]


def digest(report: Mapping[str, Any]) -> str:
    """A hash of a result without its provenance block: any field added or edited after writing changes it."""
    body = {k: v for k, v in report.items() if k != "provenance"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


def provenance(
    name: str, settings: argparse.Namespace | Mapping[str, Any], report: Mapping[str, Any]
) -> dict[str, Any]:
    paths = measured_paths(name)
    code = code_fingerprint(paths)
    at_start = _CODE_AT_START.get(name)
    return {
        "commit": current_commit(),
        "started": STARTED,
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "load_average_start": LOAD_AT_START,
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
        "measures": paths,
        "code": code,
        "fingerprint": FINGERPRINT_VERSION,
        # Another engineer's edit (or a rebase) mid-run: the figures describe neither version.
        "code_changed_during_run": at_start is not None and at_start != code,
        "settings": settings_of(settings),
        "digest": digest(report),
    }


def write_result(
    path: Path, report: Mapping[str, Any], settings: argparse.Namespace | Mapping[str, Any], *, indent: int = 2
) -> dict[str, Any]:
    """Write ``report`` to ``path`` with its provenance (named after the file) and return what was written."""
    body = json.loads(json.dumps(report))  # as it will read back: the digest must match the file
    written = {**body, "provenance": provenance(path.stem, settings, body)}
    path.write_text(json.dumps(written, indent=indent) + "\n", encoding="utf-8")
    return written


@dataclass(frozen=True)
class Freshness:
    """Whether a result still describes the code: ``state`` is current or stale (``unknown``: no commit)."""

    state: str
    commit: str | None
    detail: str


def recorded_commit(result: Mapping[str, Any]) -> str | None:
    """The commit a result names: its provenance block, or the ``commit`` key some results carried before it."""
    block = result.get("provenance")
    commit = block.get("commit") if isinstance(block, Mapping) else result.get("commit")
    return commit if isinstance(commit, str) and commit else None


def missing_fields(result: Mapping[str, Any]) -> list[str]:
    """The provenance fields a result lacks (all of them when it has no block)."""
    block = result.get("provenance")
    if not isinstance(block, Mapping):
        return list(REQUIRED)
    return [key for key in REQUIRED if block.get(key) in (None, "", [])]


def freshness(name: str, result: Mapping[str, Any], root: Path = ROOT) -> Freshness:
    recorded = recorded_commit(result)
    rerun = f"re-run `python benchmarks/{SCRIPT_OF.get(name, name)}.py`"
    missing = missing_fields(result)
    if missing:
        state = "unknown" if recorded is None else "stale"
        return Freshness(state, recorded, f"its provenance lacks {', '.join(missing)}: {rerun}")
    block = result["provenance"]
    if block.get("code_changed_during_run"):
        return Freshness("stale", recorded, f"the measured code changed while it ran: {rerun}")
    if block["digest"] != digest(result):
        return Freshness("stale", recorded, f"edited after its script wrote it (the digest differs): {rerun}")
    paths = list(block.get("measures") or measured_paths(name))
    now = code_fingerprint(paths, root, version=int(block.get("fingerprint", 1)))
    if now != block["code"]:
        return Freshness("stale", recorded, f"the measured code ({', '.join(paths)}) changed since: {rerun}")
    return Freshness("current", recorded, "the measured code is as it was measured")


def _code_at_start(script: str) -> dict[str, str | None]:
    """The fingerprint of each result ``script`` writes, as its run begins (this module is imported at its top)."""
    names = {script, *(n for n, s in SCRIPT_OF.items() if s == script)}
    known = {*MEASURED_CODE, *SCRIPT_OF}
    if script not in known and not (ROOT / "benchmarks" / f"{script}.py").is_file():
        return {}  # imported by a test or a tool, not run as a benchmark
    return {name: code_fingerprint(measured_paths(name)) for name in names}


_CODE_AT_START = _code_at_start(Path(sys.argv[0]).stem) if sys.argv and sys.argv[0] else {}
