"""Test-only shim of ``vllm.inputs`` (see the package docstring)."""

from __future__ import annotations

TokensPrompt = dict
