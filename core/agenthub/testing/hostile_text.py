"""Pathological actions of a given length, for checking that an env's parser runs in linear time.

An agent's text is hostile input: a pattern with overlapping quantifiers (two whitespace runs that
meet, ``.*?X.*?Y``, ``(\\s*\\w+)*``) that is instant on a 50-character command may take quadratic
time on a megabyte. Each shape here is built to hit one such trap in one of the seed envs' parsers
(or their authors' patterns of old), so that an env's tests and ``benchmarks/action_parsing.py``
feed every parser the same inputs::

    from agenthub.testing.hostile_text import hostile_actions

    for shape, action in hostile_actions(1_000_000).items():
        env.step(action)  # answered, as an invalid action or a normal one, in well under a second
"""

from __future__ import annotations

KEYWORDS = (
    "Action: guess 5 place 5 move up s h i r e craft 1 stick using 1 planks, get 1 oak log inventory "
    "go to red ball 1 pickup key toggle left right look around open door to kitchen focus on "
    "search: answer: <search>q</search> click [12] type [3] [hello] scroll [down] stop [done] "
)
"""Every seed env's command words and labels, in the forms their parsers look for."""

WHITESPACE = " \t\n\r\f\v\u00a0\u2003\u3000"
"""ASCII and Unicode whitespace, which ``str.split`` and the regex class ``\\s`` both treat as space."""

UNICODE = "é🙂\u200b\u017f\u212a\u0301\ufeffא"
"""Two-, three- and four-byte characters, a zero-width space, a combining accent, a right-to-left letter,
and the long s (U+017F) and the Kelvin sign (U+212A), which case-insensitive patterns read as ``s`` and ``k``."""


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _framed(head: str, body: str, tail: str, size: int) -> str:
    """``head`` + ``body`` repeated + ``tail``, exactly ``size`` characters (cut from the end if shorter)."""
    middle = max(size - len(head) - len(tail), 0)
    return (head + _repeat(body, middle) + tail)[:size]


def hostile_actions(size: int) -> dict[str, str]:
    """Actions of exactly ``size`` characters, by shape name:

    - ``brackets``: ``[(<{`` repeated: nested openers a bracket-matching pattern may re-scan;
    - ``tags``: unclosed ``<search><answer>`` and ``[`` with no end: a lazy ``<x>(.*?)</x>`` scans to the end
      from every opener;
    - ``keywords``: every env's command words and labels, over and over;
    - ``whitespace``: a move (``5``), one long run of mixed whitespace, then a stray ``x``: two whitespace
      runs that meet (``\\d+\\s*[.!]?\\s*$``) try every split of it;
    - ``digits``: ``guess`` and one long run of digits: a number read with ``int()`` (quadratic, and refused
      by CPython over 4,300 digits);
    - ``counts``: ``get <digits> oak log``: the same run inside a command with a count;
    - ``unicode``: multi-byte, zero-width, combining and case-folding characters.
    """
    if size < 1:
        raise ValueError(f"size must be at least 1 character, got {size}")
    return {
        "brackets": _repeat("[(<{", size),
        "tags": _repeat("<search><answer>[", size),
        "keywords": _repeat(KEYWORDS, size),
        "whitespace": _framed("5", WHITESPACE, "x", size),
        "digits": _framed("guess ", "9", "", size),
        "counts": _framed("get ", "9", " oak log", size),
        "unicode": _repeat(UNICODE, size),
    }
