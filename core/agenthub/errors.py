"""Exceptions raised by agenthub. Every message says what was wrong and what to do."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any


def closest(name: str, choices: Iterable[str]) -> str | None:
    """The choice ``name`` most likely misspells, if any is close enough: the one "did you mean" helper."""
    options = list(dict.fromkeys(choices))
    matches = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
    if not matches:  # a different case only ("Guess"), which the ratio above may miss for short names
        matches = [c for c in options if c.lower() == name.lower()][:1]
    return matches[0] if matches else None


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """``"did you mean 'x'? "`` for the closest choice, or ``""``: put before the list of valid choices."""
    match = closest(name, choices)
    return f"did you mean {match!r}? " if match else ""


class AgenthubError(Exception):
    """Base class of every error agenthub raises on purpose."""


class ConfigError(AgenthubError, ValueError):
    """A configuration value or command-line override is wrong."""


class PluginError(AgenthubError):
    """A plugin is broken, or registered something invalid."""


class UnknownNameError(AgenthubError, LookupError):
    """A name that no installed plugin registered."""

    def __init__(
        self, kind: str, name: str, installed: list[str], suggestion: str | None = None, hint: str = ""
    ) -> None:
        """``suggestion`` defaults to the closest of ``installed`` (see :func:`closest`)."""
        self.kind = kind
        self.name = name
        self.installed = installed
        self.suggestion = suggestion if suggestion is not None else closest(name, installed)
        maybe = f"did you mean {self.suggestion!r}? " if self.suggestion else ""
        listed = ", ".join(installed) if installed else "(none)"
        message = f"unknown {kind} {name!r}; {maybe}installed {kind}s: {listed}"
        if hint:
            message += f". {hint}"
        self.hint = hint
        super().__init__(message)

    def __str__(self) -> str:
        return str(self.args[0])

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from its fields, so it crosses process boundaries (Ray, multiprocessing).
        return (type(self), (self.kind, self.name, self.installed, self.suggestion, self.hint))


class EnvServiceError(AgenthubError):
    """An environment server answered with an error (status >= 400)."""

    def __init__(self, status: int, code: str, message: str, url: str = "") -> None:
        self.status = status
        self.code = code
        self.message = message
        self.url = url
        where = f" from {url}" if url else ""
        super().__init__(f"HTTP {status} {code}{where}: {message}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.status, self.code, self.message, self.url))


class SessionNotFoundError(EnvServiceError):
    """The session does not exist: it was closed, it expired, or the server restarted."""


class EpisodeDoneError(EnvServiceError):
    """A step on a session whose episode has ended; reset it first."""


class ServerBusyError(EnvServiceError):
    """The server is at its session capacity (HTTP 503) and retries ran out."""


class EnvServerUnavailableError(AgenthubError):
    """The environment server could not be reached, or it dropped the connection, after all retries."""
