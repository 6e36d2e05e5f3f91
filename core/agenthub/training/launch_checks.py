"""Checks before launch: the env and the policy's token limits, played for real.

A trainer calls :func:`check_launch` before its framework starts (and on
``--dry-run``). It starts the env (or uses ``urls``), measures every task's first
prompt with the model's own tokenizer (the whole split, or :data:`PROMPT_SAMPLE`
tasks spread over a larger one), and plays the env's oracle:

* a single-player env (:mod:`launch_single`): the cut check on the split's
  first task (``max_tokens``), the rewards, and the oracle's episodes on the
  longest prompt's task and a few more;
* a multi-player env (:mod:`launch_seats`): the oracle on every seat, the cut
  oracle seat by seat.

Every limit that the longest prompt or the oracle's episodes do not fit
(``max_context`` or ``prompt_length``/``response_length``, ``max_tokens``, the
horizon) is refused together (:mod:`launch_fit`), and the report's ``advice``
names the values with which they all fit. The report types live in
:mod:`launch_report`; the measuring helpers in :mod:`launch_measure`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any

from agenthub.errors import ConfigError, EnvServerUnavailableError
from agenthub.rollout.token_assembly import ChatTemplateDeltas
from agenthub.service.client import EnvClient
from agenthub.training.launch_fit import check_fit
from agenthub.training.launch_measure import PROMPT_SAMPLE, longest_prompt, oracle_agent, sample_tasks
from agenthub.training.launch_report import Finding, LaunchRefused, LaunchReport, TokenLimits
from agenthub.training.launch_seats import check_seats
from agenthub.training.launch_single import ORACLE_SAMPLE, check_listed_actions, check_single
from agenthub.training.oracle_play import OraclePlay
from agenthub.types import Task

__all__ = [
    "CHECK_TIMEOUT_S",
    "ORACLE_SAMPLE",
    "PROMPT_SAMPLE",
    "REACH_TIMEOUT_S",
    "Finding",
    "LaunchRefused",
    "LaunchReport",
    "TokenLimits",
    "check_launch",
]

REACH_TIMEOUT_S = 15.0
CHECK_TIMEOUT_S = 300.0
"""Prompts and the oracle's episodes; an env slower than this is reported as not checked, never as refused."""


def check_launch(
    env: str,
    tokenizer: Any,
    limits: TokenLimits,
    *,
    split: str = "train",
    urls: Sequence[str] = (),
    token: str | None = None,
    server_overrides: Mapping[str, Any] | None = None,
    system_prompt: str | None = None,
    max_turns: int | None = None,
    dry_run: bool = False,
    timeout_s: float = CHECK_TIMEOUT_S,
) -> LaunchReport:
    """Measure ``env``'s split and its oracle against ``limits``; the caller decides when to refuse.

    ``tokenizer`` is the policy's Hugging Face tokenizer (``encode``, ``decode``
    and ``apply_chat_template``). ``max_turns`` is the most turns the run's
    horizon ever allows (default: the env's own limit). Without ``urls``, a
    local server of ``env`` is started for the checks and stopped after them. Env servers at ``urls`` that
    do not answer are refused, except in a ``dry_run``, which may be planning for servers not up yet.
    """
    if urls:
        try:
            check = _check(urls[0], env, tokenizer, limits, split, token, system_prompt, max_turns)
            return _run(check, timeout_s, env)
        except EnvServerUnavailableError as exc:
            if dry_run:
                return LaunchReport(env=env, skipped=f"the env server at {urls[0]} did not answer")
            raise ConfigError(f"the env server at {urls[0]} did not answer ({exc}); start it, or fix url=") from None
    from agenthub.plugins import get_plugin_host
    from agenthub.service.launcher import LocalServer

    get_plugin_host().env(env)  # an unknown env is refused here, in words, not by a server that exits
    settings = {**(server_overrides or {}), **({"token": token} if token else {})}
    with LocalServer(env, overrides=settings) as server:
        check = _check(server.url, env, tokenizer, limits, split, token, system_prompt, max_turns)
        return _run(check, timeout_s, env)


def _run(check: Coroutine[Any, Any, LaunchReport], timeout_s: float, env: str) -> LaunchReport:
    async def bounded() -> LaunchReport:
        try:
            async with asyncio.timeout(timeout_s):
                return await check
        except TimeoutError:
            return LaunchReport(env=env, skipped=f"the env took longer than {timeout_s:g}s to be measured")

    return asyncio.run(bounded())


async def _check(
    url: str,
    env: str,
    tokenizer: Any,
    limits: TokenLimits,
    split: str,
    token: str | None,
    system_prompt: str | None,
    max_turns: int | None,
) -> LaunchReport:
    async with EnvClient(url, token=token) as client:
        try:
            async with asyncio.timeout(REACH_TIMEOUT_S):
                info = await client.info()
        except TimeoutError:
            raise EnvServerUnavailableError(f"no answer from {url} within {REACH_TIMEOUT_S:g}s") from None
        if split not in info.splits:
            raise ConfigError(f"env {info.name!r} has no split {split!r}; it has: {', '.join(info.splits)} (key split)")
        ids = sample_tasks(await client.tasks(split))
        task = Task(env=info.name, task_id=ids[0], split=split)
        report = LaunchReport(env=info.name, task_id=task.task_id)
        deltas = ChatTemplateDeltas(tokenizer, system_prompt or info.instructions)
        prompt = await longest_prompt(client, ids, split, deltas, tokenizer)
        report.prompt_tokens, report.prompt_task, report.prompts_measured = (
            prompt.tokens,
            prompt.task_id,
            prompt.measured,
        )
        turns = max_turns or info.default_max_turns
        oracle = oracle_agent(info.name)
        if oracle is None:
            check_listed_actions(report, limits, tokenizer, prompt.listed_actions)
            check_fit(report, limits, deltas, [], turns, what="", end="won")
            return report
        name, agent = oracle
        report.played_with = f"the oracle {name!r}"
        play = OraclePlay(client, info, task, agent, report, limits, deltas, tokenizer, turns)
        if info.multi_player:
            report.multi_player = True
            report.played_with += f" on all {info.players} seats"
            await check_seats(play)
        else:
            await check_single(play, ids)
        return report
