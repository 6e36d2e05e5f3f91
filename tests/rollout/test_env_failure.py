"""Core's one rule for what a failed env call means for an episode (agenthub.rollout.env_failure)."""

from __future__ import annotations

import pytest

from agenthub import Outcome
from agenthub.errors import EnvServerUnavailableError, EnvServiceError
from agenthub.rollout import env_failure


@pytest.mark.parametrize(
    ("status", "on_step", "on_create", "retry"),
    [
        (400, Outcome.AGENT_ERROR, Outcome.ENV_ERROR, False),  # a malformed action is the agent's
        (401, Outcome.ENV_ERROR, Outcome.ENV_ERROR, False),  # the run's token: never the action's fault
        (403, Outcome.ENV_ERROR, Outcome.ENV_ERROR, False),
        (404, Outcome.ENV_ERROR, Outcome.ENV_ERROR, True),  # expired or restarted: a fresh session may do
        (409, Outcome.ENV_ERROR, Outcome.ENV_ERROR, True),
        (413, Outcome.AGENT_ERROR, Outcome.ENV_ERROR, False),
        (422, Outcome.AGENT_ERROR, Outcome.ENV_ERROR, False),
        (429, Outcome.ENV_ERROR, Outcome.ENV_ERROR, True),
        (500, Outcome.ENV_ERROR, Outcome.ENV_ERROR, True),
        (503, Outcome.ENV_ERROR, Outcome.ENV_ERROR, True),
        (504, Outcome.TIMEOUT, Outcome.TIMEOUT, True),
    ],
)
def test_each_status_has_one_outcome_on_step_and_on_create(
    status: int, on_step: Outcome, on_create: Outcome, retry: bool
) -> None:
    exc = EnvServiceError(status, "some_code", "refused", url="http://env:8000")
    step, create = env_failure(exc, during="step of seat 1"), env_failure(exc, during="create")
    assert (step.outcome, create.outcome) == (on_step, on_create)
    assert (step.retry, create.retry) == (retry, retry)
    assert "refused" in str(step) and "refused" in str(create)  # the server's own words are kept


def test_an_unreachable_server_is_an_env_error_worth_a_fresh_session() -> None:
    failure = env_failure(EnvServerUnavailableError("http://env:8000 refused the connection"), during="step")
    assert failure.outcome is Outcome.ENV_ERROR and failure.retry
