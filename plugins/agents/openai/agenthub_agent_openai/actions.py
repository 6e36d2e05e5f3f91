"""Turning a model's reply into an action: ReAct text, a bare action, or a tool call.

The rules (also in the README):

- ``react``: the action follows the last ``Action:`` marker (any case, with or
  without markdown emphasis). Whatever follows a line starting ``Observation:``
  after an action is dropped first: that is the model imagining the env's
  answer. The action is the rest of the marker's line, or the next non-empty
  line, or the content of a code fence that starts there. A reply of one line
  with no marker is the action itself (env prompts often ask for just that).
- ``raw``: the whole reply is the action (the content of a code fence when the
  reply is one).
- Both then strip surrounding quotes, backticks and emphasis and trailing
  ``. , ; : !``, and refuse an empty action.
- ``tool_call``: the first of the message's ``tool_calls``; when the server
  returned none (no tool parser), a ``{"name": ..., "arguments": {...}}``
  object written in the text (in ``<tool_call>`` tags, a code fence, or bare).
"""

from __future__ import annotations

import json
import re
from typing import Any

from agenthub import ToolCall

from agenthub_agent_openai.errors import ActionParseError

_ACTION = re.compile(r"(?<![A-Za-z0-9])[*_]{0,2}action[*_]{0,2}[ \t]*:[*_]{0,2}", re.IGNORECASE)
_OBSERVATION = re.compile(r"^[ \t>#*_-]*observation[*_]{0,2}[ \t]*:", re.IGNORECASE | re.MULTILINE)
_FENCE = re.compile(r"```[^\n`]*\n?(.*?)(?:```|\Z)", re.DOTALL)
# Longest first, so that ```x``` loses all its backticks and **x** both stars.
_PAIRS = [("```", "```"), ("``", "``"), ("`", "`"), ('"', '"'), ("'", "'"), ("\u201c", "\u201d"), ("\u2018", "\u2019")]
_PAIRS += [("**", "**"), ("__", "__"), ("*", "*")]
_TRAILING_JUNK = ".,;:!"
_TOOL_CALL_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)

_NO_ACTION_HINT = (
    "Ask for 'Action: <action>' in the prompt (agent.react_instructions or agent.system_prompt), "
    "or set agent.action_format=raw if the model replies with the bare action"
)
_EMPTY_HINT = (
    "If the reply was cut off (a reasoning model may spend every token thinking), raise agent.max_tokens; "
    "else check the prompt"
)


def parse_react(text: str | None) -> str:
    """The action of a ``Thought: ... / Action: ...`` reply; ``ActionParseError`` if there is none."""
    if text is None or not text.strip():
        raise ActionParseError("the reply is empty", text, hint=_EMPTY_HINT)
    markers = list(_ACTION.finditer(text))
    if not markers:
        bare = _unfenced(text.strip())
        if "\n" not in bare.strip() and (action := clean_action(bare)):
            return action  # one line and no marker: the model followed an env prompt asking for the bare action
        raise ActionParseError("the reply has no 'Action:' line", text, hint=_NO_ACTION_HINT)
    imagined = _OBSERVATION.search(text, markers[0].end())
    if imagined is not None:  # the model went on to write the env's answer itself: keep what came before
        markers = [m for m in markers if m.end() <= imagined.start()]
        body = text[markers[-1].end() : imagined.start()]
    else:
        body = text[markers[-1].end() :]
    action = clean_action(_first_action_text(body))
    if not action:
        raise ActionParseError("the reply's 'Action:' line is empty", text, hint=_NO_ACTION_HINT)
    return action


def parse_raw(text: str | None) -> str:
    """The whole reply as the action, unwrapped and cleaned; ``ActionParseError`` if nothing is left."""
    action = clean_action(_unfenced((text or "").strip()))
    if not action:
        raise ActionParseError("the reply is empty", text, hint=_EMPTY_HINT)
    return action


def _unfenced(text: str) -> str:
    """The content of a reply that is one code fence; other replies unchanged."""
    fence = _FENCE.match(text) if text.startswith("```") else None
    return fence.group(1) if fence else text


def _first_action_text(body: str) -> str:
    """The action after a marker: the rest of its line, else a code fence or the next non-empty line."""
    first_line, _, rest = body.partition("\n")
    if first_line.strip() and not first_line.strip().startswith("```"):
        return first_line
    remaining = body.lstrip()
    if remaining.startswith("```"):
        fence = _FENCE.match(remaining)
        if fence is not None:
            return fence.group(1)
    for line in rest.splitlines():
        if line.strip():
            return line
    return ""


def clean_action(action: str) -> str:
    """Strip surrounding quotes, backticks and emphasis, and trailing punctuation, until none is left."""
    previous = None
    while action != previous:
        previous = action
        action = action.strip().rstrip(_TRAILING_JUNK).strip()
        for opening, closing in _PAIRS:
            inner = action[len(opening) : -len(closing)]
            wrapped = len(action) >= len(opening) + len(closing) and action.startswith(opening)
            # 'a' or 'b' is not one quoted action: unwrap only when the inside holds no closing mark.
            if wrapped and action.endswith(closing) and closing not in inner:
                action = inner
                break
    return action


# -- tool calls ------------------------------------------------------------------------


def tool_call_from_message(call: dict[str, Any], text: str | None) -> ToolCall:
    """An agenthub ToolCall from one entry of an OpenAI ``tool_calls`` list."""
    function = call.get("function")
    if not isinstance(function, dict) or not isinstance(function.get("name"), str) or not function["name"]:
        raise ActionParseError(
            f"the tool call {call!r} has no function name",
            text,
            hint="The server's tool-call parser may not fit this model; check its --tool-call-parser",
        )
    return ToolCall(name=function["name"], arguments=_arguments(function.get("arguments"), function["name"], text))


def tool_call_from_text(text: str | None) -> ToolCall | None:
    """A tool call the model wrote as JSON in its text, for servers that did not parse it; else None."""
    if not text:
        return None
    candidates = [m.group(1) for m in _TOOL_CALL_TAG.finditer(text)]
    candidates += [m.group(1) for m in _FENCE.finditer(text)]
    candidates.append(text)
    for candidate in candidates:
        start = candidate.find("{")
        if start < 0:
            continue
        try:
            value, _ = json.JSONDecoder().raw_decode(candidate[start:])
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and isinstance(value.get("name"), str) and value["name"]:
            arguments = value.get("arguments", value.get("parameters"))
            return ToolCall(name=value["name"], arguments=_arguments(arguments, value["name"], text))
    return None


def _arguments(raw: Any, name: str, text: str | None) -> dict[str, Any]:
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ActionParseError(
                f"the arguments of the tool call {name!r} are not valid JSON ({exc.msg} at position {exc.pos}): "
                f"{raw!r}",
                text,
            ) from None
    if not isinstance(raw, dict):
        raise ActionParseError(
            f"the arguments of the tool call {name!r} must be a JSON object, got {type(raw).__name__}: {raw!r}", text
        )
    return raw
