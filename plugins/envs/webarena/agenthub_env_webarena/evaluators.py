"""WebArena's evaluators, with the semantics of its ``evaluation_harness/evaluators.py``.

- ``string_match`` scores the answer of the final ``stop [answer]`` against
  ``reference_answers``: ``exact_match`` (after WebArena's ``clean_answer``:
  strip, drop one pair of enclosing quotes, lower-case), ``must_include`` (each
  phrase a substring; a single-character reference, when it is the only one,
  must be a whole token, so that "0" is not found in "10"), and ``fuzzy_match``
  (an LLM judge; "N/A" references are matched exactly, then by the judge's
  unachievable-task check against ``string_note``).
- ``url_match`` compares the final page's URL with ``reference_url`` (several
  joined by `` |OR| ``) under the rule ``GOLD in PRED``: a reference's host and
  path, trailing slash dropped, equal to the page's, and every query parameter
  of the references present with one of their values.
- ``program_html`` visits each target (``url``: a URL, ``last`` for the final
  page, or ``func:helper(...)``), selects content with its ``locator`` (empty:
  the whole page; ``document...`` JavaScript; ``func:helper(...)``), and checks
  ``required_contents`` (``exact_match``, or ``must_include`` with `` |OR| ``
  alternatives).

The scores multiply, as in WebArena's ``EvaluatorComb``. Three deliberate
differences: ``func:`` calls are parsed (literal arguments, ``__last_url__``,
``__page__``) and looked up in a table of helpers rather than passed to
``eval``; ``last`` means the page the episode ended on even after an earlier
target navigated away (WebArena reads whatever page is open then); and a check
that cannot be run here (no judge configured, a helper
this deployment lacks) makes the verdict *not evaluated* (``score is None``)
with the reason, instead of a silent pass or fail, unless another check
already scored 0. WebArena tokenizes with NLTK's ``word_tokenize``; this uses
:mod:`.nltk_tokenize`, NLTK's tokenizers ported (Punkt without its downloaded English
model).
"""

from __future__ import annotations

import ast
import collections
import html
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agenthub_env_webarena.nltk_tokenize import word_tokenize
from agenthub_env_webarena.task_config import WebArenaTask


class Judge(Protocol):
    """What ``fuzzy_match`` needs: WebArena's two LLM checks, each 1.0 or 0.0."""

    def fuzzy_match(self, pred: str, reference: str, question: str) -> float: ...

    def ua_match(self, pred: str, reference: str, question: str) -> float: ...


class Page(Protocol):
    """The part of a browser page ``url_match`` and ``program_html`` use (a Playwright page has it)."""

    @property
    def url(self) -> str: ...

    def goto(self, url: str) -> Any: ...

    def evaluate(self, expression: str) -> Any: ...

    def content(self) -> str: ...


Helper = Callable[..., str]


class NotEvaluated(Exception):
    """A check that cannot be run in this deployment (no judge, a missing helper); the verdict says why."""


@dataclass
class Verdict:
    """The evaluation of one episode: ``score`` 1.0/0.0 (or a product), None when it could not be evaluated."""

    score: float | None
    checks: list[dict[str, Any]] = field(default_factory=list)

    @property
    def not_evaluated(self) -> list[str]:
        return [c["reason"] for c in self.checks if c["score"] is None]


def clean_answer(answer: str) -> str:
    answer = answer.strip()
    if len(answer) >= 2 and answer[0] == answer[-1] and answer[0] in "'\"":
        answer = answer[1:-1]
    return answer.lower()


def exact_match(ref: str, pred: str) -> float:
    return float(clean_answer(pred) == clean_answer(ref))


def must_include(ref: str, pred: str, *, tokenize: bool = False) -> float:
    clean_ref, clean_pred = clean_answer(ref), clean_answer(pred)
    # A one-character reference must be a whole token: "0" is not in "10" (WebArena's guard against false positives).
    if tokenize and len(clean_ref) == 1 and len(word_tokenize(clean_ref)) == 1:
        return float(clean_ref in word_tokenize(clean_pred))
    return float(clean_ref in clean_pred)


def string_match(task: WebArenaTask, answer: str, judge: Judge | None) -> tuple[float | None, list[dict[str, Any]]]:
    pred = clean_answer(answer)
    score: float = 1.0
    checks: list[dict[str, Any]] = []
    for approach, value in task.eval["reference_answers"].items():
        if approach == "exact_match":
            part = exact_match(str(value), pred)
            score *= part
            checks.append({"check": "exact_match", "score": part, "reference": value})
        elif approach == "must_include":
            values = list(value)
            for item in values:
                part = must_include(str(item), pred, tokenize=len(values) == 1)
                score *= part
                checks.append({"check": "must_include", "score": part, "reference": item})
        elif approach == "fuzzy_match":
            checks.extend(_fuzzy(task, value, pred, judge))
    return _combine(checks), checks


def _fuzzy(task: WebArenaTask, value: Any, pred: str, judge: Judge | None) -> list[dict[str, Any]]:
    if value == "N/A":
        if exact_match("N/A", pred) == 1.0:
            return [{"check": "fuzzy_match", "score": 1.0, "reference": "N/A"}]
        if judge is None:
            return [_missing_judge("ua_match")]
        note = str(task.eval.get("string_note", ""))
        return [{"check": "ua_match", "score": judge.ua_match(pred, note, task.intent), "reference": note}]
    checks = []
    for reference in list(value):
        if not pred:  # WebArena: the judge is not asked about a blank answer
            checks.append({"check": "fuzzy_match", "score": float(not reference), "reference": reference})
        elif judge is None:
            checks.append(_missing_judge("fuzzy_match"))
        else:
            part = judge.fuzzy_match(pred, str(reference), task.intent)
            checks.append({"check": "fuzzy_match", "score": part, "reference": reference})
    return checks


def _missing_judge(check: str) -> dict[str, Any]:
    return {
        "check": check,
        "score": None,
        "reason": f"{check} needs an LLM judge; set env_kwargs.judge.base_url (an OpenAI-compatible endpoint) "
        "and env_kwargs.judge.model",
    }


def clean_url(url: str) -> str:
    return str(url).rstrip("/")


def parse_url(url: str) -> tuple[str, dict[str, list[str]]]:
    # As WebArena: only the whole URL loses its trailing slash (clean_url), not the path before a query.
    parsed = urllib.parse.urlparse(url)
    return parsed.netloc + parsed.path, urllib.parse.parse_qs(parsed.query)


def url_match(task: WebArenaTask, page_url: str) -> float:
    rule = task.eval.get("url_note", "GOLD in PRED")
    if rule != "GOLD in PRED":
        raise ValueError(f"task {task.task_id}: unknown url_note {rule!r}; WebArena knows only 'GOLD in PRED'")
    references = [clean_url(u) for u in str(task.eval["reference_url"]).split(" |OR| ")]
    ref_paths: list[str] = []
    ref_queries: dict[str, set[str]] = collections.defaultdict(set)
    for reference in references:
        path, query = parse_url(reference)
        ref_paths.append(path)
        for key, values in query.items():
            ref_queries[key].update(values)
    pred_path, pred_query = parse_url(clean_url(page_url))
    # WebArena's `ref_base_path in pred_base_paths`, where the latter is one string: a substring test.
    score = float(any(path in pred_path for path in ref_paths))
    for key, wanted in ref_queries.items():
        score *= float(any(v in pred_query.get(key, []) for v in wanted))
    return score


def program_html(
    task: WebArenaTask, page: Page, helpers: Mapping[str, Helper] | None = None
) -> tuple[float | None, list[dict[str, Any]]]:
    helpers = {**DEFAULT_HELPERS, **(helpers or {})}
    checks: list[dict[str, Any]] = []
    last_url = page.url
    for target in task.eval["program_html"]:
        url = str(target["url"])
        locator = str(target.get("locator", ""))
        try:
            if url.startswith("func"):
                url = call_helper(url.split("func:", 1)[1].replace("__last_url__", last_url), helpers, page)
            if url != "last":
                page.goto(url)
            elif page.url != last_url:  # an earlier target navigated away: "last" is still the final page
                page.goto(last_url)
            selected = _select(page, locator, target, helpers)
        except NotEvaluated as exc:
            checks.append({"check": "program_html", "score": None, "reason": str(exc), "url": url})
            continue
        selected = html.unescape(selected)
        required = target["required_contents"]
        if "exact_match" in required:
            part = exact_match(str(required["exact_match"]), selected)
        elif "must_include" in required:
            part = 1.0
            for content in required["must_include"]:
                part *= float(any(must_include(alt, selected) for alt in str(content).split(" |OR| ")))
        else:
            raise ValueError(f"task {task.task_id}: required_contents needs exact_match or must_include")
        checks.append({"check": "program_html", "score": part, "url": url, "locator": locator})
    return _combine(checks), checks


def _select(page: Page, locator: str, target: Mapping[str, Any], helpers: Mapping[str, Helper]) -> str:
    if not locator.strip():
        return page.content()
    if locator.startswith(("document.", "[...document.")):
        for prep in target.get("prep_actions", []):
            try:
                page.evaluate(f"() => {prep}")
            except Exception:  # WebArena ignores a failed preparation step; the locator then decides
                break
        try:
            # str() as WebArena: a locator's 0 (selectedIndex) is "0", null is "None".
            return str(page.evaluate(f"() => {locator}"))
        except Exception:  # the page is not the expected one: nothing selected, as in WebArena
            return ""
    if locator.startswith("func:"):
        return call_helper(locator.split("func:", 1)[1], helpers, page)
    raise ValueError(f"unknown locator {locator!r}: use '', 'document....' JavaScript or 'func:helper(...)'")


def call_helper(call: str, helpers: Mapping[str, Helper], page: Page) -> str:
    """Run ``name(arg, ...)`` from a config: literal arguments, ``__page__`` for the page; no ``eval``."""
    try:
        node = ast.parse(call.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"func:{call} is not a helper call like name('arg')") from exc
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.keywords:
        raise ValueError(f"func:{call} is not a helper call like name('arg')")
    args: list[Any] = []
    for arg in node.args:
        if isinstance(arg, ast.Name) and arg.id in ("__page__", "page"):
            args.append(page)
        elif isinstance(arg, ast.Constant):
            args.append(arg.value)
        else:
            raise ValueError(f"func:{call}: arguments must be literals or __page__")
    helper = helpers.get(node.func.id)
    if helper is None:
        raise NotEvaluated(
            f"helper {node.func.id!r} is not available for this deployment; it has: {', '.join(sorted(helpers))}"
        )
    return str(helper(*args))


def reddit_get_post_url(url: str) -> str:
    """WebArena's helper: a post or comment URL ``/f/forum/id/...`` cut to the post's own URL."""
    parsed = urllib.parse.urlparse(url)
    parts = parsed.path.split("/")
    if len(parts) < 4 or parts[1] != "f":
        return url
    return f"{parsed.scheme}://{parsed.netloc}/f/{parts[2]}/{parts[3]}/"


DEFAULT_HELPERS: dict[str, Helper] = {"reddit_get_post_url": reddit_get_post_url}
"""Helpers that need nothing but their arguments; a deployment adds its site's (e.g. the latest order URL)."""


def _combine(checks: Sequence[Mapping[str, Any]]) -> float | None:
    """The product of the scores; None when a check could not run and none of the others scored 0."""
    score = 1.0
    missing = False
    for check in checks:
        if check["score"] is None:
            missing = True
        else:
            score *= float(check["score"])
    return 0.0 if score == 0.0 else (None if missing else score)


def evaluate(
    task: WebArenaTask,
    *,
    answer: str,
    page: Page | None,
    judge: Judge | None = None,
    helpers: Mapping[str, Helper] | None = None,
) -> Verdict:
    """Score an episode that ended with ``stop [answer]`` (``""`` if it never stopped) on ``page``."""
    checks: list[dict[str, Any]] = []
    for eval_type in task.eval_types:
        if eval_type == "string_match":
            checks.extend({"type": eval_type, **c} for c in string_match(task, answer, judge)[1])
        elif page is None:
            raise ValueError(f"task {task.task_id}: {eval_type} needs the final page")
        elif eval_type == "url_match":
            checks.append({"type": eval_type, "check": "url_match", "score": url_match(task, page.url)})
        else:
            checks.extend({"type": eval_type, **c} for c in program_html(task, page, helpers)[1])
    return Verdict(_combine(checks), checks)
