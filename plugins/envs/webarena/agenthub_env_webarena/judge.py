"""The LLM judge behind ``fuzzy_match``: any OpenAI-compatible chat endpoint, with WebArena's prompts.

WebArena asks GPT-4 two questions (``llm_fuzzy_match`` and ``llm_ua_match`` in
its ``evaluation_harness/helper_functions.py``); the prompts and the reading of
the reply are the same here, the endpoint and model are the user's::

    env_kwargs.judge.base_url=http://127.0.0.1:8000/v1 env_kwargs.judge.model=NAME [env_kwargs.judge.api_key=...]

A reply that is none of the words WebArena looks for raises :class:`JudgeError`
rather than counting as a pass or a fail.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import httpx

SYSTEM = "You are a helpful assistant"


class JudgeError(RuntimeError):
    """The judge could not be asked, or its reply did not say correct/incorrect (or same/different)."""


def fuzzy_prompt(pred: str, reference: str, question: str) -> str:
    return (
        "Help a teacher to grade the answer of a student given a question. Keep in mind that the student may use "
        "different phrasing or wording to answer the question. The goal is to evaluate whether the answer is "
        "semantically equivalent to the reference answer.\n"
        f"question: {question}\n"
        f"reference answer: {reference}\n"
        "all the string 'N/A' that you see is a special sequence that means 'not achievable'\n"
        f"student answer: {pred}\n"
        "Conclude the judgement by correct/incorrect/partially correct."
    )


def ua_prompt(pred: str, reference: str, question: str) -> str:
    return (
        "A task described in Task_1 cannot be completed for reason listed in Reason_1. A person tried to complete "
        "the task and failed, he reported his attempt in Report_1, check if Report_1 is refering to Reason_1, even "
        "implicitly. If match, return same, else, return different\n"
        f"Task_1 = {question}\n"
        f"Reason_1 = {reference}\n"
        f"Report_1 = {pred}\n"
        "return [same] or [different]"
    )


@dataclass
class OpenAIJudge:
    """Asks ``model`` at ``base_url`` (``.../v1``) at temperature 0, as WebArena asks GPT-4."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout_s: float = 120.0
    max_tokens: int = 768

    @classmethod
    def from_settings(cls, settings: dict[str, Any] | None) -> OpenAIJudge | None:
        """The judge ``env_kwargs.judge`` configures, or None when it names no endpoint."""
        if not settings or not settings.get("base_url"):
            return None
        if not settings.get("model"):
            raise ValueError("env_kwargs.judge.model is missing: name the model the judge endpoint serves")
        key = settings.get("api_key") or os.environ.get("AGENTHUB_JUDGE_API_KEY")
        return cls(str(settings["base_url"]), str(settings["model"]), key, float(settings.get("timeout_s", 120.0)))

    def fuzzy_match(self, pred: str, reference: str, question: str) -> float:
        reply = self._ask(fuzzy_prompt(pred, reference, question))
        if "partially correct" in reply or "incorrect" in reply:
            return 0.0
        if "correct" in reply:
            return 1.0
        raise JudgeError(f"the judge's reply says neither correct nor incorrect: {reply[:200]!r}")

    def ua_match(self, pred: str, reference: str, question: str) -> float:
        reply = self._ask(ua_prompt(pred, reference, question))
        if "different" in reply:
            return 0.0
        if "same" in reply:
            return 1.0
        raise JudgeError(f"the judge's reply says neither same nor different: {reply[:200]!r}")

    def _ask(self, message: str) -> str:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = {
            "model": self.model,
            "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": message}],
            "temperature": 0,
            "top_p": 1.0,
            "max_tokens": self.max_tokens,
        }
        url = self.base_url.rstrip("/") + "/chat/completions"
        try:
            response = httpx.post(url, json=body, headers=headers, timeout=self.timeout_s)
        except httpx.HTTPError as exc:
            raise JudgeError(f"cannot reach the judge at {url}: {exc}; check env_kwargs.judge.base_url") from exc
        if response.status_code != 200:
            raise JudgeError(f"the judge at {url} answered {response.status_code}: {response.text[:200]}")
        try:
            return str(response.json()["choices"][0]["message"]["content"]).lower()
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise JudgeError(f"the judge at {url} sent no chat completion: {response.text[:200]}") from exc
