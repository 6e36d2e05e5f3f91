"""``agenthub report``: the viewer as one self-contained HTML file, for sharing or archiving a run.

The file is the viewer's own page with ``style.css`` and ``app.js`` inlined and
the data embedded as JSON (``<script type="application/json" id="agenthub-data">``);
app.js reads that instead of fetching from the API, so the report and
``agenthub view`` show the same thing and the file opens offline from disk.

Everything small is embedded whole: every episode's summary row (so filters,
paging and sorting work on all of them), the per-task table, the facets and the
learning curves. Full episodes (turns, tokens) are what make a report large, so
at most ``episodes`` of them per run are embedded (default 500): first one of
each (env, task, outcome) combination, so that every filter result has
something to open, then the rest in run order. The page says which episodes
are not embedded and how to get them.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson

from agenthub.errors import ConfigError
from agenthub.viewer import queries
from agenthub.viewer.episode import episode_payload
from agenthub.viewer.learning_curves import curves
from agenthub.viewer.runs import RunCatalog, RunInfo

STATIC = Path(__file__).parent / "static"
DEFAULT_EPISODES = 500
STYLE_TAG = '<link rel="stylesheet" href="static/style.css">'
SCRIPT_TAG = '<script src="static/app.js"></script>'


def choose_episodes(rows: list[list[Any]], cap: int) -> list[int]:
    """Which full episodes to embed: one per (env, task, outcome) first, then run order, ``cap`` at most."""
    env, task, outcome = (queries.COLUMNS.index(c) for c in ("env", "task", "outcome"))
    chosen: dict[int, None] = {}
    seen: set[tuple[Any, ...]] = set()
    for row in rows:
        if len(chosen) >= cap:
            break
        combination = (row[env], row[task], row[outcome])
        if combination not in seen:
            seen.add(combination)
            chosen[row[0]] = None
    for row in rows:
        if len(chosen) >= cap:
            break
        chosen.setdefault(row[0], None)
    return sorted(chosen)


def run_data(catalog: RunCatalog, info: RunInfo, *, episodes: int) -> dict[str, Any]:
    """Everything the page asks the API about one run, computed now."""
    index = catalog.index(info.id)
    status = index.update()
    with index.reading() as db:
        rows = queries.all_rows(db)
        overall = queries.summary(db)
        facets = queries.facets(db)
        tasks, ks = queries.task_rows(db)
    decoder = catalog.decoder(info.id)
    full = {}
    for number in choose_episodes(rows, episodes):
        record = index.read(number)
        if record is not None:
            full[str(number)] = episode_payload(number, record, decoder)
    return {
        "run": {**info.describe(), "overall": overall, "index": status.as_dict()},
        "columns": list(queries.COLUMNS),
        "rows": rows,
        "facets": facets,
        "tasks": {"ks": ks, "rows": tasks},
        "metrics": curves(info.path),
        "episodes": full,
        "embedded": len(full),
    }


def embed_json(data: Any) -> str:
    """JSON safe inside a <script> element: ``<`` only occurs in strings, where ``\\u003c`` means the same."""
    return orjson.dumps(data).decode().replace("<", "\\u003c")


def render(data: dict[str, Any]) -> str:
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    style = (STATIC / "style.css").read_text(encoding="utf-8")
    script = (STATIC / "app.js").read_text(encoding="utf-8")
    if STYLE_TAG not in page or SCRIPT_TAG not in page or "</script" in script or "</style" in style:
        raise RuntimeError("viewer static files changed shape; update agenthub.viewer.report to inline them")
    page = page.replace(STYLE_TAG, f"<style>\n{style}</style>")
    embedded = f'<script type="application/json" id="agenthub-data">{embed_json(data)}</script>\n'
    return page.replace(SCRIPT_TAG, f"{embedded}<script>\n{script}</script>")


def write_report(
    root: str | Path, output: str | Path, *, episodes: int = DEFAULT_EPISODES, tokenizer: str | Path | None = None
) -> dict[str, Any]:
    """Write the report of RUN_DIR (one run or a runs/ root); returns what it holds, for the command's summary."""
    if episodes < 0:
        raise ConfigError(f"episodes must be 0 or more (how many full episodes to embed per run), got {episodes}")
    catalog = RunCatalog(root, tokenizer=tokenizer)
    runs = catalog.runs()
    per_run = {r.id: run_data(catalog, r, episodes=episodes) for r in runs}
    described = [r.describe() for r in runs]
    data = {"generated_at": time.time(), "root": catalog.root.name, "runs": described, "data": per_run}
    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(data), encoding="utf-8")
    return {
        "path": out,
        "bytes": out.stat().st_size,
        "runs": len(runs),
        "episodes": sum(len(d["rows"]) for d in per_run.values()),
        "embedded": sum(d["embedded"] for d in per_run.values()),
    }
