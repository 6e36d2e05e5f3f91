"""The action parsers: ReAct text, bare actions and tool calls written as text."""

from __future__ import annotations

import pytest
from agenthub import ToolCall

from agenthub_agent_openai import ActionParseError, clean_action, parse_raw, parse_react
from agenthub_agent_openai.actions import tool_call_from_message, tool_call_from_text

REACT_CASES = {
    "plain": ("Thought: the middle is 8.\nAction: guess 8", "guess 8"),
    "any case": ("thought: hm\nACTION: guess 8", "guess 8"),
    "last action wins": ("Action: guess 3\nThought: no, better:\nAction: guess 8", "guess 8"),
    "imagined observation dropped": ("Action: guess 8\nObservation: 8 is too low.\nAction: guess 12", "guess 8"),
    "code fence on next lines": ("Thought: go\nAction:\n```text\nguess 8\n```", "guess 8"),
    "fence on the marker line": ("Action: ```\nguess 8\n```", "guess 8"),
    "inline backticks": ("Action: `guess 8`", "guess 8"),
    "quotes and trailing dot": ('Action: "guess 8".', "guess 8"),
    "smart quotes": ("Action: \u201cguess 8\u201d", "guess 8"),
    "markdown bold marker": ("**Thought:** x\n**Action:** guess 8", "guess 8"),
    "bold marker and action": ("**Action**: **guess 8**!", "guess 8"),
    "action on the next line": ("Thought: x\nAction:\n\n  guess 8  \n", "guess 8"),
    "inline after the thought": ("Thought: halve it. Action: guess 8", "guess 8"),
    "bare one-line reply": ("guess 8", "guess 8"),
    "bare fenced reply": ("```\nguess 8\n```", "guess 8"),
    "quoted action with inner quotes kept": ("Action: say 'hi' to 'bob'", "say 'hi' to 'bob'"),
    "question mark kept": ("Action: ask what is this?", "ask what is this?"),
}


@pytest.mark.parametrize(("text", "expected"), list(REACT_CASES.values()), ids=list(REACT_CASES))
def test_react_parser(text: str, expected: str) -> None:
    assert parse_react(text) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "the reply is empty"),
        (None, "the reply is empty"),
        ("I am not sure.\nMaybe eight?\nOr nine.", "the reply has no 'Action:' line"),
        ("Thought: hmm\nAction:   ", "the reply's 'Action:' line is empty"),
        ('Thought: x\nAction: "".', "the reply's 'Action:' line is empty"),
    ],
    ids=["empty", "none", "prose", "empty action", "only junk"],
)
def test_react_parser_refuses_replies_without_an_action(text: str | None, problem: str) -> None:
    with pytest.raises(ActionParseError) as caught:
        parse_react(text)
    assert caught.value.problem == problem and caught.value.text == text
    says_what_to_do = "agent.max_tokens" if not text else "agent.action_format=raw"
    assert says_what_to_do in str(caught.value)


def test_a_parse_error_quotes_the_raw_reply() -> None:
    with pytest.raises(ActionParseError) as caught:
        parse_react("I will not play.\nGoodbye.")
    assert "'I will not play.\\nGoodbye.'" in str(caught.value)


def test_raw_mode_takes_the_whole_reply() -> None:
    assert parse_raw("  guess 8.\n") == "guess 8"
    assert parse_raw("```python\nprint(1)\nprint(2)\n```") == "print(1)\nprint(2)"
    assert parse_raw("Action: guess 8") == "Action: guess 8"  # raw means raw: no markers are read
    with pytest.raises(ActionParseError, match=r"the reply is empty; .* raise agent\.max_tokens"):
        parse_raw("  ``  ")


def test_clean_action_strips_nested_wrappers_until_none_is_left() -> None:
    assert clean_action(' **`"guess 8"`**. ') == "guess 8"
    assert clean_action("go to door 1;") == "go to door 1"


def test_a_tool_call_entry_becomes_an_agenthub_tool_call() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "guess", "arguments": '{"number": 8}'}}
    assert tool_call_from_message(call, None) == ToolCall(name="guess", arguments={"number": 8})
    empty = {"id": "c2", "function": {"name": "look", "arguments": ""}}
    assert tool_call_from_message(empty, None) == ToolCall(name="look", arguments={})


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [('{"number": 8', "are not valid JSON"), ("[8]", "must be a JSON object, got list")],
    ids=["truncated json", "not an object"],
)
def test_bad_tool_call_arguments_are_a_parse_error(arguments: str, problem: str) -> None:
    call = {"id": "c1", "function": {"name": "guess", "arguments": arguments}}
    with pytest.raises(ActionParseError, match=problem):
        tool_call_from_message(call, "raw text")


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>\n{"name": "guess", "arguments": {"number": 8}}\n</tool_call>',
        'I will guess.\n```json\n{"name": "guess", "arguments": "{\\"number\\": 8}"}\n```',
        'Calling {"name": "guess", "parameters": {"number": 8}} now',
    ],
    ids=["hermes tags", "json fence with string arguments", "bare object with parameters"],
)
def test_a_tool_call_written_as_text_is_found(text: str) -> None:
    assert tool_call_from_text(text) == ToolCall(name="guess", arguments={"number": 8})


def test_text_without_a_tool_call_gives_none() -> None:
    assert tool_call_from_text("guess 8") is None
    assert tool_call_from_text('{"answer": 8}') is None
    assert tool_call_from_text(None) is None
