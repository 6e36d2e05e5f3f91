"""Learning curves from a run's ``metrics.jsonl``: one series of (x, value) points per numeric metric.

Records are whatever trainers and ``agenthub eval`` log (``{"step": 3, "reward": 0.5, ...}``,
``{"eval": {"success_rate": ...}}``); nested mappings become dotted names
(``eval.success_rate``). The x axis is ``step`` when records carry one, else the
record's number. As in the TRL trainer's own plot, a resumed run's repeated step
keeps its latest value. A long series is thinned to ``MAX_POINTS`` by stride,
keeping its last point, so a curve stays cheap to draw.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from agenthub.rollout.store import METRICS_FILE

MAX_POINTS = 2000
SKIPPED = frozenset({"time", "step", "epoch_time"})
PREFERRED = ("success", "success_rate", "reward", "eval.success_rate", "eval.avg_at_k", "kl", "loss", "turns")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _numbers(record: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, float]]:
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _numbers(value, f"{name}.")
        elif _is_number(value) and math.isfinite(value) and name not in SKIPPED:
            yield name, float(value)


def read_records(run_dir: Path) -> tuple[list[dict[str, Any]], int]:
    """The records of ``metrics.jsonl`` and how many lines were not JSON objects (skipped)."""
    file = run_dir / METRICS_FILE
    if not file.exists():
        return [], 0
    records: list[dict[str, Any]] = []
    bad = 0
    for line in file.read_bytes().splitlines():
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            bad += 1  # a torn last line of a run being written, most often
            continue
        if isinstance(record, dict):
            records.append(record)
        else:
            bad += 1
    return records, bad


def _thin(points: list[list[float]]) -> list[list[float]]:
    if len(points) <= MAX_POINTS:
        return points
    stride = math.ceil(len(points) / MAX_POINTS)
    thinned = points[::stride]
    return thinned if thinned[-1] is points[-1] else [*thinned, points[-1]]


def curves(run_dir: Path) -> dict[str, Any]:
    """``{x, records, skipped_lines, series: [{name, points: [[x, y], ...], thinned}]}``, preferred names first."""
    records, bad = read_records(run_dir)
    by_step = any(_is_number(r.get("step")) for r in records)
    series: dict[str, dict[float, float]] = {}
    for number, record in enumerate(records, 1):
        step = record.get("step")
        if by_step and not _is_number(step):
            continue  # a summary record without a step has no place on a step axis
        x = float(record["step"]) if by_step else float(number)
        for name, value in _numbers(record):
            series.setdefault(name, {})[x] = value
    rank = {name: i for i, name in enumerate(PREFERRED)}
    names = sorted(series, key=lambda n: (rank.get(n, len(rank)), n))
    out = []
    for name in names:
        points = [[x, y] for x, y in sorted(series[name].items())]
        out.append({"name": name, "points": _thin(points), "thinned": len(points) > MAX_POINTS})
    return {"x": "step" if by_step else "record", "records": len(records), "skipped_lines": bad, "series": out}
