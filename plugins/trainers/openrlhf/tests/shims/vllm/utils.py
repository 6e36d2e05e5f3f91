"""Test-only shim of ``vllm.utils`` (see the package docstring)."""

from __future__ import annotations

import uuid


def random_uuid() -> str:
    return uuid.uuid4().hex
