"""agenthub's protocol-v1 conformance checks, run against a real textcraft server."""

from __future__ import annotations

from agenthub.testing import conformance_tests

test_conformance = conformance_tests("textcraft")
