from __future__ import annotations

import pytest
from pydantic import ValidationError

from agenthub import Outcome, StepResult, TaskSplit
from agenthub.types import StepRequest, ToolCall


def test_task_split_range_and_ids() -> None:
    split = TaskSplit.range(10, 15)
    assert split.count == 5
    assert 10 in split and 14 in split and 15 not in split and "10" not in split
    assert split.first(3) == [10, 11, 12]
    listed = TaskSplit.of(["a", "b"])
    assert listed.count == 2 and "a" in listed and listed.first(5) == ["a", "b"]


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"start": 1, "stop": 3, "ids": [1]}, {"start": 5, "stop": 2}, {"start": 1}],
    ids=["neither", "both", "backwards", "half-range"],
)
def test_task_split_rejects_bad_forms(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        TaskSplit.model_validate(kwargs)


def test_only_policy_outcomes_are_trainable() -> None:
    assert {o for o in Outcome if o.is_infra_failure} == {Outcome.ENV_ERROR, Outcome.AGENT_ERROR, Outcome.TIMEOUT}


def test_step_request_accepts_text_or_tool_call_and_forbids_extras() -> None:
    assert StepRequest.model_validate({"action": "go north"}).action == "go north"
    call = StepRequest.model_validate({"action": {"name": "search", "arguments": {"q": "x"}}}).action
    assert call == ToolCall(name="search", arguments={"q": "x"})
    with pytest.raises(ValidationError, match="extra"):
        StepRequest.model_validate({"action": "x", "actoin": "y"})


def test_step_result_done() -> None:
    assert StepResult(observation="", reward=0, terminated=False, truncated=True).done
    assert not StepResult(observation="", reward=0, terminated=False, truncated=False).done


def test_errors_survive_pickling_across_processes() -> None:
    import pickle

    from agenthub.errors import EpisodeDoneError, UnknownNameError

    unknown = pickle.loads(pickle.dumps(UnknownNameError("env", "gues", ["guess"], "guess", "install more")))
    assert str(unknown) == "unknown env 'gues'; did you mean 'guess'? installed envs: guess. install more"
    done = pickle.loads(pickle.dumps(EpisodeDoneError(409, "episode_done", "the episode ended", "http://x")))
    assert isinstance(done, EpisodeDoneError) and done.status == 409 and "the episode ended" in str(done)
