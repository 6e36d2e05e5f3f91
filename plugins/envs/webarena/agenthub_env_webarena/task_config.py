"""WebArena task config files: read, validate, and point at a deployment's sites.

A task is the JSON of one of WebArena's ``config_files/*.json``: ``task_id``,
``sites``, ``start_url`` (with placeholders such as ``__SHOPPING__``),
``intent``, ``require_login`` and ``eval`` (``eval_types``,
``reference_answers``, ``reference_url``, ``program_html``, ...). Files are read
as WebArena writes them; unknown keys are kept, so a config round-trips.

Sites are named as WebArena names them (``shopping``, ``shopping_admin``,
``reddit``, ``gitlab``, ``map``, ``wikipedia``, ``homepage``). Their base URLs
come from ``env_kwargs.sites.NAME=URL`` or, as in WebArena, from the
environment variables ``SHOPPING``, ``SHOPPING_ADMIN``, ``REDDIT``, ``GITLAB``,
``MAP``, ``WIKIPEDIA`` and ``HOMEPAGE``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SITE_PLACEHOLDERS: dict[str, str] = {
    "shopping": "__SHOPPING__",
    "shopping_admin": "__SHOPPING_ADMIN__",
    "reddit": "__REDDIT__",
    "gitlab": "__GITLAB__",
    "map": "__MAP__",
    "wikipedia": "__WIKIPEDIA__",
    "homepage": "__HOMEPAGE__",
}
"""Each WebArena site and the placeholder its URLs carry in config files (the variable is the name upper-cased)."""

EVAL_TYPES = ("string_match", "url_match", "program_html")
ANSWER_KINDS = ("exact_match", "must_include", "fuzzy_match")
_PLACEHOLDER = re.compile(r"__[A-Z_]+__")


class TaskConfigError(ValueError):
    """A task config that WebArena's evaluator could not run either."""


@dataclass(frozen=True)
class WebArenaTask:
    """One WebArena task config; ``raw`` is the whole JSON as read."""

    task_id: int
    intent: str
    start_url: str
    sites: tuple[str, ...]
    require_login: bool
    eval: Mapping[str, Any]
    raw: Mapping[str, Any] = field(repr=False)
    source: str = ""

    @property
    def eval_types(self) -> tuple[str, ...]:
        return tuple(self.eval["eval_types"])

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, source: str = "") -> WebArenaTask:
        where = source or "task config"
        for key in ("task_id", "intent", "start_url", "eval"):
            if key not in data:
                raise TaskConfigError(
                    f"{where}: missing {key!r}; a WebArena config has task_id, intent, start_url, eval"
                )
        task_id = data["task_id"]
        if not isinstance(task_id, int) or isinstance(task_id, bool):
            raise TaskConfigError(f"{where}: task_id must be an integer, got {task_id!r}")
        spec = data["eval"]
        if not isinstance(spec, Mapping):
            raise TaskConfigError(f"{where}: 'eval' must be an object, got {type(spec).__name__}")
        types = spec.get("eval_types")
        if not isinstance(types, list) or not types:
            raise TaskConfigError(f"{where}: eval.eval_types must be a non-empty list of {', '.join(EVAL_TYPES)}")
        unknown = [t for t in types if t not in EVAL_TYPES]
        if unknown:
            raise TaskConfigError(f"{where}: eval_type {unknown[0]!r} is not supported; use {', '.join(EVAL_TYPES)}")
        if "string_match" in types:
            answers = spec.get("reference_answers")
            if not isinstance(answers, Mapping) or not answers:
                raise TaskConfigError(f"{where}: string_match needs eval.reference_answers ({', '.join(ANSWER_KINDS)})")
            bad = [k for k in answers if k not in ANSWER_KINDS]
            if bad:
                raise TaskConfigError(
                    f"{where}: reference answer kind {bad[0]!r} is unknown; use {', '.join(ANSWER_KINDS)}"
                )
        if "url_match" in types and not isinstance(spec.get("reference_url"), str):
            raise TaskConfigError(f"{where}: url_match needs eval.reference_url (URLs joined by ' |OR| ')")
        if "program_html" in types and not isinstance(spec.get("program_html"), list):
            raise TaskConfigError(
                f"{where}: program_html needs eval.program_html, a list of url/locator/required_contents"
            )
        sites = data.get("sites") or []
        return cls(
            task_id=task_id,
            intent=str(data["intent"]),
            start_url=str(data["start_url"]),
            sites=tuple(str(s) for s in sites),
            require_login=bool(data.get("require_login", False)),
            eval=spec,
            raw=dict(data),
            source=source,
        )


def load_tasks(directory: str | os.PathLike[str]) -> list[WebArenaTask]:
    """Every ``*.json`` task config in ``directory``, by task_id.

    A file holding one config is that task; a file holding a list is an aggregate, as WebArena's
    ``scripts/generate_test_data.py`` leaves ``test.raw.json`` and ``test.json`` beside ``0.json`` ...
    ``811.json``. The per-task files win: an aggregate supplies only the ids no per-task file has, so
    WebArena's folder loads as its script leaves it. The same id in two per-task files, or in two
    aggregates with different configs, is an error.
    """
    root = Path(directory)
    if not root.is_dir():
        raise TaskConfigError(f"tasks={str(root)!r} is not a directory; point env_kwargs.tasks at a folder of configs")
    singles: dict[int, WebArenaTask] = {}
    listed: dict[int, list[WebArenaTask]] = {}
    for path in sorted(root.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise TaskConfigError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from exc
        if isinstance(data, list):
            for item in data:
                task = WebArenaTask.from_json(item, source=f"{path}")
                listed.setdefault(task.task_id, []).append(task)
        else:
            task = WebArenaTask.from_json(data, source=f"{path}")
            if task.task_id in singles:
                raise TaskConfigError(
                    f"task_id {task.task_id} is in both {singles[task.task_id].source} and {task.source}; "
                    "remove one of the two files"
                )
            singles[task.task_id] = task
    # Aggregates (test.json, test.raw.json) only fill in ids that no per-task file has.
    tasks = dict(singles)
    for task_id, candidates in listed.items():
        if task_id in tasks:
            continue
        first = candidates[0]
        other = next((t for t in candidates[1:] if t.raw != first.raw), None)
        if other is not None:
            raise TaskConfigError(
                f"task_id {task_id} is in both {first.source} and {other.source} with different configs; keep one "
                f"of the two files (or add {task_id}.json, which takes precedence)"
            )
        tasks[task_id] = first
    if not tasks:
        raise TaskConfigError(f"no task configs (*.json) in {root}")
    return [tasks[task_id] for task_id in sorted(tasks)]


def site_urls(sites: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Base URL of each site: ``sites`` first, then WebArena's environment variables; trailing slashes dropped."""
    environ = os.environ if environ is None else environ
    urls = {name: environ[name.upper()] for name in SITE_PLACEHOLDERS if environ.get(name.upper())}
    for name, url in (sites or {}).items():
        if name not in SITE_PLACEHOLDERS:
            raise TaskConfigError(f"unknown site {name!r}; WebArena's sites are {', '.join(SITE_PLACEHOLDERS)}")
        urls[name] = str(url)
    return {name: url.rstrip("/") for name, url in urls.items()}


def fill_sites(text: str, urls: Mapping[str, str]) -> str:
    """``text`` with every ``__SITE__`` placeholder replaced by that site's URL; a missing site is an error."""
    for name, placeholder in SITE_PLACEHOLDERS.items():
        if placeholder in text:
            if name not in urls:
                raise TaskConfigError(
                    f"the task needs site {name!r} ({placeholder}) but no URL is set: pass env_kwargs.sites.{name}=URL "
                    f"or set {name.upper()}"
                )
            text = text.replace(placeholder, urls[name])
    leftover = _PLACEHOLDER.search(text)
    if leftover:
        raise TaskConfigError(f"unknown placeholder {leftover.group()} in {text!r}")
    return text


def fill_task(task: WebArenaTask, urls: Mapping[str, str]) -> WebArenaTask:
    """The task with placeholders replaced in its start URL and every string of its eval spec."""

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return fill_sites(value, urls) if "__" in value else value
        if isinstance(value, list):
            return [fill(v) for v in value]
        if isinstance(value, Mapping):
            return {k: fill(v) for k, v in value.items()}
        return value

    raw = fill(dict(task.raw))
    return WebArenaTask.from_json(raw, source=task.source)
