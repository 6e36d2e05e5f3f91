"""agenthub-env-search: multi-turn search, read and answer (Search-R1 / AgentGym-RL Deep Search)."""

__version__ = "0.1.0"
