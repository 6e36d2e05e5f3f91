"""The run viewer: ``agenthub view RUN_DIR`` in the browser, ``agenthub report RUN_DIR`` as one HTML file.

* :mod:`~agenthub.viewer.index` — a SQLite index over a run's trajectories (offsets + summary fields);
* :mod:`~agenthub.viewer.queries` — filtered pages, facets, the per-task table;
* :mod:`~agenthub.viewer.runs` — which runs RUN_DIR holds, their indexes kept up to date in the background;
* :mod:`~agenthub.viewer.episode`, :mod:`~agenthub.viewer.tokens` — one episode, with token text when a
  local tokenizer is found;
* :mod:`~agenthub.viewer.metrics` — learning-curve series from ``metrics.jsonl``;
* :mod:`~agenthub.viewer.api` — the FastAPI app; ``static/`` — the page (vanilla JS, inline SVG charts);
* :mod:`~agenthub.viewer.report` — the same page, self-contained, data embedded.
"""

from __future__ import annotations

from agenthub.viewer.api import create_app
from agenthub.viewer.index import IndexStatus, RunIndex
from agenthub.viewer.report import write_report

__all__ = ["IndexStatus", "RunIndex", "create_app", "write_report"]
