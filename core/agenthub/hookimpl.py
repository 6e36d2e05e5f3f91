"""The marker plugins use to implement hooks: ``@agenthub.hookimpl``."""

import pluggy

hookimpl = pluggy.HookimplMarker("agenthub")
