"""Reading an action out of a model's reply, as Search-R1's generation loop does, in linear time.

Search-R1 (``search_r1/llm_agent/generation.py``) first cuts each reply after its first
``</search>`` (or, when there is none, after its first ``</answer>``), then takes the first match of
``<(search|answer)>(.*?)</\\1>`` (case-sensitive), stripped. The regex itself is quadratic on a
reply full of openers with no closer, so the same match is found here from one pass over the tags.

``lenient=True`` keeps this env's older, looser reading: no cut, tags in any case, and the plain
``search: ...`` / ``answer: ...`` forms on a line of their own.
"""

from __future__ import annotations

import re

Parsed = tuple[str, str]

_TAG = re.compile(r"<(/?)(search|answer)>")
_TAG_ANY_CASE = re.compile(r"<(/?)(search|answer)>", re.IGNORECASE)
_PLAIN = re.compile(r"(search|answer)\s*:", re.IGNORECASE)


def cut_reply(reply: str) -> str:
    """Search-R1's ``_postprocess_responses``: keep a reply up to its first ``</search>``, else ``</answer>``."""
    for closer in ("</search>", "</answer>"):
        if closer in reply:
            return reply.split(closer, 1)[0] + closer
    return reply


def first_tagged(reply: str, *, any_case: bool = False) -> Parsed | None:
    """The leftmost ``<tag>content</tag>`` for tag search or answer: ``re.search``'s match, found in O(n).

    The regex starts at the leftmost opener that has its closer somewhere after it, and its lazy
    ``.*?`` ends at that opener's first closer. One scan lists the tags; the last closer of each
    name says whether an opener has one after it.
    """
    tags = [
        (m.start(), m.end(), m.group(1) == "/", m.group(2).lower())
        for m in (_TAG_ANY_CASE if any_case else _TAG).finditer(reply)
    ]
    last_closer: dict[str, int] = {}
    for start, _, closing, name in tags:
        if closing:
            last_closer[name] = start
    for i, (_, end, closing, name) in enumerate(tags):
        if closing or last_closer.get(name, -1) < end:
            continue
        # Runs once: the closer exists, so this scan stops at it.
        close_at = next(s for s, _, c, n in tags[i + 1 :] if c and n == name)
        return name, reply[end:close_at].strip()
    return None


def first_plain(reply: str) -> Parsed | None:
    """The first line that reads ``search: query`` or ``answer: text`` (any case), line by line."""
    for line in reply.splitlines():
        stripped = line.strip()
        found = _PLAIN.match(stripped)
        if found and stripped[found.end() :].strip():
            return found.group(1).lower(), stripped[found.end() :].strip()
    return None


def parse_action(reply: object, *, lenient: bool = False) -> Parsed | None:
    """``("search" | "answer", text)`` from a reply, or ``None`` when it holds neither (an invalid action)."""
    if not isinstance(reply, str):
        return None
    if lenient:
        return first_tagged(reply, any_case=True) or first_plain(reply)
    return first_tagged(cut_reply(reply))
