"""Reading one chat completion: the message, its tool calls, and the tokens when the server gives them.

Field names follow OpenAI's chat-completions answer, plus vLLM's extras:
``choices[0].logprobs.content[i].logprob`` (OpenAI and vLLM, with
``logprobs: true``), ``choices[0].token_ids`` and the top-level
``prompt_token_ids`` (vLLM >= 0.10.2, with ``return_token_ids: true``), and
tokens written as ``"token_id:<id>"`` (vLLM's ``return_tokens_as_token_ids``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agenthub_agent_openai.errors import ChatReplyError, clip

_TOKEN_ID_PREFIX = "token_id:"


@dataclass(frozen=True)
class Completion:
    """The first choice of a chat completion, as this agent uses it."""

    message: dict[str, Any]
    content: str | None
    tool_calls: list[dict[str, Any]]
    finish_reason: str | None
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    prompt_token_ids: list[int] | None = None


def read_completion(payload: Any) -> Completion:
    """The first choice of ``payload``; ``ChatReplyError`` if it is not a chat completion."""
    try:
        choice = payload["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise ChatReplyError(
            f"the server's answer has no choices[0].message, so it is not a chat completion: "
            f"{clip(json.dumps(payload, default=str), 500)}; check that base_url is the API root of an "
            "OpenAI-compatible server (such as http://localhost:8000/v1)"
        ) from None
    if not isinstance(message, dict):
        raise ChatReplyError(f"choices[0].message should be an object, got {type(message).__name__}")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        content = _text_of_parts(content)
    tool_calls = message.get("tool_calls") or []
    if not isinstance(tool_calls, list) or not all(isinstance(c, dict) for c in tool_calls):
        raise ChatReplyError(f"choices[0].message.tool_calls should be a list of objects, got {tool_calls!r}")
    logprobs, logprob_tokens = _logprobs(choice.get("logprobs"))
    token_ids = _int_list(choice.get("token_ids"), "choices[0].token_ids")
    if token_ids is None and logprob_tokens is not None:
        token_ids = _ids_from_tokens(logprob_tokens)
    if token_ids is not None and logprobs is not None and len(token_ids) != len(logprobs):
        raise ChatReplyError(
            f"the server returned {len(token_ids)} token ids but {len(logprobs)} logprobs for one reply; "
            "they must align one to one: update the server, or set logprobs=false"
        )
    return Completion(
        message=message,
        content=content,
        tool_calls=tool_calls,
        finish_reason=choice.get("finish_reason"),
        token_ids=token_ids,
        logprobs=logprobs,
        prompt_token_ids=_int_list(payload.get("prompt_token_ids"), "prompt_token_ids"),
    )


def _text_of_parts(content: Any) -> str:
    """Content given as a list of parts (``[{"type": "text", "text": ...}]``) joined into one string."""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    raise ChatReplyError(f"choices[0].message.content should be text, got {type(content).__name__}")


def _logprobs(block: Any) -> tuple[list[float] | None, list[str] | None]:
    if not block:
        return None, None
    entries = block.get("content") if isinstance(block, dict) else None
    if entries is None:
        return None, None
    try:
        logprobs = [float(entry["logprob"]) for entry in entries]
    except (KeyError, TypeError, ValueError):
        raise ChatReplyError(
            "choices[0].logprobs.content should be a list of {token, logprob} objects, got "
            f"{clip(json.dumps(entries, default=str), 300)}"
        ) from None
    tokens = [entry.get("token") for entry in entries]
    return logprobs, tokens if all(isinstance(t, str) for t in tokens) else None


def _ids_from_tokens(tokens: list[str]) -> list[int] | None:
    """Token ids from tokens spelt ``"token_id:<id>"``; None when they are plain text."""
    if not tokens or not all(t.startswith(_TOKEN_ID_PREFIX) for t in tokens):
        return None
    try:
        return [int(t.removeprefix(_TOKEN_ID_PREFIX)) for t in tokens]
    except ValueError:
        return None


def _int_list(value: Any, where: str) -> list[int] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ChatReplyError(f"{where} should be a list of integers, got {clip(repr(value), 300)}")
    return list(value)
