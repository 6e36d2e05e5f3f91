"""The run viewer: ``agenthub view RUN_DIR`` in the browser, ``agenthub report RUN_DIR`` as one HTML file.

* :mod:`~agenthub.viewer.index` — a SQLite index over a run's trajectories (offsets + summary fields);
* :mod:`~agenthub.viewer.indexer` — a child process that keeps the opened runs' indexes up to date;
* :mod:`~agenthub.viewer.queries` — filtered pages, facets, the per-task table;
* :mod:`~agenthub.viewer.runs` — which runs RUN_DIR holds, and their indexes;
* :mod:`~agenthub.viewer.episode`, :mod:`~agenthub.viewer.tokens` — one episode, with token text when a
  local tokenizer is found;
* :mod:`~agenthub.viewer.learning_curves` — learning-curve series from ``metrics.jsonl``;
* :mod:`~agenthub.viewer.api` — the FastAPI app (``create_app``); ``static/`` — the page (vanilla JS,
  inline SVG charts);
* :mod:`~agenthub.viewer.report` — the same page, self-contained, data embedded (``write_report``).

Nothing is imported here, so the indexer's child process starts without loading the web app.
"""
