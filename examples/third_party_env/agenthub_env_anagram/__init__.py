"""The anagram environment for agenthub."""

__version__ = "0.1.0"
