"""Why episodes failed, said on the console: an eval that ends in failures names the commonest
reasons under its score table, and an env error's message is shown once, as it happens, rather than
only in ``trajectories.jsonl``.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from rich.console import Console

from agenthub.rollout.store import RunStore
from agenthub.types import Outcome, Trajectory

SHOWN_REASONS = 3
TIMES = "\u00d7"
MAX_REASON_CHARS = 300
"""A reason longer than this is cut (the whole text is in trajectories.jsonl)."""
_ATTEMPT = re.compile(r"(?:^|; )attempt \d+: ")
"""How the executor joins a retried episode's errors: ``attempt 1: ...; attempt 2: ...``."""
_SERVER_URL = re.compile(r" from https?://\S+?(?=: )")
"""``HTTP 500 internal_error from http://127.0.0.1:PORT/v1/sessions: ...``: one reason whichever server said it."""


def reason_of(trajectory: Trajectory) -> str | None:
    """Why ``trajectory`` failed, as ``"outcome: message"``; None for an episode that did not fail for a reason."""
    outcome = trajectory.outcome
    if trajectory.error:
        # the last attempt's error: a retried episode's are mostly the same message, numbered
        message = [part for part in _ATTEMPT.split(trajectory.error) if part.strip()][-1:] or [trajectory.error]
        return f"{outcome.value}: {_cut(_SERVER_URL.sub('', message[0]).strip())}"
    if outcome is Outcome.TRUNCATED:
        return "truncated: the episode reached its turn limit (max_turns) before the env ended it"
    if outcome.is_infra_failure:
        return f"{outcome.value}: (no message)"
    if outcome is Outcome.FAILURE and trajectory.turns:
        said = trajectory.turns[-1].info.get("reason")
        if isinstance(said, str) and said.strip():
            return f"failure: {_cut(said.strip())}"
    return None


def _cut(text: str) -> str:
    text = " ".join(text.split())  # one line per reason
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 1] + "…"


def commonest_reasons(trajectories: Iterable[Trajectory]) -> list[tuple[int, str]]:
    """Each distinct reason with its count, commonest first."""
    counts = Counter(
        r for t in trajectories if t.provenance.get("role") != "opponent" and (r := reason_of(t)) is not None
    )
    return [(n, reason) for reason, n in counts.most_common()]


def describe_reasons(reasons: list[tuple[int, str]], *, shown: int = SHOWN_REASONS) -> list[str]:
    """The lines to print: a header, then one line per reason with its count, for the commonest ``shown``."""
    if not reasons:
        return []
    width = len(str(reasons[0][0]))
    lines = ["why episodes failed (commonest first; every episode's error is in trajectories.jsonl):"]
    lines += [f"  {n:>{width}} {TIMES} {reason}" for n, reason in reasons[:shown]]
    if len(reasons) > shown:
        rest = sum(n for n, _ in reasons[shown:])
        lines.append(f"  … {len(reasons) - shown} more reasons, {rest} episodes")
    return lines


def print_failure_reasons(console: Console, run_dir: Path) -> None:
    """Under an eval's score table: the commonest reasons its episodes failed, if any did."""
    for line in describe_reasons(commonest_reasons(RunStore.existing(run_dir).trajectories())):
        console.print(line, soft_wrap=True, markup=False, highlight=False)


class EnvErrorEcho:
    """An ``on_trajectory`` callback that prints each distinct env error's message once, when it
    happens, so that a broken env is seen at once rather than after every episode has failed."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream
        self.seen: set[str] = set()

    def __call__(self, trajectory: Trajectory) -> None:
        if trajectory.outcome is not Outcome.ENV_ERROR:
            return
        reason = reason_of(trajectory)
        if reason is None or reason in self.seen:
            return
        self.seen.add(reason)
        tries = f" after {trajectory.attempts} attempts" if trajectory.attempts > 1 else ""
        print(
            f"agenthub: episode {trajectory.key} ended in {reason}{tries} (each distinct env error is shown once)",
            file=self.stream or sys.stderr,
            flush=True,
        )
