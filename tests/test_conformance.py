"""The conformance checker passes a good env and catches a bad one."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agenthub.errors import ServerBusyError
from agenthub.testing import CHECK_NAMES, check_env, conformance_tests
from agenthub.types import TaskSplit

from .service.envs import DriftingEnv

test_conformance_guess = conformance_tests("guess")


def test_checker_catches_impure_reset() -> None:
    from agenthub.specs import EnvSpec

    spec = EnvSpec(name="drifting", factory=DriftingEnv, splits={"all": TaskSplit.range(0, 3)}, default_max_turns=3)
    report = check_env(spec)
    assert not report.passed
    assert report.result("reset_determinism").status == "failed"
    assert "drifted" in report.result("reset_determinism").detail
    # It never ends on its own and has no oracle: the end-of-episode check says so instead of failing.
    assert report.result("reset_after_done").status == "skipped"
    assert "pass agent=<oracle>" in report.result("reset_after_done").detail
    assert [r.name for r in report.results] == CHECK_NAMES
    assert "FAIL  reset_determinism" in report.summary()


def test_checker_runs_against_a_url_with_a_token() -> None:
    from agenthub import ThreadedServer, get_plugin_host
    from agenthub.service.settings import ServiceSettings

    settings = ServiceSettings(token="tok")
    with ThreadedServer(get_plugin_host().env("guess"), settings) as server:
        report = check_env(url=server.url, token="tok", agent="guess-oracle")
    assert report.passed, report.summary()


def test_env_server_fixture_serves_an_installed_env(env_server: Callable[..., str]) -> None:
    from agenthub import SyncEnvClient

    url = env_server("guess", max_sessions=1)
    with SyncEnvClient(url, retries=0) as client:
        assert client.info().name == "guess"
        client.create_session(task_id=1)
        with pytest.raises(ServerBusyError):
            client.create_session(task_id=2)
