"""Test helpers for plugins: conformance checks, tiny local models, token checks.

In a plugin's tests::

    from agenthub.testing import conformance_tests

    test_conformance = conformance_tests("textcraft")  # one pytest item per check

:func:`hostile_actions` builds adversarial actions of any size (is a parser linear?), and
:func:`cpu_seconds_at_most` bounds the CPU time a test spends on one (a loaded machine cannot break it);
:func:`fuzz_server` runs schemathesis, every phase and check, against a served env's own
``/openapi.json`` (needs schemathesis, a test dependency). :func:`env_server_fixture` makes a fixture
that serves an env from a real server on loopback; :func:`check_servers_on_one_node_ray` checks a
trainer's ``backend=ray`` env servers on a one-node Ray started here (:func:`one_node_ray`).

:func:`build_tiny_model` and :func:`build_tokenizer` build a small random model and its
tokenizer on the spot (never a download); :class:`ModelSampler` samples from one the way an
inference engine would; :func:`check_sampled_turns` checks that a trainer trains on exactly
the tokens the engine sampled; :func:`run_cli` runs an ``agenthub`` command in-process.
Every name loads on first use (torch only with the model helpers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthub.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from agenthub.cli.main import main as run_cli
    from agenthub.testing.conformance import CHECK_NAMES, ConformanceReport, check_env, run_checks
    from agenthub.testing.env_fixtures import env_server_fixture
    from agenthub.testing.hostile_text import hostile_actions
    from agenthub.testing.model_sampler import ModelSampler, Sample, is_canonical
    from agenthub.testing.pytest_plugin import conformance_tests
    from agenthub.testing.ray_servers import check_servers_on_one_node_ray, one_node_ray, ray_cpus_back
    from agenthub.testing.schema_fuzz import REQUIRED_CHECKS, FuzzResult, fuzz_server
    from agenthub.testing.signals import default_sigint
    from agenthub.testing.time_bounds import ANOTHER_PROCESS_WALL_S, MEGABYTE_PARSE_CPU_S, cpu_seconds_at_most
    from agenthub.testing.tiny_model import build_tiny_model
    from agenthub.testing.tiny_tokenizer import build_tokenizer
    from agenthub.testing.token_checks import CheckTally, EngineAnswer, SequenceView, check_sampled_turns

__getattr__ = lazy_exports(
    __name__,
    {
        "run_cli": "agenthub.cli.main:main",
        "CHECK_NAMES": ".conformance",
        "ConformanceReport": ".conformance",
        "check_env": ".conformance",
        "run_checks": ".conformance",
        "env_server_fixture": ".env_fixtures",
        "ModelSampler": ".model_sampler",
        "Sample": ".model_sampler",
        "is_canonical": ".model_sampler",
        "conformance_tests": ".pytest_plugin",
        "hostile_actions": ".hostile_text",
        "check_servers_on_one_node_ray": ".ray_servers",
        "one_node_ray": ".ray_servers",
        "ray_cpus_back": ".ray_servers",
        "ANOTHER_PROCESS_WALL_S": ".time_bounds",
        "MEGABYTE_PARSE_CPU_S": ".time_bounds",
        "cpu_seconds_at_most": ".time_bounds",
        "REQUIRED_CHECKS": ".schema_fuzz",
        "FuzzResult": ".schema_fuzz",
        "fuzz_server": ".schema_fuzz",
        "default_sigint": ".signals",
        "build_tiny_model": ".tiny_model",
        "build_tokenizer": ".tiny_tokenizer",
        "CheckTally": ".token_checks",
        "EngineAnswer": ".token_checks",
        "SequenceView": ".token_checks",
        "check_sampled_turns": ".token_checks",
    },
)

__all__ = [
    "ANOTHER_PROCESS_WALL_S",
    "CHECK_NAMES",
    "MEGABYTE_PARSE_CPU_S",
    "REQUIRED_CHECKS",
    "CheckTally",
    "ConformanceReport",
    "EngineAnswer",
    "FuzzResult",
    "ModelSampler",
    "Sample",
    "SequenceView",
    "build_tiny_model",
    "build_tokenizer",
    "check_env",
    "check_sampled_turns",
    "check_servers_on_one_node_ray",
    "conformance_tests",
    "cpu_seconds_at_most",
    "default_sigint",
    "env_server_fixture",
    "fuzz_server",
    "hostile_actions",
    "is_canonical",
    "one_node_ray",
    "ray_cpus_back",
    "run_checks",
    "run_cli",
]
