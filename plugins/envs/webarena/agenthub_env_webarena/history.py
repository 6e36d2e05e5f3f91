"""What WebArena's ``run.py`` and prompt constructor do around each action, for the env to do the same.

- :func:`describe`: the ``PREVIOUS ACTION`` line, WebArena's ``get_action_description``/``action2str``
  (``click [5] where [5] is link 'Products'``), not the raw reply.
- :func:`early_stop`: ``run.py``'s ``early_stop``: the step limit, ``parsing_failure`` unparsable replies in a
  row, ``repeating_action`` identical actions in a row (typing into one element that often in the episode).
  The episode is then scored with the answer ``Early stop: <reason>``, as run.py scores it.
- :class:`UrlMapper`: ``URL_MAPPINGS``: the page URL is shown with WebArena's real-world host names
  (``http://onestopmarket.com``) and an action's URLs are mapped back to the deployment's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agenthub_env_webarena.actions import FENCE, BrowserAction

REAL_URLS: dict[str, str] = {
    "reddit": "http://reddit.com",
    "shopping": "http://onestopmarket.com",
    "shopping_admin": "http://luma.com/admin",
    "gitlab": "http://gitlab.com",
    "wikipedia": "http://wikipedia.org",
    "map": "http://openstreetmap.org",
    "homepage": "http://homepage.com",
}
"""WebArena's ``URL_MAPPINGS`` (browser_env/env_config.py), by site, in its order."""

PARSING_FAILURE_TH = 3
"""run.py's ``--parsing_failure_th``."""

REPEATING_ACTION_TH = 3
"""run.py's ``--repeating_action_failure_th``."""


class UrlMapper:
    """WebArena's ``map_url_to_real`` / ``map_url_to_local`` for a deployment's site URLs."""

    def __init__(self, site_urls: Mapping[str, str]) -> None:
        self.mappings = {site_urls[site]: real for site, real in REAL_URLS.items() if site_urls.get(site)}

    def to_real(self, url: str) -> str:
        for local, real in self.mappings.items():
            if local in url:
                url = url.replace(local, real)
        return url

    def to_local(self, text: str) -> str:
        for local, real in self.mappings.items():
            if real in text:
                text = text.replace(real, local)
            secure = real.replace("http", "https")
            if secure in text:
                text = text.replace(secure, local)
        return text


def describe(action: BrowserAction | None, reply: str, node_line: str | None) -> str:
    """The history entry WebArena shows as ``PREVIOUS ACTION`` for ``action`` (None: the reply did not parse).

    ``node_line`` is the observation's line for the action's element (``[5] link 'Products'``), None if absent.
    """
    if action is None:
        return (
            f'The previous prediction you issued was "{reply}". However, the format was incorrect. Ensure that '
            f"the action is wrapped inside a pair of {FENCE} and enclose arguments within [] as follows: "
            f"{FENCE}action [arg] ...{FENCE}."
        )
    kind, element = action.kind, action.element_id
    if kind in ("click", "hover", "type"):
        if node_line is None:
            return (
                f'Attempt to perfom "{kind}" on element "[{element}]" but no matching element found. Please check '
                "the observation more carefully."
            )
        semantic = " ".join(node_line.split()[1:])
        if kind == "type":
            text = (action.text + ("\n" if action.enter else "")).replace("\n", " ")
            return f"type [{element}] [{text}] where [{element}] is {semantic}"
        return f"{kind} [{element}] where [{element}] is {semantic}"
    if kind in ("scroll", "press", "goto", "stop"):
        return f"{kind} [{action.text}]"
    if kind == "tab_focus":
        return f"page_focus [{action.index}]"
    return kind  # new_tab, close_tab, go_back, go_forward


def node_line(tree: str, element_id: int) -> str | None:
    """The line of ``[element_id]`` in a rendered accessibility tree, without its indentation."""
    marker = f"[{element_id}] "
    for line in tree.splitlines():
        stripped = line.lstrip("\t")
        if stripped.startswith(marker):
            return stripped
    return None


def _equivalent(a: BrowserAction | None, b: BrowserAction | None) -> bool:
    """WebArena's ``is_equivalent`` (None is its NONE action, a reply that did not parse)."""
    if a is None or b is None:
        return a is None and b is None
    if a.kind != b.kind:
        return False
    if a.kind in ("click", "hover", "type"):
        return a.element_id == b.element_id
    if a.kind == "tab_focus":
        return a.index == b.index
    if a.kind in ("scroll", "press", "goto", "stop"):
        return a.text == b.text
    return True


def early_stop(
    actions: Sequence[BrowserAction | None],
    max_steps: int,
    parsing_failure: int = PARSING_FAILURE_TH,
    repeating_action: int = REPEATING_ACTION_TH,
) -> str:
    """run.py's ``early_stop`` after ``actions`` (None for an unparsable reply): the reason, or "" to go on."""
    if len(actions) >= max_steps:
        return f"Reach max steps {max_steps}"
    last_k = actions[-parsing_failure:] if parsing_failure > 0 else actions
    if len(last_k) >= parsing_failure and all(a is None for a in last_k):
        return f"Failed to parse actions for {parsing_failure} times"
    if not actions:
        return ""
    last = actions[-1]
    last_k = actions[-repeating_action:] if repeating_action > 0 else actions
    if last is None or last.kind != "type":
        if len(last_k) >= repeating_action and all(_equivalent(a, last) for a in last_k):
            return f"Same action for {repeating_action} times"
    elif sum(_equivalent(a, last) for a in actions) >= repeating_action:
        return f"Same typing action for {repeating_action} times"
    return ""
