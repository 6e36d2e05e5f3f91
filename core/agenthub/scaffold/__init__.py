"""``agenthub init``: a new plugin package from the templates shipped with core."""
