"""The old name of :mod:`agenthub.rollout.token_assembly`, kept for plugins released before
``agenthub.rollout`` exported these names; it warns, and goes in a later release.

Import them from :mod:`agenthub.rollout` (``from agenthub.rollout import render``).
"""

from __future__ import annotations

import warnings

from agenthub.rollout.token_assembly import (
    ChatTemplateDeltas,
    ChatTokenizer,
    ContextLengthExceeded,
    Message,
    TokenAssembler,
    TokenAssemblyError,
    render,
)

warnings.warn(
    "agenthub.rollout.tokens is renamed agenthub.rollout.token_assembly; import ChatTemplateDeltas, render, "
    "ContextLengthExceeded and the rest from agenthub.rollout instead",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = [
    "ChatTemplateDeltas",
    "ChatTokenizer",
    "ContextLengthExceeded",
    "Message",
    "TokenAssembler",
    "TokenAssemblyError",
    "render",
]
