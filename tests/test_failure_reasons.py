"""An eval that ends in failures says why on the console: the commonest reasons under the score table,
and each distinct env error once, as it happens (issue 29 item 4)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from agenthub.cli.main import main
from agenthub.failure_reasons import TIMES, EnvErrorEcho, commonest_reasons, describe_reasons, reason_of
from agenthub.types import Outcome, Task, Trajectory, Turn

REFUSED = "HTTP 500 internal_error from http://127.0.0.1:{port}/v1/sessions: ValueError: high must be at least 2"


def trajectory(
    outcome: Outcome, error: str | None = None, *, key: str = "0/0", reason: str | None = None
) -> Trajectory:
    turns = [Turn(action="guess 1", observation="no", reward=0.0, terminated=True, truncated=False)]
    if reason is not None:
        turns[0].info["reason"] = reason
    return Trajectory(
        task=Task(env="guess", task_id=1), first_observation="", turns=turns, outcome=outcome, error=error, key=key
    )


def retried(port: int) -> Trajectory:
    """An env error as the executor stores it after three attempts, each on a server of its own."""
    error = "; ".join(f"attempt {n}: create session: {REFUSED.format(port=port + n)}" for n in (1, 2, 3))
    failed = trajectory(Outcome.ENV_ERROR, error, key=f"{port}/0")
    failed.attempts = 3
    return failed


def test_reasons_are_counted_commonest_first_whichever_server_or_attempt_said_them() -> None:
    episodes = [
        *(trajectory(Outcome.AGENT_ERROR, "the env rejected the action: 'fly'") for _ in range(3)),
        retried(8000),
        retried(9000),
        trajectory(Outcome.TRUNCATED),
        trajectory(Outcome.FAILURE, reason="out of guesses"),
        trajectory(Outcome.FAILURE),
        trajectory(Outcome.SUCCESS),
    ]
    assert commonest_reasons(episodes) == [
        (3, "agent_error: the env rejected the action: 'fly'"),
        (2, "env_error: create session: HTTP 500 internal_error: ValueError: high must be at least 2"),
        (1, "truncated: the episode reached its turn limit (max_turns) before the env ended it"),
        (1, "failure: out of guesses"),
    ]
    assert reason_of(trajectory(Outcome.SUCCESS)) is None
    lines = describe_reasons(commonest_reasons(episodes), shown=2)
    assert lines[1:] == [
        f"  3 {TIMES} agent_error: the env rejected the action: 'fly'",
        f"  2 {TIMES} env_error: create session: HTTP 500 internal_error: ValueError: high must be at least 2",
        "  … 2 more reasons, 2 episodes",
    ]
    assert describe_reasons([]) == []


def test_a_long_reason_is_cut_to_one_line() -> None:
    reason = reason_of(trajectory(Outcome.AGENT_ERROR, "line one\nline two " + "x" * 1000))
    assert reason is not None and "\n" not in reason and len(reason) <= len("agent_error: ") + 300
    assert reason.startswith("agent_error: line one line two xxx") and reason.endswith("…")


def test_each_distinct_env_error_is_echoed_once() -> None:
    stream = io.StringIO()
    echo = EnvErrorEcho(stream)
    for episode in [retried(8000), retried(9000), trajectory(Outcome.AGENT_ERROR, "bad reply")]:
        echo(episode)
    echo(trajectory(Outcome.ENV_ERROR, "reset: the JVM died", key="3/0"))
    assert stream.getvalue().splitlines() == [
        "agenthub: episode 8000/0 ended in env_error: create session: HTTP 500 internal_error: ValueError: high must "
        "be at least 2 after 3 attempts (each distinct env error is shown once)",
        "agenthub: episode 3/0 ended in env_error: reset: the JVM died (each distinct env error is shown once)",
    ]


def test_an_eval_whose_env_fails_says_why_on_the_console(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["eval", "env=guess", "env_kwargs.high=0", "n=2", "max_attempts=2", "progress=false"])
    out, err = capsys.readouterr()
    assert code == 1, out + err
    why = "env_error: create session: HTTP 500 internal_error: ValueError: high must be at least 2, got 0"
    assert err.count(f"ended in {why}") == 1  # the first episode's, as it ended; the second's is the same
    assert "why episodes failed" in out
    assert f"  2 {TIMES} {why}; see the server log" in out
    assert out.index("why episodes failed") < out.index("run saved in")
