"""The warning for a step whose episodes mostly ended truncated or failed: when, why, how often."""

from __future__ import annotations

from agenthub.training import StepWarnings, step_warning
from agenthub.types import Outcome, Task, Trajectory, Turn


def episode(outcome: Outcome, turns: int, *, max_turns: int = 3, error: str | None = None) -> Trajectory:
    played = [Turn(action="x", observation="o", reward=0.0, terminated=False, truncated=False)] * turns
    task = Task(env="e", task_id=0, max_turns=max_turns)
    return Trajectory(task=task, first_observation="o", turns=played, outcome=outcome, error=error)


def test_a_step_that_mostly_ended_normally_has_no_warning() -> None:
    batch = [episode(Outcome.SUCCESS, 2)] * 5 + [episode(Outcome.TRUNCATED, 3)] * 5
    assert step_warning(4, batch) is None


def test_the_warning_names_each_cause_and_the_setting() -> None:
    batch = (
        [episode(Outcome.TRUNCATED, 0)] * 5  # no turn at all: the prompt filled the context
        + [episode(Outcome.TRUNCATED, 3)] * 2  # the turn limit
        + [episode(Outcome.ENV_ERROR, 1, error="HTTP 500 env_error")]
        + [episode(Outcome.FAILURE, 2)] * 2
    )
    warning = step_warning(7, batch, max_context_key="max_len")
    assert warning is not None
    assert warning.startswith("warning: step 7: 8 of 10 episodes ended truncated or failed")
    assert "5 the context filled up" in warning and "raise max_len" in warning
    assert "2 they hit the turn limit" in warning and "1 env servers failed (env_error)" in warning
    assert warning.endswith("e.g. HTTP 500 env_error")


def test_a_run_hears_of_a_cause_once_then_every_ten_steps_while_it_lasts() -> None:
    warnings = StepWarnings(every=10)
    stuck = [episode(Outcome.TRUNCATED, 3)] * 4
    said = [step for step in range(1, 25) if warnings.check(step, stuck)]
    assert said == [1, 11, 21]
    assert "(so since step 1)" in (warnings.check(31, stuck) or "")
    assert warnings.check(32, [episode(Outcome.SUCCESS, 1)] * 4) is None
    assert warnings.check(33, stuck) is not None  # it came back: said again at once
