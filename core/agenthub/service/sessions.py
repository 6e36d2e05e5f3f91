"""The server's session table: capacity, idle expiry, per-session locks, idempotent steps.

Everything here runs on the event loop and never blocks; environment calls
are made by the server through its thread pool.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from agenthub.protocols import Environment, MultiPlayerEnvironment
from agenthub.types import TaskId


class ServiceError(Exception):
    """An error answered to the client as ``{"error": {"code", "message"}}`` with ``status``."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}


SESSION_ID_PREFIX = ""
"""Set once in a worker process of ``agenthub serve workers=N`` (``agenthub.service.workers``): its mark, by
which every worker tells whose session an id names."""


def new_session_id() -> str:
    return SESSION_ID_PREFIX + uuid.uuid4().hex


@dataclass(eq=False)
class Session:
    """One live episode on this server."""

    env: Environment | MultiPlayerEnvironment
    task_id: TaskId | None
    id: str = field(default_factory=new_session_id)
    created_at: float = field(default_factory=time.time)
    last_used_at: float = field(default_factory=time.time)
    last_used_monotonic: float = field(default_factory=time.monotonic)
    turns: int = 0
    done: bool = False
    seat: int | None = None
    """Multi-player envs: the seat on turn (the last to act once the episode has ended); None otherwise."""
    failure: str | None = None
    """Why the environment can no longer be trusted (it raised or hung); steps are refused."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    replies: OrderedDict[str, bytes] = field(default_factory=OrderedDict)
    """The last few step answers (their JSON) by request id, so a retried step is answered, not re-applied."""

    def touch(self) -> None:
        self.last_used_at = time.time()
        self.last_used_monotonic = time.monotonic()

    def remember(self, request_id: str, reply: bytes, keep: int) -> None:
        self.replies[request_id] = reply
        while len(self.replies) > keep:
            self.replies.popitem(last=False)

    def state(self) -> dict[str, Any]:
        state = {
            "session_id": self.id,
            "task_id": self.task_id,
            "turns": self.turns,
            "done": self.done,
            "created_at": self.created_at,
            "last_used_at": self.last_used_at,
        }
        if self.seat is not None:
            state["seat"] = self.seat
        return state


class SessionTable:
    """Live sessions by id, bounded by ``max_sessions``, expired after ``ttl_s`` idle seconds."""

    def __init__(self, *, max_sessions: int, ttl_s: float, remembered_replies: int = 16) -> None:
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be >= 1, got {max_sessions}")
        if ttl_s <= 0:
            raise ValueError(f"ttl_s must be > 0, got {ttl_s}")
        self.max_sessions = max_sessions
        self.ttl_s = ttl_s
        self.remembered_replies = remembered_replies
        self._sessions: dict[str, Session] = {}
        self._reserved = 0

    def __len__(self) -> int:
        return len(self._sessions)

    def reserve(self) -> None:
        """Claim a slot before the (slow) environment is built, or answer 503."""
        if len(self._sessions) + self._reserved >= self.max_sessions:
            retry_after = max(1, min(30, int(self.ttl_s / 10)))
            raise ServiceError(
                503,
                "at_capacity",
                f"this server holds its maximum of {self.max_sessions} sessions; close finished sessions "
                f"(DELETE /v1/sessions/ID), retry after {retry_after}s, or start the server with a larger max_sessions",
                {"Retry-After": str(retry_after)},
            )
        self._reserved += 1

    def release_reservation(self) -> None:
        self._reserved -= 1

    def add(self, session: Session) -> None:
        """Fill a reserved slot."""
        self._reserved -= 1
        self._sessions[session.id] = session

    def get(self, session_id: str) -> Session:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise ServiceError(
                404,
                "session_not_found",
                f"session {session_id!r} does not exist: it was closed, it expired after {self.ttl_s:g}s idle, "
                "or the server restarted; create a new session with POST /v1/sessions",
            ) from None

    def pop(self, session_id: str) -> Session:
        session = self.get(session_id)
        del self._sessions[session_id]
        return session

    def pop_expired(self, now: float | None = None) -> list[Session]:
        """Remove and return the sessions idle for longer than the TTL and not in use."""
        now = time.monotonic() if now is None else now
        expired = [
            s for s in self._sessions.values() if now - s.last_used_monotonic > self.ttl_s and not s.lock.locked()
        ]
        for session in expired:
            del self._sessions[session.id]
        return expired

    def pop_all(self) -> list[Session]:
        sessions = list(self._sessions.values())
        self._sessions.clear()
        return sessions
