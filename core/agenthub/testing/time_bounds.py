"""Time bounds for hostile-input tests that a busy machine cannot break and a parser that is not linear
cannot pass.

A quadratic pattern that takes a second on 16,000 characters takes hours on a megabyte, so a bound of a
few seconds separates the two by three orders of magnitude. What it must not do is count time the test
spent waiting for a core: CI runs several jobs on two cores, and a wall-clock bound of 2 s failed there on
a parse that takes 0.3 s on a quiet machine. So the bound is on **CPU time of this process**
(:func:`time.process_time`), which counts every thread of the process (an in-process server's included)
and none of the time spent runnable but not running.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

MEGABYTE_PARSE_CPU_S = 2.0
"""CPU seconds a parser (and, in-process, the server around it) may spend on a megabyte of hostile text."""


@contextlib.contextmanager
def cpu_seconds_at_most(limit: float, what: str) -> Iterator[None]:
    """Fail when the block spends more than ``limit`` CPU seconds of this process."""
    started = time.process_time()
    yield
    spent = time.process_time() - started
    if spent >= limit:
        raise AssertionError(
            f"{what}: {spent:.2f} CPU seconds, over the bound of {limit}; a parser that is not linear in its "
            "input's length does this (profile it on the input above)"
        )


ANOTHER_PROCESS_WALL_S = 30.0
"""Wall seconds for an answer from a server in another process, whose CPU time this process cannot read:
loose enough for a loaded CI machine, still hours short of what a quadratic parser takes on a megabyte."""
