"""agenthub's protocol-v1 conformance checks, run against a real textworld server."""

from __future__ import annotations

from agenthub.testing import conformance_tests

# Each session of the isolation check plays another game, generated on first use (about 2 s each); four suffice.
test_conformance = conformance_tests("textworld", sessions=4)
