"""agenthub's protocol conformance checks, run against a real babyai server."""

from agenthub.testing import conformance_tests

test_conformance = conformance_tests("babyai")
