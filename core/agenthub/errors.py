"""Exceptions raised by agenthub. Every message says what was wrong and what to do."""

from __future__ import annotations

from typing import Any


class AgenthubError(Exception):
    """Base class of every error agenthub raises on purpose."""


class ConfigError(AgenthubError, ValueError):
    """A configuration value or command-line override is wrong."""


class PluginError(AgenthubError):
    """A plugin is broken, or registered something invalid."""


class UnknownNameError(AgenthubError, LookupError):
    """A name that no installed plugin registered."""

    def __init__(self, kind: str, name: str, installed: list[str], suggestion: str | None, hint: str = "") -> None:
        self.kind = kind
        self.name = name
        self.installed = installed
        self.suggestion = suggestion
        parts = [f"unknown {kind} {name!r}"]
        if suggestion:
            parts.append(f"did you mean {suggestion!r}?")
        parts.append(f"installed {kind}s: {', '.join(installed) if installed else '(none)'}")
        message = "; ".join(parts)
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
