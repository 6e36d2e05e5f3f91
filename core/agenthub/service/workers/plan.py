"""What a worker process is told by its supervisor, and the mark its session ids carry."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

_MARK = re.compile(r"w(\d{1,4})g(\d{1,9})-")


def session_mark(index: int, generation: int) -> str:
    """The start of every session id made by worker ``index`` in its ``generation``-th start (from 0)."""
    return f"w{index}g{generation}-"


def read_mark(session_id: str) -> tuple[int, int] | None:
    """(worker, generation) of a session id made by a worker, else None."""
    found = _MARK.match(session_id)
    return None if found is None else (int(found[1]), int(found[2]))


class WorkerPlan(BaseModel):
    """Sent to a worker on its stdin (never its command line: the settings may hold the token)."""

    env: str
    index: int
    generation: int
    urls: list[str]
    """Every worker's own base URL, by index, as clients reach it."""
    public_port: int
    public_fd: int
    own_fd: int
    ready_file: str
    settings: dict[str, Any]
    """The settings the user gave (the env's service defaults fill the rest), advertise_url set to ``urls[index]``."""
