"""agenthub-env-webarena: WebArena's task format, action space and evaluators for agenthub.

This release holds the parts that do not need a browser: WebArena config files
(:mod:`.task_config`), its id-based action space (:mod:`.actions`) and its
evaluators (:mod:`.evaluators`, with a pluggable LLM judge for ``fuzzy_match``).
The browser-backed env ``webarena`` and the built-in shop site come next.
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
