"""Fuzz a running env server against its own ``/openapi.json`` with schemathesis: every phase, every check.

In a plugin's tests, with the env served for real (``LocalServer``)::

    from agenthub.testing import fuzz_server

    def test_the_schema_holds() -> None:
        with LocalServer("myenv", overrides={"max_sessions": 100_000, "ttl": 60}) as server:
            result = fuzz_server(server.url)
        result.assert_clean()

``fuzz_server`` runs the examples, coverage, fuzzing and stateful phases as ``st run`` does, with
every check on, the strict ones included, and two of agenthub's own:

* ``validation_agrees_with_schema``: a request generated as schema-valid is never refused as
  malformed (``invalid_request``, ``malformed_json``, ...): the server validates what it publishes;
* ``refusals_named_by_the_document``: a schema-valid request is refused with ``422`` only with a code
  that the document names for that operation (``x-error-codes`` of its ``422`` response) and that is
  not a malformed-request code. The only such codes an agenthub server names are ``unknown_task`` and
  ``invalid_reset`` (an id or options the env refuses), which no schema can rule out.

schemathesis is a test dependency (requirements-dev.txt), imported on first use.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import schemathesis
from schemathesis import Case, CheckContext, Response
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import Status, events

__all__ = ["MALFORMED", "PHASES", "FuzzResult", "fuzz_server"]

MALFORMED = frozenset(
    {"invalid_request", "malformed_json", "unsupported_media_type", "bad_request", "bad_content_length"}
)
"""Refusals that mean "this request does not match the schema": a schema-valid request gets none of them."""
PHASES = ("examples", "coverage", "fuzzing", "stateful")
REQUIRED_CHECKS = (
    "response_schema_conformance",
    "content_type_conformance",
    "negative_data_rejection",
    "positive_data_acceptance",
    "unsupported_method",
    "validation_agrees_with_schema",
    "refusals_named_by_the_document",
)
"""Checks that carry the promises of protocol.md ("The schema, checked"): each must have run at least once."""


def _error_code(response: Response) -> str | None:
    try:
        code = response.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return None
    return code if isinstance(code, str) else None


def _positive(case: Case[Any]) -> bool:
    meta = case.meta
    return meta is not None and meta.generation.mode.is_positive


@schemathesis.check
def validation_agrees_with_schema(ctx: CheckContext, response: Response, case: Case[Any]) -> bool | None:
    """A request generated as schema-valid is never refused as malformed: the server validates what it publishes."""
    if not _positive(case) or response.status_code < 400:
        return None
    code = _error_code(response)
    if code in MALFORMED:
        raise AssertionError(
            f"a schema-valid request was refused as malformed ({response.status_code} {code}): "
            f"{response.text[:300]}; the models and the published schema disagree"
        )
    return None


@schemathesis.check
def refusals_named_by_the_document(ctx: CheckContext, response: Response, case: Case[Any]) -> bool | None:
    """A schema-valid request's 422 carries a code the document names for that operation, and no other."""
    if not _positive(case) or response.status_code != 422:
        return None
    code = _error_code(response)
    raw = case.operation.definition.raw
    named = (raw.get("responses", {}).get("422") or {}).get("x-error-codes") or []
    allowed = set(named) - MALFORMED
    if code not in allowed:
        raise AssertionError(
            f"a schema-valid request to {case.operation.label} was refused with 422 {code!r}, which the document "
            f"does not allow for a valid request (it names {sorted(allowed) or 'none'}): {response.text[:300]}; "
            "publish the constraint in the schema, or name the code in the operation's 422 x-error-codes"
        )
    return None


def config(*, examples: int | None = None, seed: int | None = None) -> SchemathesisConfig:
    """Every phase and check; examples per operation from ``$AGENTHUB_FUZZ_EXAMPLES`` (default 10)."""
    examples = int(os.environ.get("AGENTHUB_FUZZ_EXAMPLES", "10")) if examples is None else examples
    seed = int(os.environ.get("AGENTHUB_FUZZ_SEED", "17")) if seed is None else seed
    return SchemathesisConfig.from_dict(
        {
            "seed": seed,
            "workers": 1,  # reproducible in CI; a long run varies the seed
            "generation": {"max-examples": examples},
            "phases": {"stateful": {"max-steps": 6}},
            "checks": {
                # 422 stays a possible answer to a valid request only for the codes the document names:
                # refusals_named_by_the_document checks each one.
                "positive_data_acceptance": {
                    "expected-statuses": ["2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx"]
                }
            },
        }
    )


@dataclass
class FuzzResult:
    """What one run did: cases by phase, checks run by name, and each failure or error."""

    url: str
    cases: dict[str, int] = field(default_factory=dict)
    checks: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return f"schemathesis on {self.url}: cases by phase {self.cases}; checks run {self.checks}"

    def assert_clean(self) -> None:
        """No failure, every phase ran cases, and every check that carries the protocol's promises ran."""
        assert not self.problems, "\n".join(self.problems[:20])
        ran = {phase.lower(): n for phase, n in self.cases.items()}
        missing = [phase for phase in PHASES if ran.get(phase, 0) == 0]
        assert not missing, f"phases {missing} ran no case: {self.cases}"
        for name in REQUIRED_CHECKS:
            assert self.checks.get(name, 0) > 0, f"check {name} never ran: {self.checks}"


def fuzz_server(url: str, *, examples: int | None = None, seed: int | None = None) -> FuzzResult:
    """Run every phase against the server at ``url`` (its ``/openapi.json``, no token), as ``st run`` does.

    Serve the env with a large ``max_sessions``: fuzzing creates far more sessions than it deletes.
    """
    document = f"{url.rstrip('/')}/openapi.json"
    schema: Any = schemathesis.openapi.from_url(document, config=config(examples=examples, seed=seed))
    cases: Counter[str] = Counter()
    checks: Counter[str] = Counter()
    problems: list[str] = []
    for event in schemathesis.engine.from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished | events.FuzzScenarioFinished):
            phase = str(getattr(event, "phase", "fuzz"))
            recorder = event.recorder
            cases[phase] += len(recorder.cases)
            for case_id, nodes in recorder.checks.items():
                for node in nodes:
                    checks[node.name] += 1
                    if node.status == Status.FAILURE:
                        case = recorder.cases[case_id].value
                        detail = node.failure_info.failure.title if node.failure_info else "?"
                        problems.append(f"{recorder.label} [{phase}] {node.name}: {detail}: {case.as_curl_command()}")
        elif isinstance(event, events.NonFatalError | events.FatalError):
            problems.append(f"error: {event.info.format() if hasattr(event, 'info') else event}")
    return FuzzResult(url, dict(cases), dict(checks), problems)
