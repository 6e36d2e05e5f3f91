"""The adapter's own error type."""

from __future__ import annotations

from agenthub import AgenthubError


class ArealAdapterError(AgenthubError):
    """The AReaL adapter was used in a way it cannot serve; the message says what to do."""
