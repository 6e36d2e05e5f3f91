"""The start every env's ``reset`` shares: refuse options it does not take, check the seed, pick the task.

Example, in an env's ``reset``::

    start = begin_reset("maze", task_id=task_id, seed=seed, options=options, train=TRAIN)
    self._maze = maze_for_task(start.task_id)

A reset that names no task plays a train task drawn with ``random.Random(seed)``, so the same seed
always plays the same task; the env's own RNG, never the global one, so concurrent sessions cannot
disturb each other. Checking the task id itself stays with the env, which alone knows its ids.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agenthub.types import TaskId, TaskSplit

NO_OPTIONS_HINT = "leave options empty"


@dataclass(frozen=True, slots=True)
class ResetStart:
    """What :func:`begin_reset` settled: the task to play, the seed (its default applied), the options."""

    task_id: TaskId
    seed: int | None
    options: dict[str, Any]


def begin_reset(
    env: str,
    *,
    task_id: TaskId | None,
    seed: int | None,
    options: Mapping[str, Any] | None,
    train: TaskSplit | Sequence[TaskId],
    known_options: Collection[str] = (),
    hint: str | None = NO_OPTIONS_HINT,
    default_seed: int | None = None,
) -> ResetStart:
    """Check a reset's arguments and pick its task; ``ValueError`` (HTTP 422 from the service) names what is wrong.

    ``train``: the ids a seed draws from when ``task_id`` is None. ``known_options``: the option names the
    env takes (none by default; ``hint`` then says what to do instead). ``default_seed``: the seed used
    when none is given, None for a fresh draw each time.
    """
    chosen = check_reset_options(env, options, known_options, hint=hint)
    seed = check_seed(seed)
    if seed is None:
        seed = default_seed
    if task_id is None:
        task_id = draw_task(train, seed)
    return ResetStart(task_id, seed, chosen)


def check_reset_options(
    env: str, options: Mapping[str, Any] | None, known: Collection[str] = (), *, hint: str | None = NO_OPTIONS_HINT
) -> dict[str, Any]:
    """A copy of ``options``, refused if it holds a name that is not in ``known``."""
    chosen = dict(options or {})
    if not known:
        if chosen:
            raise ValueError(f"{env} takes no reset options, got {sorted(chosen)}" + (f"; {hint}" if hint else ""))
        return chosen
    unknown = sorted(set(chosen) - set(known))
    if unknown:
        raise ValueError(
            f"unknown {env} reset option(s) {', '.join(map(repr, unknown))}; the options are {', '.join(known)}"
        )
    return chosen


def check_seed(seed: object) -> int | None:
    """``seed``, refused unless an integer or None (a bool is not a seed, though Python counts it an int)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ValueError(f"seed must be an integer or None, got {seed!r}")
    return seed


def draw_task(train: TaskSplit | Sequence[TaskId], seed: int | None) -> TaskId:
    """The task ``random.Random(seed)`` draws from ``train``."""
    rng = random.Random(seed)
    if not isinstance(train, TaskSplit):
        return rng.choice(train)
    if train.ids is not None:
        return rng.choice(train.ids)
    assert train.start is not None  # a range split has both ends (TaskSplit checks)
    return train.start + rng.randrange(train.count)
