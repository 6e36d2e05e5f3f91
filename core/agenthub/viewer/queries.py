"""What the viewer asks of a run's index: filtered pages of episodes, facets, the per-task table.

Filters and sorting are validated here, once, for the HTTP API and the report
alike, and each bad value is refused with what the allowed values are. Pages
are ``LIMIT/OFFSET`` over rows ordered by an indexed column, so the first page
of a 100,000-episode run costs milliseconds.
"""

from __future__ import annotations

import difflib
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from agenthub.errors import AgenthubError
from agenthub.evaluation import EXCLUDED, SeatScore, default_ks, pass_at_k
from agenthub.types import Outcome

MAX_LIMIT = 500
MAX_OFFSET = 2**63 - 1
"""SQLite's largest integer: an offset past it cannot even be asked of the index (Python would raise)."""
FACET_TASKS = 2000  # distinct task ids offered to the task filter; the rest can still be typed in
COLUMNS = ("id", "env", "task", "split", "key", "outcome", "reward", "turns", "duration_s", "has_tokens", "error")
SORTS = {
    "index": "id",
    "-index": "id DESC",
    "reward": "reward, id",
    "-reward": "reward DESC, id",
    "turns": "turns, id",
    "-turns": "turns DESC, id",
    "duration": "duration_s, id",
    "-duration": "duration_s DESC, id",
}
TASK_SORTS = ("order", "success_rate", "-success_rate", "mean_reward", "-mean_reward", "episodes", "-episodes")
EXCLUDED_VALUES = tuple(sorted(o.value for o in EXCLUDED))
AGENTS_ONLY = "role IS NOT 'opponent'"
"""The rows a score counts: against ``opponent=`` the opponent's seats are shown but never scored, as in eval."""


class QueryError(AgenthubError, ValueError):
    """A filter, sort or page value the viewer cannot use (an HTTP 422)."""


def _choice(name: str, value: str, allowed: list[str]) -> str:
    if value in allowed:
        return value
    match = difflib.get_close_matches(value, allowed, n=1)
    hint = f"did you mean {match[0]!r}? " if match else ""
    raise QueryError(f"unknown {name} {value!r}; {hint}use one of: {', '.join(allowed)}")


@dataclass(frozen=True)
class EpisodeFilter:
    """Which episodes to list: every field is optional; ``env`` and ``outcome`` may hold several values."""

    env: tuple[str, ...] = ()
    task: str | None = None
    outcome: tuple[str, ...] = ()
    min_reward: float | None = None
    max_reward: float | None = None

    @classmethod
    def parse(
        cls,
        *,
        env: str | None = None,
        task: str | None = None,
        outcome: str | None = None,
        min_reward: float | None = None,
        max_reward: float | None = None,
    ) -> EpisodeFilter:
        """From query-string values: ``outcome=success,failure``; empty strings mean no filter."""
        outcomes = tuple(v for v in (outcome or "").split(",") if v)
        allowed = [o.value for o in Outcome]
        for value in outcomes:
            _choice("outcome", value, allowed)
        if min_reward is not None and max_reward is not None and min_reward > max_reward:
            raise QueryError(
                f"min_reward ({min_reward}) is greater than max_reward ({max_reward}); no episode can match, "
                "swap them or leave one out"
            )
        return cls(
            env=tuple(v for v in (env or "").split(",") if v),
            task=task or None,
            outcome=outcomes,
            min_reward=min_reward,
            max_reward=max_reward,
        )

    def where(self) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        values: list[Any] = []
        if self.env:
            clauses.append(f"env IN ({','.join('?' * len(self.env))})")
            values.extend(self.env)
        if self.task is not None:
            clauses.append("task = ?")
            values.append(self.task)
        if self.outcome:
            clauses.append(f"outcome IN ({','.join('?' * len(self.outcome))})")
            values.extend(self.outcome)
        if self.min_reward is not None:
            clauses.append("reward >= ?")
            values.append(self.min_reward)
        if self.max_reward is not None:
            clauses.append("reward <= ?")
            values.append(self.max_reward)
        return (" WHERE " + " AND ".join(clauses) if clauses else ""), values


@dataclass(frozen=True)
class Page:
    offset: int = 0
    limit: int = 50

    def __post_init__(self) -> None:
        if not 0 <= self.offset <= MAX_OFFSET:
            raise QueryError(f"offset must be from 0 to {MAX_OFFSET}, got {self.offset}")
        if not 1 <= self.limit <= MAX_LIMIT:
            raise QueryError(f"limit must be from 1 to {MAX_LIMIT}, got {self.limit}; page with offset= for more")


def row_dict(row: tuple[Any, ...]) -> dict[str, Any]:
    record = dict(zip(COLUMNS[1:], row[1:], strict=True))
    return {"index": row[0], **record, "has_tokens": bool(record["has_tokens"])}


def episodes(db: sqlite3.Connection, where: EpisodeFilter, page: Page, sort: str = "index") -> dict[str, Any]:
    """One page of episode summaries and how many match in all."""
    order = SORTS[_choice("sort", sort, list(SORTS))]
    clause, values = where.where()
    total = db.execute(f"SELECT COUNT(*) FROM episodes{clause}", values).fetchone()[0]
    rows = db.execute(
        f"SELECT {', '.join(COLUMNS)} FROM episodes{clause} ORDER BY {order} LIMIT ? OFFSET ?",
        [*values, page.limit, page.offset],
    ).fetchall()
    return {"total": total, "offset": page.offset, "limit": page.limit, "episodes": [row_dict(r) for r in rows]}


def all_rows(db: sqlite3.Connection) -> list[list[Any]]:
    """Every episode summary as a list in ``COLUMNS`` order (the report embeds them)."""
    return [list(r) for r in db.execute(f"SELECT {', '.join(COLUMNS)} FROM episodes ORDER BY id")]


def summary(db: sqlite3.Connection) -> dict[str, Any]:
    """The run at a glance: the agent's episodes, outcome counts, success rate and mean reward of the scored
    ones (as ``agenthub eval`` scores them: an opponent's seats are counted apart, never scored), and
    win/draw/loss per seat on a multi-player env, the agent's and the opponent's apart."""
    outcomes: dict[str, tuple[int, float]] = {}
    # by role, then summed here: a scan of the covering index episodes_role, the fastest way on 100,000 rows
    for role, o, n, r in db.execute("SELECT role, outcome, COUNT(*), SUM(reward) FROM episodes GROUP BY role, outcome"):
        if role != "opponent":
            count, total = outcomes.get(o, (0, 0.0))
            outcomes[o] = (count + n, total + (r or 0.0))
    scored = {o: v for o, v in outcomes.items() if o not in EXCLUDED_VALUES}
    n = sum(c for c, _ in scored.values())
    tasks = db.execute(f"SELECT COUNT(*) FROM (SELECT 1 FROM episodes WHERE {AGENTS_ONLY} GROUP BY env, task)")
    result: dict[str, Any] = {
        "episodes": sum(c for c, _ in outcomes.values()),
        "outcomes": {o: c for o, (c, _) in sorted(outcomes.items())},
        "scored": n,
        "success_rate": round(scored.get("success", (0, 0.0))[0] / n, 6) if n else None,
        "mean_reward": round(sum(r for _, r in scored.values()) / n, 6) if n else None,
        "tasks": tasks.fetchone()[0],
    }
    return {**result, **_seats(db)}


def _seats(db: sqlite3.Connection) -> dict[str, Any]:
    """Win/draw/loss by seat, the agent's and the opponent's apart; nothing for a single-player run."""
    rows = db.execute(
        "SELECT role IS 'opponent', seat, seat_result, COUNT(*) FROM episodes WHERE seat IS NOT NULL GROUP BY 1, 2, 3"
    ).fetchall()
    if not rows:
        return {}
    tables: dict[bool, dict[int, SeatScore]] = {False: {}, True: {}}
    opponent_episodes = 0
    for opponent, seat, result, count in rows:
        score = tables[bool(opponent)].setdefault(seat, SeatScore(seat))
        opponent_episodes += count if opponent else 0
        if result is None:
            score.unfinished += count
        else:
            setattr(score, result, getattr(score, result) + count)
    return {
        "self_play": opponent_episodes == 0,
        "opponent_episodes": opponent_episodes,
        "seats": {
            whose: {str(s): table[s].as_dict() for s in sorted(table)}
            for whose, table in (("agent", tables[False]), ("opponent", tables[True]))
        },
    }


def facets(db: sqlite3.Connection) -> dict[str, Any]:
    """The values each filter control offers, with counts; tasks in the order they first appear."""
    envs = db.execute("SELECT env, COUNT(*) FROM episodes GROUP BY env ORDER BY env").fetchall()
    outcomes = dict(db.execute("SELECT outcome, COUNT(*) FROM episodes GROUP BY outcome").fetchall())
    tasks = db.execute(
        "SELECT task, COUNT(*) FROM episodes WHERE task IS NOT NULL GROUP BY task ORDER BY MIN(id) LIMIT ?",
        (FACET_TASKS + 1,),
    ).fetchall()
    return {
        "envs": [{"value": e, "count": c} for e, c in envs],
        # every outcome, in the Outcome order, so the control is the same from run to run
        "outcomes": [{"value": o.value, "count": outcomes.get(o.value, 0)} for o in Outcome],
        "tasks": [{"value": t, "count": c} for t, c in tasks[:FACET_TASKS]],
        "tasks_truncated": len(tasks) > FACET_TASKS,
    }


@dataclass
class TaskRow:
    env: str
    task: str | None
    first: int
    episodes: int = 0
    excluded: int = 0
    successes: int = 0
    reward_sum: float = 0.0
    pass_at: dict[str, float | None] = field(default_factory=dict)

    @property
    def scored(self) -> int:
        return self.episodes - self.excluded

    def as_dict(self) -> dict[str, Any]:
        n = self.scored
        return {
            "env": self.env,
            "task": self.task,
            "episodes": self.episodes,
            "excluded": self.excluded,
            "successes": self.successes,
            "success_rate": round(self.successes / n, 6) if n else None,
            "mean_reward": round(self.reward_sum / n, 6) if n else None,
            **self.pass_at,
        }


def _asked_order(key: str | None, first: int) -> tuple[int, int]:
    """Tasks in the order they were asked for (keys are ``"<task index>/<sample>"``), as ``agenthub eval``
    lists them; tasks without such keys follow, in the order they first appear in the run."""
    index = (key or "").partition("/")[0]
    return (int(index), first) if index.isdigit() else (1 << 62, first)


def task_rows(db: sqlite3.Connection) -> tuple[list[dict[str, Any]], list[int]]:
    """Every (env, task) in the order asked for, with unbiased pass@k for k = 1, 2, 4, ... up to the most samples.

    Scores follow ``agenthub eval``: env_error and timeout samples are left out (and counted as excluded),
    and so are an opponent's seats (not counted at all: they are not the agent's samples).
    """
    excluded = ",".join(f"'{v}'" for v in EXCLUDED_VALUES)  # fixed enum values, not user input
    grouped = db.execute(
        f"""SELECT env, task, MIN(id), MIN(key), COUNT(*),
                   SUM(outcome IN ({excluded})), SUM(outcome = 'success'),
                   SUM(CASE WHEN outcome IN ({excluded}) THEN 0 ELSE reward END)
            FROM episodes WHERE {AGENTS_ONLY} GROUP BY env, task"""
    ).fetchall()
    grouped.sort(key=lambda g: _asked_order(g[3], g[2]))
    rows = [
        TaskRow(env, task, first, episodes, bad, wins, reward or 0.0)
        for env, task, first, _, episodes, bad, wins, reward in grouped
    ]
    most = max((r.scored for r in rows), default=0)
    ks = default_ks(most) if most > 1 else []  # pass@k means something with several samples per task
    for row in rows:
        row.pass_at = {
            f"pass@{k}": round(pass_at_k(row.scored, row.successes, k), 6) if row.scored >= k else None for k in ks
        }
    return [r.as_dict() for r in rows], ks


def sort_tasks(rows: list[dict[str, Any]], sort: str) -> list[dict[str, Any]]:
    """Rows in ``sort`` order; tasks with no scored sample go last either way."""
    _choice("sort", sort, list(TASK_SORTS))
    if sort == "order":
        return rows
    name = sort.lstrip("-")
    descending = sort.startswith("-")
    present = [r for r in rows if r[name] is not None]
    missing = [r for r in rows if r[name] is None]
    return sorted(present, key=lambda r: r[name], reverse=descending) + missing
