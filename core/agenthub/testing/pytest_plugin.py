"""pytest plugin (entry point ``pytest11``): conformance tests and a local env server fixture.

Loaded in every pytest run where agenthub is installed, so it imports nothing
heavy until a test uses it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

_REPORTS: dict[tuple[Any, ...], Any] = {}


def conformance_tests(env: str, **check_kwargs: Any) -> Callable[[str], None]:
    """A test function parametrized over the conformance checks of ``env``.

    The checks run once per env and session; each becomes its own pytest item,
    so a failure names the check. Assign the result to a ``test_*`` name.
    """
    from agenthub.testing.conformance import CHECK_NAMES

    @pytest.mark.parametrize("check", CHECK_NAMES, ids=CHECK_NAMES)
    def test_conformance(check: str) -> None:
        from agenthub.testing.conformance import check_env

        key = (env, tuple(sorted(check_kwargs.items())))
        if key not in _REPORTS:
            _REPORTS[key] = check_env(env, **check_kwargs)
        result = _REPORTS[key].result(check)
        if result.status == "skipped":
            pytest.skip(result.detail)
        assert result.status == "passed", f"{check}: {result.detail}"

    test_conformance.__name__ = f"test_conformance_{env}"
    return test_conformance


@pytest.fixture
def env_server() -> Iterator[Callable[..., str]]:
    """Start an installed env on loopback in a thread: ``url = env_server("guess", max_sessions=4)``."""
    from agenthub.plugins import get_plugin_host
    from agenthub.service.launcher import ThreadedServer
    from agenthub.service.settings import ServiceSettings

    servers: list[ThreadedServer] = []

    def start(env: str, **settings: Any) -> str:
        server = ThreadedServer(get_plugin_host().env(env), ServiceSettings(**settings)).start()
        servers.append(server)
        return server.url

    yield start
    for server in servers:
        server.stop()
