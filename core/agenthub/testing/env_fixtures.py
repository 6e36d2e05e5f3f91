"""A pytest fixture that serves an env from a real server on loopback, for any plugin's tests.

In a conftest.py or a test module::

    from agenthub.testing import env_server_fixture

    trail_server = env_server_fixture("trail")  # the fixture's name is the name it is given here

A test that takes ``trail_server`` gets the running :class:`~agenthub.LocalServer` (``.url``; ``.kill()``
for a test that breaks it, which wants ``scope="function"`` so that the next test gets a fresh one).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import pytest

from agenthub.service.launcher import LocalServer

Scope = Literal["session", "package", "module", "class", "function"]


def env_server_fixture(env: str, scope: Scope = "session") -> Any:
    """A fixture of ``scope`` that starts ``agenthub serve`` for ``env`` on 127.0.0.1 and stops it after."""

    def served() -> Iterator[LocalServer]:
        with LocalServer(env) as server:
            yield server

    served.__doc__ = f"A real {env!r} env server on loopback, one for each {scope}."
    return pytest.fixture(scope=scope)(served)
