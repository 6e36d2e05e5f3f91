"""A failed env call ends a swift episode exactly as it ends every other trainer's: core's one rule."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest
from agenthub import EnvInfo, EnvServerUnavailableError, EnvServiceError, Outcome, Task
from agenthub.rollout import EpisodeFailure, NoHealthyEndpointError, env_failure

from agenthub_trainer_swift.sessions import EnvSessions, classify
from agenthub_trainer_swift.settings import SchedulerSettings

STATUSES = (400, 401, 404, 409, 413, 422, 429, 500, 503, 504)
DURING = ("step", "create session (attempt 1)")


@pytest.mark.parametrize("during", DURING)
@pytest.mark.parametrize("status", STATUSES)
def test_an_env_error_is_classified_by_cores_rule(status: int, during: str) -> None:
    exc = EnvServiceError(status, "some_code", "refused", url="http://env:8000")
    swift, core = classify(exc, during=during), env_failure(exc, during=during)
    assert isinstance(swift, EpisodeFailure)
    assert (swift.outcome, swift.retry, str(swift)) == (core.outcome, core.retry, str(core))


@pytest.mark.parametrize(
    ("status", "on_step", "on_create"),
    [
        (400, Outcome.AGENT_ERROR, Outcome.ENV_ERROR),
        (401, Outcome.ENV_ERROR, Outcome.ENV_ERROR),  # the token, never the action
        (404, Outcome.ENV_ERROR, Outcome.ENV_ERROR),
        (409, Outcome.ENV_ERROR, Outcome.ENV_ERROR),
        (413, Outcome.AGENT_ERROR, Outcome.ENV_ERROR),
        (422, Outcome.AGENT_ERROR, Outcome.ENV_ERROR),
        (500, Outcome.ENV_ERROR, Outcome.ENV_ERROR),
        (503, Outcome.ENV_ERROR, Outcome.ENV_ERROR),
        (504, Outcome.TIMEOUT, Outcome.TIMEOUT),
    ],
)
def test_the_outcomes_swift_gives_env_errors(status: int, on_step: Outcome, on_create: Outcome) -> None:
    """The table itself, so that a change to core's rule shows up here as a change to swift's episodes."""
    exc = EnvServiceError(status, "some_code", "refused")
    assert classify(exc, during="step").outcome is on_step
    assert classify(exc, during="create session (attempt 2)").outcome is on_create
    retry = status >= 500 or status in (404, 409, 429)
    assert classify(exc, during="step").retry is retry


def test_an_unreachable_server_is_an_env_error_worth_a_fresh_session() -> None:
    for exc in (EnvServerUnavailableError("gone"), NoHealthyEndpointError("all down")):
        failure = classify(exc, during="create session (attempt 1)")
        assert (failure.outcome, failure.retry) == (Outcome.ENV_ERROR, True)
        assert str(failure) == str(env_failure(exc, during="create session (attempt 1)"))


def test_swifts_own_episode_timeout_and_other_errors() -> None:
    """What core's rule does not take (swift's ``episode_timeout_s``, anything unexpected) stays swift's."""
    timeout = classify(TimeoutError(), during="step")
    assert (timeout.outcome, timeout.retry, str(timeout)) == (Outcome.TIMEOUT, True, "step: timed out")
    other = classify(RuntimeError("boom"), during="step")
    assert (other.outcome, other.retry, str(other)) == (Outcome.ENV_ERROR, False, "step: RuntimeError: boom")


class RefusingPool:
    """A pool whose one server answers every create with ``status``."""

    def __init__(self, status: int) -> None:
        self.status = status
        self.creates = 0

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[Any]:
        async def create_session(*args: Any, **kwargs: Any) -> Any:
            self.creates += 1
            raise EnvServiceError(self.status, "refused", "no")

        yield SimpleNamespace(url="http://env:8000", client=SimpleNamespace(create_session=create_session))


@pytest.mark.parametrize(("status", "creates", "outcome"), [(400, 1, Outcome.ENV_ERROR), (503, 3, Outcome.ENV_ERROR)])
def test_a_create_is_retried_only_when_cores_rule_says_a_fresh_session_may_help(
    status: int, creates: int, outcome: Outcome
) -> None:
    sessions = EnvSessions(SchedulerSettings(env="trail", urls=["http://env:8000"], max_attempts=3))
    pool = RefusingPool(status)
    sessions._pool = pool  # type: ignore[assignment]
    sessions.info = EnvInfo(name="trail", version="1", default_max_turns=4, splits=["train"])
    try:
        episode = asyncio.run(sessions.open("k", Task(env="trail", task_id=1, split="train")))
    finally:
        sessions.shutdown()
    assert pool.creates == creates
    assert episode.outcome is outcome and episode.session is None
    assert episode.error is not None and f"HTTP {status}" in episode.error
