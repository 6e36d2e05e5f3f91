"""The policy a GPU trainer trains when ``model`` is not given, and the ``model`` setting that names it.

The same for every trainer whose framework loads a hub id itself: a small instruct model with a chat
template (as in verl's own quick start), downloaded by the framework.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

DEFAULT_POLICY = "Qwen/Qwen2.5-0.5B-Instruct"


def policy_field(loaded_as: str) -> Any:
    """A trainer's ``model`` setting, :data:`DEFAULT_POLICY` by default; ``loaded_as`` says how the
    framework takes it (the key it goes to, or who loads it)."""
    return Field(
        default=DEFAULT_POLICY,
        description=f"the policy: a model directory or hub id ({loaded_as}); default: {DEFAULT_POLICY}",
    )
