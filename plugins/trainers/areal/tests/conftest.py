"""Fixtures: a tiny local tokenizer and a real env server on loopback.

The engine doubles are in standin_engine.py (canonical answers) and sampling_engine.py (a tiny model's samples).
"""

from __future__ import annotations

from typing import Any

import pytest
from agenthub.testing import build_tokenizer, env_server_fixture


@pytest.fixture(scope="session")
def tokenizer() -> Any:
    return build_tokenizer("chatml")


trail_server = env_server_fixture("trail")  # shared by the tests that do not break it
