"""``url=``: the env servers a run uses instead of starting its own, one URL or a list of them.

A user writes ``url=http://host:8000`` for one server and ``url=[...]`` for several; every trainer's
config declares the key with :data:`EnvUrls`, so its code always sees a list (or None: start servers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import BeforeValidator


def env_url_list(value: str | Sequence[str] | None) -> list[str]:
    """``url=`` as a list: one URL becomes a one-item list, none an empty one."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return list(value)


def _as_list_or_none(value: object) -> object:
    # None stays None (no url= given); a single URL becomes a list; anything else is left to pydantic.
    return [value] if isinstance(value, str) else value


EnvUrls = Annotated[list[str] | None, BeforeValidator(_as_list_or_none)]
"""The type of a config's ``url`` key: ``url=URL`` or ``url=[URL, ...]`` in, ``list[str] | None`` out."""
