"""The page as WebArena shows it: the accessibility tree as indented text with element ids.

Follows WebArena's ``browser_env/processors.py`` (``fetch_page_accessibility_tree``,
``parse_accessibility_tree``, ``clean_accesibility_tree``): the nodes of CDP's
``Accessibility.getFullAXTree`` (repeated node ids dropped), each written as
``[id] role 'name' property: value ...``, one tab of indent per depth; a node
with no name and no properties whose role is generic, img, list, strong,
paragraph, banner, navigation, Section, LabelText, Legend or listitem is left
out (its children move up a level); ``StaticText`` lines that repeat text of the
three lines above are dropped.

One difference: WebArena prints CDP's own node ids (large, and different every
time a page is loaded). Here an element gets a small id the first time a page
shows it, kept for as long as that page lives, so the same task shows the same
tree after every reset (the hub's reproducibility rule) and ids cost fewer
tokens. :class:`IdMap` keeps the mapping to the DOM node each id stands for.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

IGNORED_ACTREE_PROPERTIES = ("focusable", "editable", "readonly", "level", "settable", "multiline", "invalid", "url")
"""Properties WebArena leaves out of the text (``browser_env/constants.py``), and ``url``: newer Chromium puts
each link's URL in the tree, which the Chromium WebArena was recorded with did not (and it costs many tokens)."""

EMPTY_ROLES = frozenset(
    ("generic", "img", "list", "strong", "paragraph", "banner", "navigation", "Section", "LabelText", "Legend",
     "listitem")
)  # fmt: skip
"""Roles that WebArena drops when the node has neither a name nor properties."""

_STATIC_TEXT = re.compile(r"\[\d+\] StaticText '([^']+)'")


@dataclass
class IdMap:
    """Element ids of one page: a small number per DOM node (``backendDOMNodeId``), given in order of first sight."""

    next_id: int = 1
    by_backend: dict[int, int] = field(default_factory=dict)
    backend_of: dict[int, int] = field(default_factory=dict)

    def id_for(self, backend_id: int) -> int:
        known = self.by_backend.get(backend_id)
        if known is not None:
            return known
        element_id = self.next_id
        self.next_id += 1
        self.by_backend[backend_id] = element_id
        self.backend_of[element_id] = backend_id
        return element_id


def _value(entry: Any) -> Any:
    return entry.get("value") if isinstance(entry, Mapping) else None


def dedupe(nodes: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The nodes with repeated ``nodeId`` dropped, as WebArena's fetch does."""
    seen: set[str] = set()
    kept = []
    for node in nodes:
        if node["nodeId"] not in seen:
            seen.add(node["nodeId"])
            kept.append(node)
    return kept


def render(nodes: Sequence[Mapping[str, Any]], ids: IdMap) -> tuple[str, set[int]]:
    """The tree as WebArena's text (before cleaning), and the ids shown in it."""
    nodes = dedupe(nodes)
    if not nodes:
        return "", set()
    index = {node["nodeId"]: i for i, node in enumerate(nodes)}
    shown: set[int] = set()
    lines: list[str] = []
    # An explicit stack, not recursion: a deep page must not hit Python's recursion limit.
    stack: list[tuple[int, int]] = [(0, 0)]
    while stack:
        i, depth = stack.pop()
        node = nodes[i]
        valid = False
        if not node.get("ignored"):
            role = str(_value(node.get("role")) or "")
            name = str(_value(node.get("name")) or "")
            properties = [
                f"{prop['name']}: {_value(prop.get('value'))}"
                for prop in node.get("properties", [])
                if prop.get("name") not in IGNORED_ACTREE_PROPERTIES and isinstance(prop.get("value"), Mapping)
                and "value" in prop["value"]
            ]  # fmt: skip
            valid = bool(role) and not (not name.strip() and not properties and role in EMPTY_ROLES)
            backend = node.get("backendDOMNodeId")
            if valid and isinstance(backend, int):
                element_id = ids.id_for(backend)
                shown.add(element_id)
                text = f"[{element_id}] {role} {name!r}"
                if properties:
                    text += " " + " ".join(properties)
                lines.append("\t" * depth + text)
            else:
                valid = False
        child_depth = depth + 1 if valid else depth
        children = [index[c] for c in node.get("childIds", []) if c in index]
        stack.extend((c, child_depth) for c in reversed(children))
    return "\n".join(lines), shown


def clean(tree: str) -> str:
    """WebArena's ``clean_accesibility_tree``: drop a StaticText line whose text is in one of the 3 kept lines above.

    WebArena also drops StaticText lines its pattern cannot read (text that ``repr`` puts in double quotes,
    such as "it's"); those are kept here, so that no text of the page is lost.
    """
    kept: list[str] = []
    for line in tree.split("\n"):
        match = _STATIC_TEXT.search(line)
        if match and any(match.group(1) in previous for previous in kept[-3:]):
            continue
        kept.append(line)
    return "\n".join(kept)


def truncate(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut at a line end, with a note saying how to see the rest."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    cut = cut if cut > 0 else limit
    return text[:cut] + f"\n[... the page is longer; {len(text) - cut} more characters not shown]"
