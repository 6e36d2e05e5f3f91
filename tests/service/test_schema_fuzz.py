"""The published OpenAPI schema is the truth: schemathesis, every phase and every check, against real servers.

Each env (the built-in ``guess``, ``trail`` and ``tictactoe``, and ``textcraft``) is served for real
(``agenthub serve`` on loopback) and fuzzed by :func:`agenthub.testing.schema_fuzz.fuzz_server`: the
examples, coverage, fuzzing and stateful phases, every check on, the strict ones included (responses
match their schemas and content types, schema-violating input is refused, schema-valid input is
accepted, 405s carry ``Allow``).

Each server publishes its own document: its split names, integer task ids from 0 to 2**63-1, and
``seat`` only on a multi-player env (tictactoe), where it is required and bounded to the env's seats.
A schema-valid request may be refused with 422 only with a code the document names for that
operation, and never as malformed: the only such codes are ``unknown_task`` and ``invalid_reset``
(a task id or options the env refuses), which no schema can rule out.

Examples per operation: ``AGENTHUB_FUZZ_EXAMPLES`` (default 10: the coverage phase's ~190 cases
per env do not depend on it). A long run sets it higher and varies the seed, and prints what it ran:
``AGENTHUB_FUZZ_EXAMPLES=200 AGENTHUB_FUZZ_SEED=$RANDOM python -m pytest tests/service/test_schema_fuzz.py -s``.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from agenthub import LocalServer
from agenthub.testing import fuzz_server
from agenthub.types import MAX_TASK_ID

ENVS = ["guess", "trail", "tictactoe", "textcraft"]


@pytest.fixture(scope="module", params=ENVS)
def served(request: pytest.FixtureRequest) -> Iterator[LocalServer]:
    # max_sessions: fuzzing creates far more sessions than it deletes; a full table would answer 503.
    with LocalServer(request.param, overrides={"max_sessions": 100_000, "ttl": 60}) as server:
        yield server


def test_every_phase_finds_nothing(served: LocalServer) -> None:
    result = fuzz_server(served.url)
    # Print the figures (pytest -s): what was run, so that "0 failures" is not "0 cases".
    print(f"\n{served.env}: {result.summary()}")
    result.assert_clean()


def test_the_document_states_the_ranges_and_seats(served: LocalServer) -> None:
    document = httpx.get(f"{served.url}/openapi.json").json()
    schemas = document["components"]["schemas"]
    task_id = schemas["CreateSessionRequest"]["properties"]["task_id"]
    integer = next(b for b in task_id["anyOf"][0]["anyOf"] if b.get("type") == "integer")
    assert (integer["minimum"], integer["maximum"]) == (0, MAX_TASK_ID)
    step = schemas["StepRequest"]
    players = httpx.get(f"{served.url}/v1/info").json().get("players", 1)
    if players == 1:
        assert "seat" not in step["properties"] and "seat" not in step.get("required", [])
    else:
        assert "seat" in step["required"]
        assert (step["properties"]["seat"]["minimum"], step["properties"]["seat"]["maximum"]) == (0, players - 1)
    refusals = document["paths"]["/v1/sessions/{session_id}/step"]["post"]["responses"]["422"]["x-error-codes"]
    assert ("seat_not_expected" in refusals) == (players == 1)
