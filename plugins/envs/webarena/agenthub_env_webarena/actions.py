"""WebArena's id-based action space, parsed as its ``create_id_based_action`` parses it.

Actions name elements by the ids shown in the accessibility tree::

    click [1234]                 hover [1234]
    type [1234] [some text] [1]  (1 presses Enter after typing, the default; 0 does not)
    press [Control+a]            scroll [up] / scroll [down]
    new_tab   tab_focus [1]   close_tab   goto [http://...]   go_back   go_forward
    stop [the answer]            (stop with no answer is allowed)

As in WebArena's prompts, a reply may wrap the action in triple backticks after
its reasoning ("... In summary, the next action I will perform is ```click [12]```");
the last fenced block is taken, else the whole reply. A reply that is no action
raises :class:`ActionParseError` with a message the env shows the model.
"""

from __future__ import annotations

import re
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
_FENCE = re.compile(r"```(.*?)```", re.DOTALL)
_PATTERNS: dict[str, re.Pattern[str]] = {
    "click": re.compile(r"click ?\[(\d+)\]"),
    "hover": re.compile(r"hover ?\[(\d+)\]"),
    "type": re.compile(r"type ?\[(\d+)\] ?\[(.+)\] ?\[(\d+)\]", re.DOTALL),
    "press": re.compile(r"press ?\[(.+)\]"),
    "scroll": re.compile(r"scroll ?\[?(up|down)\]?"),
    "goto": re.compile(r"goto ?\[(.+)\]"),
    "tab_focus": re.compile(r"tab_focus ?\[(\d+)\]"),
    "stop": re.compile(r"stop ?\[(.+)\]", re.DOTALL),
}


class ActionParseError(ValueError):
    """A reply that is not one of WebArena's actions; the message says what is accepted."""


@dataclass(frozen=True)
class BrowserAction:
    """One parsed action. ``element_id`` for click/hover/type, ``text`` for type/press/goto/stop/scroll."""

    kind: ActionKind
    element_id: int | None = None
    text: str = ""
    index: int | None = None  # tab_focus
    enter: bool = False  # type: press Enter after the text


def extract_action(reply: str) -> str:
    """The action in a model's reply: the last ```fenced``` block if there is one, else the reply stripped."""
    fenced = _FENCE.findall(reply)
    return (fenced[-1] if fenced else reply).strip()


def parse_action(reply: str) -> BrowserAction:
    """Parse one action the way WebArena does (see the module docstring)."""
    text = extract_action(reply)
    if not text:
        raise ActionParseError(f"the reply holds no action; write one of: {ACTION_HELP}")
    name = text.split("[")[0].strip() if "[" in text else text.split()[0].strip()
    if name in ("new_tab", "go_back", "go_forward", "close_tab"):
        return BrowserAction(name)  # type: ignore[arg-type]
    if name == "stop":
        match = _PATTERNS["stop"].search(text)
        return BrowserAction("stop", text=match.group(1) if match else "")  # some tasks need no answer
    pattern = _PATTERNS.get(name)
    if pattern is None:
        raise ActionParseError(f"{name!r} is not an action; write one of: {ACTION_HELP}")
    if name == "type" and not (text.endswith("[0]") or text.endswith("[1]")):
        text += " [1]"  # WebArena's default: press Enter after typing
    match = pattern.search(text)
    if match is None:
        raise ActionParseError(f"invalid {name} action {text!r}; the form is {_form(name)}")
    if name in ("click", "hover"):
        return BrowserAction(name, element_id=int(match.group(1)))  # type: ignore[arg-type]
    if name == "type":
        return BrowserAction("type", element_id=int(match.group(1)), text=match.group(2), enter=match.group(3) == "1")
    if name == "tab_focus":
        return BrowserAction("tab_focus", index=int(match.group(1)))
    return BrowserAction(name, text=match.group(1))  # type: ignore[arg-type]  # press, scroll, goto


def _form(name: str) -> str:
    forms = {
        "click": "click [id]",
        "hover": "hover [id]",
        "type": "type [id] [text] [0|1]",
        "press": "press [keys], e.g. press [Control+a]",
        "scroll": "scroll [up] or scroll [down]",
        "goto": "goto [url]",
        "tab_focus": "tab_focus [index]",
    }
    return forms[name]
