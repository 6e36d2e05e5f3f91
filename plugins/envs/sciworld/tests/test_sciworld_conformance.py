"""agenthub's protocol-v1 conformance checks, run against a real sciworld server.

Four sessions in the isolation check rather than eight: each is a JVM, and
eight JVM starts at once take a minute on a two-core machine.
"""

from __future__ import annotations

from agenthub.testing import conformance_tests

test_conformance = conformance_tests("sciworld", sessions=4)
