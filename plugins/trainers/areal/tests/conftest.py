"""Fixtures: a tiny local tokenizer and a real env server on loopback.

The engine doubles are in standin_engine.py (canonical answers) and sampling_engine.py (a tiny model's samples).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from agenthub import LocalServer
from agenthub.testing import build_tokenizer


@pytest.fixture(scope="session")
def tokenizer() -> Any:
    return build_tokenizer("chatml")


@pytest.fixture(scope="session")
def trail_server() -> Iterator[LocalServer]:
    """A real ``trail`` env server on loopback, shared by the tests that do not break it."""
    with LocalServer("trail") as server:
        yield server
