"""The reply parser runs in linear time: 1 MB pathological replies, strict and lenient, each well under a second.

Time is CPU time (this process's, or this thread's for the growth ratio), never the wall clock: on CI's two
shared cores a burst of another job's load once made one round of a 64,000-tag reply read 35x its 8,000-tag
round (0.0035 s against 0.12 s of wall time), where the CPU time grows 8x.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from agenthub.testing import MEGABYTE_PARSE_CPU_S, cpu_seconds_at_most

from agenthub_env_search.actions import parse_action

MB = 1 << 20

# Each defeats a backtracking regex: openers with no closer (the lazy .*? scans to the end from each),
# and whitespace runs for the plain-line form's \s* (from every line start or after every space).
PATHOLOGICAL = {
    "search openers, no closer": "<search>" * (MB // 8),
    "answer openers, one search closer at the end": "<answer>" * (MB // 8) + "</search>",
    "alternating openers, the last one closed": "<search><answer>" * (MB // 16) + "x</answer>",
    "closers before every opener": "</search></answer>" * (MB // 18) + "<search>q",
    "angle brackets": "<" * MB,
    "newlines": "\n" * MB,
    "a plain answer with a space run": "answer: a" + " " * MB + "b",
    "mixed-case openers": "<SeArCh>" * (MB // 8),
}
# The leftmost opener that has a closer wins, and its content runs to that closer: all the other tags.
_ALTERNATING = ("answer", PATHOLOGICAL["alternating openers, the last one closed"][16 : -len("</answer>")])
EXPECTED_STRICT: dict[str, Any] = {"alternating openers, the last one closed": _ALTERNATING}
EXPECTED_LENIENT: dict[str, Any] = {
    "alternating openers, the last one closed": _ALTERNATING,
    "a plain answer with a space run": ("answer", "a" + " " * MB + "b"),
}


@pytest.mark.parametrize("name", list(PATHOLOGICAL))
@pytest.mark.parametrize("lenient", [False, True])
def test_a_1mb_pathological_reply_parses_in_linear_time(name: str, lenient: bool) -> None:
    reply = PATHOLOGICAL[name]
    # Linear work on 1 MB is tens of milliseconds; a quadratic parse would take hours.
    with cpu_seconds_at_most(MEGABYTE_PARSE_CPU_S, name):
        parsed = parse_action(reply, lenient=lenient)
    assert parsed == (EXPECTED_LENIENT if lenient else EXPECTED_STRICT).get(name), name


def test_time_grows_linearly_with_the_reply() -> None:
    def cost(n: int) -> float:
        reply = "<search>" * n
        best = float("inf")
        for _ in range(5):  # the fastest round: the others may have shared the core's caches with a neighbour
            started = time.thread_time()
            parse_action(reply, lenient=True)
            best = min(best, time.thread_time() - started)
        return best

    small, large = cost(16_000), cost(128_000)
    assert large < small * 8 * 4, (small, large)  # 8x the input: ~8x the time, far from 64x
