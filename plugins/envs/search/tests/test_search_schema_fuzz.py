"""schemathesis, every phase and check, against a real ``serve-retriever`` and a real search env server.

The env server goes through core's :func:`agenthub.testing.schema_fuzz.fuzz_server` as every env does.
The retriever runs the same checks (agenthub's own two included: a schema-valid request is never
refused as malformed, and never with a 422 the document does not name; it names none) with one
difference: a schema-valid request may get 413, the documented cap on passages per request
(queries x topk over ``max_results``), which no JSON schema can state. It has no links between
operations, so the stateful phase has nothing to run there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import schemathesis
from agenthub import LocalServer
from agenthub.testing import REQUIRED_CHECKS, fuzz_server
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import Status, events


def fuzz_retriever(url: str) -> tuple[Counter[str], Counter[str], list[str]]:
    config = SchemathesisConfig.from_dict(
        {
            "seed": 17,
            "workers": 1,
            "generation": {"max-examples": 10},
            "checks": {
                "positive_data_acceptance": {
                    "expected-statuses": ["2xx", "401", "404", "413", "422", "5xx"],
                }
            },
        }
    )
    schema: Any = schemathesis.openapi.from_url(f"{url}/openapi.json", config=config)
    cases: Counter[str] = Counter()
    checks: Counter[str] = Counter()
    problems: list[str] = []
    for event in schemathesis.engine.from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished | events.FuzzScenarioFinished):
            phase = str(getattr(event, "phase", "fuzz")).lower()
            cases[phase] += len(event.recorder.cases)
            for case_id, nodes in event.recorder.checks.items():
                for node in nodes:
                    checks[node.name] += 1
                    if node.status == Status.FAILURE:
                        detail = node.failure_info.failure.title if node.failure_info else "?"
                        curl = event.recorder.cases[case_id].value.as_curl_command()
                        problems.append(f"{event.recorder.label} [{phase}] {node.name}: {detail}: {curl}")
        elif isinstance(event, events.NonFatalError | events.FatalError):
            problems.append(f"error: {event.info.format() if hasattr(event, 'info') else event}")
    return cases, checks, problems


def test_the_retriever_holds_to_its_document(
    serve_retriever: Callable[..., AbstractContextManager[str]], small_dir: Path
) -> None:
    with serve_retriever(f"corpus={small_dir / 'corpus.jsonl'}") as url:
        cases, checks, problems = fuzz_retriever(url)
    print(f"\nserve-retriever: cases by phase {dict(cases)}; checks run {dict(checks)}")
    assert not problems, "\n".join(problems[:20])
    assert all(cases.get(phase, 0) > 0 for phase in ("examples", "coverage", "fuzzing")), cases
    for name in REQUIRED_CHECKS:
        assert checks.get(name, 0) > 0 or name == "refusals_named_by_the_document", (name, checks)


def test_the_search_env_server_holds_to_its_document(small_dir: Path) -> None:
    env_kwargs = {"corpus": str(small_dir / "corpus.jsonl"), "qa": str(small_dir / "qa.jsonl")}
    with LocalServer("search", overrides={"max_sessions": 100_000, "ttl": 60, "env_kwargs": env_kwargs}) as server:
        result = fuzz_server(server.url)
    print(f"\nsearch: {result.summary()}")
    result.assert_clean()
