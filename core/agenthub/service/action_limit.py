"""An action longer than the env's ``max_action_chars``, answered by the server before the env sees it.

An agent's text is hostile input: a parser that is fine on a 50-character command may take
quadratic time on a megabyte, and an env whose calls run on the event loop (``inline_calls``)
would stall every other request meanwhile. So the length is checked first, in time linear in
the action, and a longer action is answered the way the protocol answers any action an env
cannot read: an observation in words, ``info["invalid_action"]``, reward 0, the episode going
on (``docs/protocol.md``, Routes). The env's state is not touched, so it is not charged a move.
"""

from __future__ import annotations

from typing import Any

import orjson

from agenthub.types import Action

INFO_KEY = "action_too_long"
"""The ``info`` key that says the server, not the env, refused the action, and with which figures."""


def action_chars(action: Action) -> int:
    """The length of an action in characters: a tool call's is its name's plus its arguments' as JSON."""
    if isinstance(action, str):
        return len(action)
    # The arguments were parsed from JSON at most max_body_bytes long: encoding them again is linear.
    return len(action.name) + len(orjson.dumps(action.arguments).decode("utf-8"))


def too_long_reply(action: Action, limit: int, seat: int | None, players: int) -> dict[str, Any] | None:
    """The step's answer when ``action`` is over ``limit`` characters, else None (the env takes it).

    A multi-player env's answer is addressed to the seat that acted, which stays on turn, with no
    seat rewarded, as an env answers a move it cannot read (``docs/protocol.md``, Seats).
    """
    chars = action_chars(action)
    if chars <= limit:
        return None
    text = (
        f"Your action is {chars:,} characters long; this environment reads actions of at most {limit:,} "
        "characters, so it was not read and nothing happened. Reply with one action in the format the "
        "environment asks for."
    )
    info = {"invalid_action": True, INFO_KEY: {"chars": chars, "max_action_chars": limit}}
    reply: dict[str, Any] = {"observation": text, "reward": 0.0, "terminated": False, "truncated": False, "info": info}
    if players > 1:
        assert seat is not None  # check_seat refused a multi-player step without one
        reply["seat"] = seat
        reply["rewards"] = {str(s): 0.0 for s in range(players)}
    return reply
