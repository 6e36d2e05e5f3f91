"""The task ids of a split: what every trainer (and ``agenthub eval``) trains or scores on.

A split comes as a server's ``/v1/tasks`` listing (:class:`~agenthub.types.TaskList`) or as an installed env
plugin declares it (:class:`~agenthub.types.TaskSplit`); both name their ids explicitly or as a range.
"""

from __future__ import annotations

from agenthub.errors import ConfigError
from agenthub.types import TaskId, TaskList, TaskSplit


def split_task_ids(listing: TaskList | TaskSplit, limit: int | None = None) -> list[TaskId]:
    """The ids of the split ``listing`` names, in order, the first ``limit`` of them (all when ``limit`` is None).

    A listing names its ids either explicitly (``ids``) or as the range ``start``..``stop``; a range is
    not expanded past ``limit``, so a split of millions of tasks costs nothing to cut short.
    """
    if limit is not None and limit < 0:
        raise ConfigError(f"a task limit must be 0 or more, not {limit}")
    if listing.ids is not None:
        ids = list(listing.ids)
        return ids if limit is None else ids[:limit]
    if listing.start is None or listing.stop is None:
        raise ConfigError(
            f"the listing of split {getattr(listing, 'split', '?')!r} names neither ids nor a start..stop range; "
            "the env server is broken: fix its /v1/tasks answer"
        )
    stop = listing.stop if limit is None else min(listing.stop, listing.start + limit)
    return list(range(listing.start, stop))
