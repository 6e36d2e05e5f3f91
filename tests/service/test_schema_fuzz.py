"""The published OpenAPI schema is the truth: schemathesis, every phase and every check, against real servers.

Each env (the built-in ``guess`` and ``textcraft``) is served for real (``agenthub serve`` on
loopback); schemathesis reads its ``/openapi.json`` and runs its examples, coverage and fuzzing
phases on every operation (``test_every_operation``), then its stateful phase
(``test_stateful``), which chains create, step, reset, get and delete through the links it
infers from the schema. Every check is on, the strict ones included (responses match their
schemas and content types, schema-violating input is refused, schema-valid input is accepted,
405s carry ``Allow``).

One allowance, on purpose: an env may refuse a schema-valid reset with 422 (``invalid_reset``,
``unknown_task``: an id the env has no task for, an option it does not know), because the schema
cannot know each env's task ids and options. ``validation_agrees_with_schema`` keeps that
allowance narrow: a schema-valid request must never be refused as malformed by the server's own
validation.

Examples per operation: ``AGENTHUB_FUZZ_EXAMPLES`` (default 10: the coverage phase's ~190 cases
per env do not depend on it, and both envs take under a minute on a slow machine). A long run
sets it higher and varies the seed, and prints what it ran:
``AGENTHUB_FUZZ_EXAMPLES=200 AGENTHUB_FUZZ_SEED=$RANDOM python -m pytest tests/service/test_schema_fuzz.py -s``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from schemathesis import Case, CheckContext, Response
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import Status, events

from agenthub import LocalServer

EXAMPLES = int(os.environ.get("AGENTHUB_FUZZ_EXAMPLES", "10"))
SEED = int(os.environ.get("AGENTHUB_FUZZ_SEED", "17"))
ENVS = ["guess", "textcraft"]

# Refusals that mean "this request does not match the schema"; a schema-valid request must get none of them.
_MALFORMED = {"invalid_request", "malformed_json", "unsupported_media_type", "bad_request", "bad_content_length"}


@schemathesis.check
def validation_agrees_with_schema(ctx: CheckContext, response: Response, case: Case) -> bool | None:
    """A request generated as schema-valid is never refused as malformed: the server validates what it publishes."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code < 400:
        return None
    try:
        code = response.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return None
    if code in _MALFORMED:
        raise AssertionError(
            f"a schema-valid request was refused as malformed ({response.status_code} {code}): "
            f"{response.text[:300]}; the models and the published schema disagree"
        )
    return None


def _config() -> SchemathesisConfig:
    return SchemathesisConfig.from_dict(
        {
            "seed": 17,
            "workers": 1,  # reproducible in CI; a long run may vary it with --hypothesis-seed
            "generation": {"max-examples": EXAMPLES},
            "phases": {"stateful": {"max-steps": 6}},
            "checks": {
                # Semantic 422s by the env (see the module docstring); everything else as schemathesis expects.
                "positive_data_acceptance": {
                    "expected-statuses": ["2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx"]
                }
            },
        }
    )


@pytest.fixture(scope="module", params=ENVS)
def served(request: pytest.FixtureRequest) -> Iterator[LocalServer]:
    # max_sessions: fuzzing creates far more sessions than it deletes; a full table would answer 503.
    with LocalServer(request.param, overrides={"max_sessions": 100_000, "ttl": 60}) as server:
        yield server


@pytest.fixture(scope="module")
def api_schema(served: LocalServer) -> Any:
    return schemathesis.openapi.from_url(f"{served.url}/openapi.json", config=_config())


def _fuzz(api_schema: Any) -> tuple[dict[str, int], dict[str, int], list[str]]:
    """Run every phase as ``st run`` does: cases run by phase, checks run by name, and each failure or error."""
    cases: Counter[str] = Counter()
    checks: Counter[str] = Counter()
    problems: list[str] = []
    for event in schemathesis.engine.from_schema(api_schema).execute():
        if isinstance(event, events.ScenarioFinished | events.FuzzScenarioFinished):
            phase = getattr(event, "phase", "fuzz")
            recorder = event.recorder
            cases[str(phase)] += len(recorder.cases)
            for case_id, nodes in recorder.checks.items():
                for node in nodes:
                    checks[node.name] += 1
                    if node.status == Status.FAILURE:
                        case = recorder.cases[case_id].value
                        detail = node.failure_info.failure.title if node.failure_info else "?"
                        problems.append(f"{recorder.label} [{phase}] {node.name}: {detail}: {case.as_curl_command()}")
        elif isinstance(event, events.NonFatalError | events.FatalError):
            problems.append(f"error: {event.info.format() if hasattr(event, 'info') else event}")
    return dict(cases), dict(checks), problems


def test_every_phase_finds_nothing(api_schema: Any, served: LocalServer) -> None:
    cases, checks, problems = _fuzz(api_schema)
    # Print the figures (pytest -s): what was run, so that "0 failures" is not "0 cases".
    print(f"\nschemathesis on {served.env}: cases by phase {cases}; checks run {checks}")
    assert not problems, "\n".join(problems[:20])
    # Every phase ran, and the checks that carry this file's promises were exercised.
    ran = {str(phase).lower(): n for phase, n in cases.items()}
    assert all(ran.get(phase, 0) > 0 for phase in ("examples", "coverage", "fuzzing", "stateful")), cases
    for name in (
        "response_schema_conformance",
        "content_type_conformance",
        "negative_data_rejection",
        "positive_data_acceptance",
        "unsupported_method",
        "validation_agrees_with_schema",
    ):
        assert checks.get(name, 0) > 0, f"check {name} never ran: {checks}"
