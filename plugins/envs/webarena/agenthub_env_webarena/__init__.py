"""agenthub-env-webarena: WebArena's tasks in a real browser for agenthub (env ``webarena``).

WebArena config files (:mod:`.task_config`), its id-based action space
(:mod:`.actions`), its evaluators (:mod:`.evaluators`, with a pluggable LLM
judge for ``fuzzy_match``), the browser-backed env (:mod:`.env`) and the
built-in shop site with its generated task set (:mod:`.shop`).
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
