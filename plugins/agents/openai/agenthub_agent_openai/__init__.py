"""agenthub-agent-openai: an agent for any OpenAI-compatible chat-completions server.

Registered as agent ``openai``. The names below load on first use, so that
listing plugins (which imports ``plugin``, and so this package) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthub import lazy_exports

__version__ = "0.1.0"

if TYPE_CHECKING:
    from agenthub_agent_openai.actions import clean_action, parse_raw, parse_react
    from agenthub_agent_openai.agent import OpenAIAgent, OpenAIEpisode
    from agenthub_agent_openai.errors import (
        ActionParseError,
        ChatReplyError,
        ChatServerError,
        ChatServerUnavailableError,
    )
    from agenthub_agent_openai.settings import OpenAISettings

__getattr__ = lazy_exports(
    __name__,
    {
        "clean_action": ".actions",
        "parse_raw": ".actions",
        "parse_react": ".actions",
        "OpenAIAgent": ".agent",
        "OpenAIEpisode": ".agent",
        "ActionParseError": ".errors",
        "ChatReplyError": ".errors",
        "ChatServerError": ".errors",
        "ChatServerUnavailableError": ".errors",
        "OpenAISettings": ".settings",
    },
)

__all__ = [
    "ActionParseError",
    "ChatReplyError",
    "ChatServerError",
    "ChatServerUnavailableError",
    "OpenAIAgent",
    "OpenAIEpisode",
    "OpenAISettings",
    "__version__",
    "clean_action",
    "parse_raw",
    "parse_react",
]
