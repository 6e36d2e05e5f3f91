"""The warning for a step whose episodes mostly ended truncated or failed: when, why, how often."""

from __future__ import annotations

from agenthub.training import StepOutcomeLog, StepWarnings, step_warning
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


def test_episodes_one_at_a_time_are_checked_when_their_step_is_over() -> None:
    said: list[str] = []
    log = StepOutcomeLog(emit=said.append)
    for _ in range(3):
        assert log.add(episode(Outcome.TRUNCATED, 0), step=5) is None
    assert log.add(episode(Outcome.SUCCESS, 1), step=6) is not None  # step 5 is over: 3 of 3 ended truncated
    assert len(said) == 1 and said[0].startswith("warning: step 5: 3 of 3 episodes")


def test_without_step_numbers_a_window_of_episodes_is_a_step() -> None:
    said: list[str] = []
    log = StepOutcomeLog(window=2, emit=said.append)
    for trajectory in [episode(Outcome.TRUNCATED, 3)] * 2 + [episode(Outcome.SUCCESS, 1)] * 3:
        log.add(trajectory)
    assert [line.split(":")[0] for line in said] == ["warning"] and "step 1: 2 of 2" in said[0]
