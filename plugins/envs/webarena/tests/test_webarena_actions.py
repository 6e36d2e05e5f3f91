"""WebArena's id-based actions, parsed as its create_id_based_action parses them."""

from __future__ import annotations

import pytest
from agenthub.testing import cpu_seconds_at_most

from agenthub_env_webarena.actions import FENCE, ActionParseError, BrowserAction, parse_action, playwright_key


def fenced(reply: str) -> str:
    """The reply as WebArena's prompt asks for it: the action in a ``` block (unless it already holds one)."""
    return reply if FENCE in reply else f"{FENCE}{reply}{FENCE}"


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        ("click [1234]", BrowserAction("click", element_id=1234)),
        ("click[7]", BrowserAction("click", element_id=7)),
        ("hover [12]", BrowserAction("hover", element_id=12)),
        ("type [164] [restaurants near CMU] [1]", BrowserAction("type", 164, "restaurants near CMU", enter=True)),
        ("type [164] [restaurants near CMU] [0]", BrowserAction("type", 164, "restaurants near CMU", enter=False)),
        ("type [164] [no flag]", BrowserAction("type", 164, "no flag", enter=True)),  # WebArena's default
        ("press [Control+a]", BrowserAction("press", text="Control+a")),
        ("press [enter]", BrowserAction("press", text="Enter")),  # WebArena's SPECIAL_KEY_MAPPINGS
        ("press [arrowdown]", BrowserAction("press", text="ArrowDown")),
        ("press [meta+a]", BrowserAction("press", text="Meta+a")),  # pressed as Control+a off a Mac
        ("stop [two\nlines]", BrowserAction("stop", text="")),  # WebArena's `.+` stops at the newline
        ("```click [1]``` or ```click [2]```", BrowserAction("click", element_id=1)),  # the first block
        ("scroll [down]", BrowserAction("scroll", text="down")),
        ("scroll up", BrowserAction("scroll", text="up")),
        ("new_tab", BrowserAction("new_tab")),
        ("tab_focus [2]", BrowserAction("tab_focus", index=2)),
        ("close_tab", BrowserAction("close_tab")),
        ("goto [http://127.0.0.1:7770/cart]", BrowserAction("goto", text="http://127.0.0.1:7770/cart")),
        ("go_back", BrowserAction("go_back")),
        ("go_forward", BrowserAction("go_forward")),
        ("stop [Joseph Brzezinski, Catso]", BrowserAction("stop", text="Joseph Brzezinski, Catso")),
        ("stop", BrowserAction("stop", text="")),
        (
            "Let's think step-by-step. The search box is [5]. In summary, the next action I will perform is "
            "```type [5] [blue mug] [1]```",
            BrowserAction("type", 5, "blue mug", enter=True),
        ),
    ],
)
def test_every_action_of_the_space_parses(reply: str, action: BrowserAction) -> None:
    assert parse_action(fenced(reply)) == action
    assert parse_action(reply, bare=True) == action  # bare_actions: a reply with no block is read whole


def test_a_reply_with_no_fenced_block_is_a_parse_failure_unless_bare() -> None:
    for reply in ("click [1]", "I will click [1]", "a ``` b", "stop [done]"):
        with pytest.raises(ActionParseError, match="no action in a pair of ```: end it with the action"):
            parse_action(reply)
    assert parse_action("click [1]", bare=True) == BrowserAction("click", element_id=1)
    with pytest.raises(ActionParseError, match="is not an action"):  # bare: the whole reply is the action string
        parse_action("I will click [1]", bare=True)


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("", "holds no action"),
        ("```   ```", "holds no action"),
        ("jump [3]", "'jump' is not an action; write one of: click \\[id\\]"),
        ("click [abc]", "invalid click action 'click \\[abc\\]'; the form is click \\[id\\]"),
        ("type [3]", "the form is type \\[id\\] \\[text\\] \\[0\\|1\\]"),
        ("tab_focus [x]", "the form is tab_focus \\[index\\]"),
        ("type [5] [a\nb] [1]", "invalid type action"),  # refused by WebArena too
        ("click [" + "5" * 5000 + "]", "more than the 4096 an action may have"),
        ("click [" + "5" * 4000 + "]", "out of range"),
        ("x" * 4097, "more than the 4096"),
    ],
)
def test_a_reply_that_is_no_action_is_answered_in_words(reply: str, message: str) -> None:
    with pytest.raises(ActionParseError, match=message):
        parse_action(fenced(reply))


def test_meta_is_pressed_as_control_off_a_mac() -> None:
    assert playwright_key("Meta+a", "Linux x86_64") == "Control+a"
    assert playwright_key("Meta+a", "MacIntel") == "Meta+a"


def test_the_hostile_shape_of_issue_27_is_refused_fast() -> None:
    with cpu_seconds_at_most(0.5, "40 KB of nested brackets"), pytest.raises(ActionParseError):
        parse_action("type [1] [" * 4000 + "[1]", max_chars=10**6, bare=True)  # 40 KB: ~10 s in WebArena's regex
