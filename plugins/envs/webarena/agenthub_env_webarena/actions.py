"""WebArena's id-based action space, parsed as its ``create_id_based_action`` parses it.

Actions name elements by the ids shown in the accessibility tree::

    click [1234]                 hover [1234]
    type [1234] [some text] [1]  (1 presses Enter after typing, the default; 0 does not)
    press [Control+a]            scroll [up] / scroll [down]
    new_tab   tab_focus [1]   close_tab   goto [http://...]   go_back   go_forward
    stop [the answer]            (stop with no answer is allowed)

As in WebArena's prompts, a reply wraps the action in triple backticks after its
reasoning ("... In summary, the next action I will perform is ```click [12]```");
the *first* fenced block is taken, as WebArena's prompt constructor takes it, and a
reply with no fenced block is a parse failure, as in WebArena. With ``bare=True``
(the env's ``bare_actions`` option, off by default) such a reply is read whole as
the action instead. A reply that is no action raises :class:`ActionParseError`
with a message the env shows the model.

WebArena matches its regular expressions (``click ?\\[(\\d+)\\]``,
``type ?\\[(\\d+)\\] ?\\[(.+)\\] ?\\[(\\d+)\\]``, ...) with ``re.search``; those
backtrack quadratically on hostile text. The scanner here finds the very same
match (leftmost start; ``.+`` greedy within one line) by hand in linear time, and
refuses a reply longer than ``max_chars`` before reading it. Element ids and tab
indexes above :data:`MAX_ID` are refused (WebArena's ``int()`` of a 5000-digit id
raised).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

ActionKind = Literal[
    "click", "hover", "type", "press", "scroll", "new_tab", "tab_focus", "close_tab",
    "goto", "go_back", "go_forward", "stop",
]  # fmt: skip

ACTION_HELP = (
    "click [id], hover [id], type [id] [text] [0|1], press [keys], scroll [up|down], new_tab, "
    "tab_focus [index], close_tab, goto [url], go_back, go_forward, stop [answer]"
)
FENCE = "```"
"""WebArena's ``action_splitter``."""

MAX_ACTION_CHARS = 4096
"""The longest reply parsed; a longer one is an invalid action (core's generic ``max_action_chars`` will own this)."""

MAX_ID = 10**9
"""Element ids and tab indexes above this are invalid actions (the accessibility tree never shows one)."""

SPECIAL_KEY_MAPPINGS: dict[str, str] = {
    "backquote": "Backquote", "minus": "Minus", "equal": "Equal", "backslash": "Backslash",
    "backspace": "Backspace", "meta": "Meta", "tab": "Tab", "delete": "Delete", "escape": "Escape",
    "arrowdown": "ArrowDown", "end": "End", "enter": "Enter", "home": "Home", "insert": "Insert",
    "pagedown": "PageDown", "pageup": "PageUp", "arrowright": "ArrowRight", "arrowup": "ArrowUp",
    "f1": "F1", "f2": "F2", "f3": "F3", "f4": "F4", "f5": "F5", "f6": "F6", "f7": "F7", "f8": "F8",
    "f9": "F9", "f10": "F10", "f11": "F11", "f12": "F12",
}  # fmt: skip
"""WebArena's ``browser_env/constants.py``: lower-case key names and the Playwright names they become."""

# WebArena's expressions that cannot backtrack far (a fixed shape around one run of digits), and the fixed
# prefixes of those with ``.+``; the ``.+`` part is scanned by hand below.
_ID_ARG = {name: re.compile(rf"{name} ?\[(\d+)\]") for name in ("click", "hover", "tab_focus")}
_PREFIX = {name: re.compile(rf"{name} ?\[") for name in ("press", "goto", "stop")}
_TYPE_PREFIX = re.compile(r"type ?\[(\d+)\] ?\[")
_REVERSED_FLAG = re.compile(r"\](\d+)\[ ?\]")  # ``\] ?\[(\d+)\]`` read right to left
_SCROLL = re.compile(r"scroll ?\[?(up|down)\]?")
_NO_ARGUMENT = ("new_tab", "go_back", "go_forward", "close_tab")
_FORMS = {
    "click": "click [id]",
    "hover": "hover [id]",
    "type": "type [id] [text] [0|1]",
    "press": "press [keys], e.g. press [Control+a]",
    "scroll": "scroll [up] or scroll [down]",
    "goto": "goto [url]",
    "tab_focus": "tab_focus [index]",
}


class ActionParseError(ValueError):
    """A reply that is not one of WebArena's actions; the message says what is accepted."""


@dataclass(frozen=True)
class BrowserAction:
    """One parsed action. ``element_id`` for click/hover/type, ``text`` for type/press/goto/stop/scroll.

    ``text`` of a press is the key combination after WebArena's key mapping (``enter`` -> ``Enter``).
    """

    kind: ActionKind
    element_id: int | None = None
    text: str = ""
    index: int | None = None  # tab_focus
    enter: bool = False  # type: press Enter after the text


def fenced(action: str) -> str:
    """``action`` between two :data:`FENCE` marks, the form WebArena's prompt asks a reply to hold its action in."""
    return f"{FENCE}{action}{FENCE}"


def extract_action(reply: str, *, bare: bool = False) -> str:
    """The action in a reply: its first ```fenced``` block (WebArena's ``_extract_action``).

    A reply with no fenced block raises :class:`ActionParseError`, as WebArena's does; ``bare=True`` reads it whole.
    """
    start = reply.find(FENCE)
    if start >= 0:
        end = reply.find(FENCE, start + len(FENCE))
        if end >= 0:
            return reply[start + len(FENCE) : end].strip()
    if bare:
        return reply.strip()
    raise ActionParseError(
        f"the reply has no action in a pair of {FENCE}: end it with the action in triple backticks, e.g. "
        f'"In summary, the next action I will perform is {FENCE}click [1234]{FENCE}"; actions: {ACTION_HELP}'
    )


def map_keys(key_comb: str) -> str:
    """WebArena's ``create_key_press_action``: each ``+``-separated key through :data:`SPECIAL_KEY_MAPPINGS`."""
    return "+".join(SPECIAL_KEY_MAPPINGS.get(key.lower(), key) for key in key_comb.split("+"))


def playwright_key(key_comb: str, platform: str) -> str:
    """WebArena's ``execute_key_press``: ``Meta`` is pressed as ``Control`` unless ``navigator.platform`` is a Mac."""
    if "Meta" in key_comb and "Mac" not in platform:
        return key_comb.replace("Meta", "Control")
    return key_comb


def parse_action(
    reply: str,
    *,
    max_chars: int = MAX_ACTION_CHARS,
    rewrite: Callable[[str], str] | None = None,
    bare: bool = False,
) -> BrowserAction:
    """Parse one reply the way WebArena does (see the module docstring); linear in ``len(reply)``.

    ``rewrite`` maps the extracted action first, as WebArena's ``map_url_to_local`` does. ``bare``: a reply
    with no fenced block is read whole as the action (WebArena: a parse failure).
    """
    if len(reply) > max_chars:
        raise ActionParseError(
            f"the reply is {len(reply)} characters, more than the {max_chars} an action may have; "
            f"write one short action: {ACTION_HELP}"
        )
    action = extract_action(reply, bare=bare)
    return parse_action_str(rewrite(action) if rewrite else action)


def parse_action_str(action_str: str) -> BrowserAction:
    """WebArena's ``create_id_based_action`` on an already extracted action string."""
    text = action_str.strip()
    if not text:
        raise ActionParseError(f"the reply holds no action; write one of: {ACTION_HELP}")
    name = text.split("[", 1)[0].strip() if "[" in text else text.split(None, 1)[0]
    if name in _NO_ARGUMENT:
        return BrowserAction(name)  # type: ignore[arg-type]
    if name == "stop":
        found = _bracketed(text, "stop")
        return BrowserAction("stop", text=found or "")  # some tasks need no answer
    if name in ("click", "hover"):
        return BrowserAction(name, element_id=_number(_id_arg(text, name), name, text))  # type: ignore[arg-type]
    if name == "tab_focus":
        return BrowserAction("tab_focus", index=_number(_id_arg(text, name), name, text))
    if name == "type":
        if not (text.endswith("[0]") or text.endswith("[1]")):
            text += " [1]"  # WebArena's default: press Enter after typing
        typed = _type_args(text)
        if typed is None:
            raise _invalid(name, text)
        element, content, flag = typed
        return BrowserAction("type", element_id=_number(element, name, text), text=content, enter=flag == "1")
    if name in ("press", "goto"):
        found = _bracketed(text, name)
        if found is None:
            raise _invalid(name, text)
        return BrowserAction(name, text=map_keys(found) if name == "press" else found)  # type: ignore[arg-type]
    if name == "scroll":
        direction = _scroll_arg(text)
        if direction is None:
            raise _invalid(name, text)
        return BrowserAction("scroll", text=direction)
    raise ActionParseError(f"{_clip(name)!r} is not an action; write one of: {ACTION_HELP}")


def _invalid(name: str, text: str) -> ActionParseError:
    return ActionParseError(f"invalid {name} action {_clip(text)!r}; the form is {_FORMS[name]}")


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _number(digits: str | None, name: str, text: str) -> int:
    if digits is None:
        raise _invalid(name, text)
    # Length first: int() of thousands of digits is slow and, past 4300, raises.
    if len(digits) > 10 or int(digits) > MAX_ID:
        raise ActionParseError(f"{name}: the number in {_clip(text)!r} is out of range; use one from the observation")
    return int(digits)


def _lines_with(text: str, word: str) -> Iterator[tuple[int, int]]:
    """Start and end of each line holding ``word``, top to bottom; each character is looked at a bounded number
    of times."""
    at = text.find(word)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        yield start, end
        at = text.find(word, end + 1)


def _id_arg(text: str, name: str) -> str | None:
    """``re.search(NAME ?\\[(\\d+)\\])``: WebArena's expression, linear as it is (no ``.+``)."""
    match = _ID_ARG[name].search(text)
    return match.group(1) if match else None


def _bracketed(text: str, name: str) -> str | None:
    """``re.search(NAME ?\\[(.+)\\])``: from the leftmost ``NAME [`` to the last ``]`` of its line (1+ chars).

    ``.+`` cannot cross a newline; on a line, the first ``NAME [`` has the most room, so if the line's last
    ``]`` is not after it, no later one on that line matches either.
    """
    for start, end in _lines_with(text, name):
        prefix = _PREFIX[name].search(text, start, end)
        if prefix is None:
            continue
        close = text.rfind("]", prefix.end() + 1, end)
        if close > prefix.end():
            return text[prefix.end() : close]
    return None


def _type_args(text: str) -> tuple[str, str, str] | None:
    """``re.search(type ?\\[(\\d+)\\] ?\\[(.+)\\] ?\\[(\\d+)\\])`` without backtracking.

    ``.+`` is greedy and stops at a newline, so the text ends at the rightmost ``] ?[digits]`` of its line,
    found once per line; the line's first ``type [id] [`` has the most room before it.
    """
    for start, end in _lines_with(text, "type"):
        prefix = _TYPE_PREFIX.search(text, start, end)
        if prefix is None or prefix.end() >= end:
            continue
        tail = _rightmost_flag(text, start, end)
        if tail is not None and tail[0] > prefix.end():  # ``.+``: at least one character
            return prefix.group(1), text[prefix.end() : tail[0]], tail[1]
    return None


def _rightmost_flag(text: str, start: int, end: int) -> tuple[int, str] | None:
    """Where the line's rightmost ``] ?[digits]`` starts, and its digits: the leftmost match in the reversed line.

    Two such tails can overlap only end to start, so the one that ends last also starts last.
    """
    line = text[start:end][::-1]
    match = _REVERSED_FLAG.search(line)
    if match is None:
        return None
    return start + len(line) - match.end(), match.group(1)[::-1]


def _scroll_arg(text: str) -> str | None:
    """``re.search(scroll ?\\[?(up|down)\\]?)``: WebArena's expression, linear as it is."""
    match = _SCROLL.search(text)
    return match.group(1) if match else None
