"""``EnvCalls``: where a server runs environment code, in its thread pool or inline on the event loop.

A thread hop costs more than a whole step of a cheap pure-Python env
(TextCraft's step takes ~15 µs; submitting to a pool, waking a thread and
resolving the future costs several times that, plus GIL hand-offs). An env
whose spec sets ``inline_calls`` has its reset, step and close run on the
event loop instead.

The safety valve: each inline call's duration feeds a moving average per kind
of call (about the last ten calls), each call counting at most twice the
budget; once that average passes ``inline_budget_ms``, that kind of call goes
to the thread pool for the rest of the server's life, so a slow env cannot
keep stalling every other session. It takes most of the recent calls being
slow: a lone stall (a garbage-collection pause, a preemption by a busy
machine, a first call that loads data) never trips it. A false trip would only
cost speed.
Wall time, not CPU time: an env that blocks is as bad for the loop as one that
computes. Construction is inline too once the server has built a first
instance in the pool at startup (``EnvService.start``), which takes the
module imports and one-time loading off the loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, TypeVar

from agenthub.service.sessions import ServiceError

log = logging.getLogger("agenthub.service")
T = TypeVar("T")

CallKind = Literal["make", "reset", "step", "close"]
INLINE_KINDS: frozenset[CallKind] = frozenset({"make", "reset", "step", "close"})
SMOOTHING = 0.1
"""Weight of the newest call in the moving average of inline call durations."""
CLAMP = 2.0
"""A call counts in the average for at most this many budgets."""


class EnvCalls:
    """Runs environment calls off the loop (thread pool) or, for declared-cheap envs, inline with a valve."""

    def __init__(
        self,
        env_name: str,
        *,
        threads: int,
        timeout_s: float | None,
        inline: bool,
        inline_budget_s: float,
    ) -> None:
        self.env_name = env_name
        self.timeout_s = timeout_s
        self.inline_budget_s = inline_budget_s
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=f"env-{env_name}")
        self.inline: set[CallKind] = set(INLINE_KINDS) if inline else set()
        """The kinds of call that run on the event loop now; the valve removes kinds from it."""
        self.average_s: dict[CallKind, float] = dict.fromkeys(INLINE_KINDS, 0.0)
        """Moving average of the duration of inline calls, by kind."""

    async def run(self, kind: CallKind, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        if kind in self.inline:
            return self._run_inline(kind, fn, *args, **kwargs)
        return await self.run_in_pool(fn, *args, **kwargs)

    async def run_in_pool(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self.pool, lambda: fn(*args, **kwargs))
        if self.timeout_s is None:
            return await future
        try:
            return await asyncio.wait_for(future, self.timeout_s)
        except TimeoutError:
            raise self._timeout() from None

    def _run_inline(self, kind: CallKind, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        started = time.perf_counter()
        try:
            result = fn(*args, **kwargs)
        finally:
            spent = time.perf_counter() - started
            counted = min(spent, CLAMP * self.inline_budget_s)
            average = self.average_s[kind] = (1 - SMOOTHING) * self.average_s[kind] + SMOOTHING * counted
            if average > self.inline_budget_s:
                self._to_pool(kind, average)
        if self.timeout_s is not None and spent > self.timeout_s:
            raise self._timeout()  # it could not be interrupted, but it is answered as the pool would
        return result

    def _to_pool(self, kind: CallKind, average: float) -> None:
        self.inline.discard(kind)
        log.warning(
            "agenthub: env %r: most recent inline %s calls took longer than inline_budget_ms=%g "
            "(moving average %.1f ms); %s calls now run in the thread pool. If this env's %s is often "
            "that slow, set inline_calls=False in its EnvSpec, or serve it with inline_calls=false",
            self.env_name,
            kind,
            1000 * self.inline_budget_s,
            1000 * average,
            kind,
            kind,
        )

    def _timeout(self) -> ServiceError:
        return ServiceError(
            504,
            "env_timeout",
            f"the environment took longer than step_timeout={self.timeout_s:g}s; "
            "the session is abandoned, create a new one",
        )

    def shutdown(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
