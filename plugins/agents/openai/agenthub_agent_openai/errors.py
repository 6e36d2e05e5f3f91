"""What can go wrong talking to a chat-completions server, each saying what to do.

An exception raised from ``act`` ends the episode as ``agent_error`` (the
executor records the message); none of these ever becomes text the model or
the env sees.
"""

from __future__ import annotations

from agenthub import AgenthubError


class ActionParseError(AgenthubError):
    """The model's reply holds no action in the expected format; ``text`` is the raw reply."""

    def __init__(self, problem: str, text: str | None, *, hint: str = "") -> None:
        self.problem = problem
        self.text = text
        shown = "(no text)" if text is None else repr(clip(text))
        message = f"{problem}; the model replied {shown}"
        if hint:
            message += f". {hint}"
        super().__init__(message)


class ChatServerError(AgenthubError):
    """The server answered a request with an error that retrying does not fix (400, 401, 404, ...)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class ChatServerUnavailableError(ChatServerError):
    """The server kept failing (429, 5xx, timeouts, refused connections) after every retry."""


class ChatReplyError(AgenthubError):
    """The server's answer is not a chat completion this agent can read."""


def clip(text: str, limit: int = 2000) -> str:
    """``text`` shortened to ``limit`` characters, keeping both ends."""
    if len(text) <= limit:
        return text
    half = (limit - 5) // 2
    return f"{text[:half]} ... {text[-half:]}"
