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


# A real run of the main job (`agenthub run trainer=trl env=trail`, seed 0, 64 episodes a step), steps 1-30:
# each step's episodes as <outcome><forks passed>:<count> (T truncated at the 3-turn limit, F failure,
# S success; reward = forks passed / 3). Steps 1-6 and 18 are mostly truncated while the run learns.
RECORDED_RUN = [
    "F0:17 F1:4 T0:36 T1:6 T2:1",  # 1
    "F0:27 F1:1 S3:1 T0:26 T1:9",  # 2
    "F0:22 F1:4 T0:25 T1:12 T2:1",  # 3
    "F0:23 F1:2 F2:1 T0:21 T1:15 T2:2",  # 4
    "F0:20 F2:1 T0:27 T1:12 T2:4",  # 5
    "F0:18 F1:3 T0:24 T1:15 T2:4",  # 6
    "F0:31 F1:5 T0:11 T1:12 T2:5",  # 7
    "F0:31 F1:8 S3:1 T0:9 T1:9 T2:6",  # 8
    "F0:24 F1:15 F2:1 T0:6 T1:14 T2:4",  # 9
    "F0:41 F1:8 F2:1 S3:1 T1:8 T2:5",  # 10
    "F0:36 F1:9 F2:2 S3:4 T0:3 T1:8 T2:2",  # 11
    "F0:32 F1:8 F2:2 S3:4 T0:6 T1:8 T2:4",  # 12
    "F0:20 F1:9 F2:4 S3:1 T0:8 T1:12 T2:10",  # 13
    "F0:34 F1:7 F2:2 S3:1 T0:1 T1:11 T2:8",  # 14
    "F0:29 F1:6 F2:2 S3:2 T0:6 T1:11 T2:8",  # 15
    "F0:29 F1:12 F2:3 S3:3 T0:3 T1:9 T2:5",  # 16
    "F0:11 F1:9 F2:1 S3:17 T0:1 T1:7 T2:18",  # 17
    "F0:1 F1:6 F2:3 S3:18 T0:6 T1:13 T2:17",  # 18
    "F0:6 F1:5 F2:3 S3:19 T0:4 T1:5 T2:22",  # 19
    "F0:10 F1:1 F2:3 S3:20 T0:1 T1:6 T2:23",  # 20
    "F0:1 F1:3 S3:28 T0:1 T1:9 T2:22",  # 21
    "F0:4 F1:1 F2:2 S3:28 T1:2 T2:27",  # 22
    "F0:1 F1:3 F2:1 S3:36 T1:7 T2:16",  # 23
    "F0:1 F1:1 S3:42 T1:4 T2:16",  # 24
    "F0:1 S3:41 T1:2 T2:20",  # 25
    "F0:1 S3:52 T1:1 T2:10",  # 26
    "F2:1 S3:61 T2:2",  # 27
    "F2:1 S3:56 T2:7",  # 28
    "F0:1 S3:60 T2:3",  # 29
    "F1:1 F2:1 S3:52 T1:1 T2:9",  # 30
]
_OUTCOMES = {"T": Outcome.TRUNCATED, "F": Outcome.FAILURE, "S": Outcome.SUCCESS}


def recorded_step(line: str) -> list[Trajectory]:
    batch = []
    for part in line.split():
        kind, count = part.split(":")
        outcome, passed = _OUTCOMES[kind[0]], int(kind[1])
        turns = 3 if outcome is Outcome.TRUNCATED else max(1, passed)
        batch += [episode(outcome, turns).model_copy(update={"reward": passed / 3})] * int(count)
    return batch


def said_at(warnings: StepWarnings, steps: list[list[Trajectory]]) -> list[int]:
    return [step for step, batch in enumerate(steps, 1) if warnings.check(step, batch)]


def test_a_run_that_learns_out_of_its_truncated_start_hears_nothing() -> None:
    steps = [recorded_step(line) for line in RECORDED_RUN]
    assert said_at(StepWarnings(), steps) == [1, 18]  # a step at a time: two false alarms in a healthy run
    assert said_at(StepWarnings(patience=5), steps) == []


def test_truncation_that_persists_while_the_reward_stays_flat_is_said_at_step_twice_patience() -> None:
    stuck = [recorded_step(RECORDED_RUN[0])] * 25  # the random model's first step, over and over
    warnings = StepWarnings(patience=5)
    said = [(step, warnings.check(step, batch)) for step, batch in enumerate(stuck, 1)]
    assert [step for step, line in said if line] == [10, 20]
    line = said[9][1]
    assert line is not None and line.startswith("warning: step 10: 43 of 64 episodes ended truncated")
    assert line.endswith("(so since step 1; the reward has not risen over the last 5 steps)")


def test_a_rising_reward_holds_the_warning_back_and_a_plateau_lets_it_through() -> None:
    rising = [[episode(Outcome.TRUNCATED, 3).model_copy(update={"reward": step / 100})] * 4 for step in range(12)]
    plateau = [[episode(Outcome.TRUNCATED, 3).model_copy(update={"reward": 0.12})] * 4] * 10
    # steps 13-17 are still above 8-12 (rising); 18-22 are no higher than 13-17: the plateau is said at 22
    assert said_at(StepWarnings(patience=5), rising + plateau) == [22]


def test_infra_failures_are_said_at_once_whatever_the_patience() -> None:
    failing = [episode(Outcome.ENV_ERROR, 1, error="HTTP 503")] * 4
    assert said_at(StepWarnings(patience=5), [failing] * 3) == [1]
