"""The checks before launch of a single-player env: the oracle's actions, rewards and episodes.

The oracle plays the split's first task, the task with the longest first prompt
and a few more spread over the split. The task where it says its longest action
is played again with every action cut to ``max_tokens`` tokens (what a model
limited to that many tokens could say): if the cut episode scores less,
``max_tokens`` cannot hold the env's actions (without an oracle, the longest of
the env's ``available_actions`` is the measure). Every step's reward must be a
finite number, and the first task's won episode must earn a reward above zero.
The won episodes are measured against the context and the horizon
(:mod:`launch_fit`).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any

from agenthub.rollout.episode_loop import play_episode
from agenthub.training.launch_fit import PlayedEpisode, check_fit
from agenthub.training.launch_measure import CutActions, action_text, encode, episode_fit, spread
from agenthub.training.launch_report import Finding, LaunchReport, TokenLimits
from agenthub.training.oracle_play import OraclePlay
from agenthub.types import EnvInfo, Outcome, TaskId, Trajectory

ORACLE_SAMPLE = 8
"""Tasks the oracle plays whole to measure episodes: the longest prompt's, and the rest spread over the split."""


async def check_single(play: OraclePlay, ids: Sequence[TaskId]) -> None:
    """The oracle on ``task`` and a sample of ``ids``; the cut check on its longest action's task; the limits."""
    client, info, task, oracle, report = play.client, play.info, play.task, play.oracle, play.report
    limits, deltas, tokenizer = play.limits, play.deltas, play.tokenizer
    first = report.prompt_task if report.prompt_task is not None else ids[0]
    chosen = [t for t in spread(ids, ORACLE_SAMPLE, first) if t != task.task_id]
    played = [
        await play_episode(client, oracle, task, env_info=info),
        *await asyncio.gather(
            *(play_episode(client, oracle, task.model_copy(update={"task_id": t}), env_info=info) for t in chosen)
        ),
    ]
    # The cut check plays the task whose oracle says the longest action (the first task when none is longer).
    full = max(played, key=lambda t: max((_tokens(tokenizer, turn.action) for turn in t.turns), default=0))
    cut = await play_episode(client, CutActions(oracle, tokenizer, limits.max_tokens), full.task, env_info=info)
    check_actions(report, limits, tokenizer, full, cut)
    check_rewards(report, played, info)
    won = [
        PlayedEpisode(t.task.task_id, episode_fit(deltas, tokenizer, t), len(t.turns), _first_reward(t))
        for t in played
        if t.outcome is Outcome.SUCCESS and all(isinstance(turn.action, str) for turn in t.turns)
    ]
    check_fit(report, limits, deltas, won, play.max_turns, what="the oracle's winning episode", end="won")


def _first_reward(trajectory: Trajectory) -> int:
    """The turns after which ``trajectory`` has earned a reward above zero (its length when it never has)."""
    total = 0.0
    for n, turn in enumerate(trajectory.turns, 1):
        total += turn.reward
        if total > 0:
            return n
    return len(trajectory.turns)


def _tokens(tokenizer: Any, action: Any) -> int:
    text = action_text(action)
    return len(encode(tokenizer, text)) if text else 0


def check_actions(report: LaunchReport, limits: TokenLimits, tokenizer: Any, full: Trajectory, cut: Trajectory) -> None:
    lengths = [(len(encode(tokenizer, text)), text) for t in full.turns if (text := action_text(t.action))]
    if not lengths:
        return
    report.action_tokens, report.longest_action = max(lengths)
    report.action_task = full.task.task_id
    report.oracle_outcome, report.cut_outcome = full.outcome.value, cut.outcome.value
    if cut.reward >= full.reward and (cut.outcome is Outcome.SUCCESS or full.outcome is not Outcome.SUCCESS):
        return  # what a model limited to max_tokens can say is enough for what the oracle did
    report.findings.append(
        Finding(
            limits.max_tokens_key,
            f"{limits.max_tokens_key}={limits.max_tokens} cannot hold the env's actions: the oracle's actions take up "
            f"to {report.action_tokens} tokens ({report.longest_action!r}) with this model's tokenizer, and cut to "
            f"{limits.max_tokens} token(s) the oracle's episode on task {full.task.task_id} ends {cut.outcome.value} "
            f"with reward {cut.reward:g} "
            f"instead of {full.outcome.value} with {full.reward:g}. Set {limits.max_tokens_key}>="
            f"{report.action_tokens} (more if the model thinks before it acts)",
            refuse=True,
        )
    )


def check_listed_actions(report: LaunchReport, limits: TokenLimits, tokenizer: Any, listed: Any) -> None:
    """Without an oracle: the longest of the env's ``available_actions`` against ``max_tokens``."""
    actions = [a for a in listed if isinstance(a, str)] if isinstance(listed, list) else []
    if not actions:
        report.findings.append(
            Finding(
                limits.max_tokens_key,
                "not measured: the env has no oracle installed here and lists no available_actions",
                refuse=False,
            )
        )
        return
    report.action_tokens, report.longest_action = max((len(encode(tokenizer, a)), a) for a in actions)
    if report.action_tokens > limits.max_tokens:
        report.findings.append(
            Finding(
                limits.max_tokens_key,
                f"{limits.max_tokens_key}={limits.max_tokens} cannot hold the env's actions: its available actions "
                f"take up to {report.action_tokens} tokens ({report.longest_action!r}) with this model's tokenizer. "
                f"Set {limits.max_tokens_key}>={report.action_tokens}",
                refuse=True,
            )
        )


def check_rewards(report: LaunchReport, played: Sequence[Trajectory], info: EnvInfo) -> None:
    """Every reward a finite number; the first task's won episode (``played[0]``) earns a reward above zero."""
    bad = [turn.reward for t in played for turn in t.turns if not math.isfinite(turn.reward)]
    full = played[0]
    if bad:
        report.findings.append(not_finite(info, bad))
    elif full.outcome is Outcome.SUCCESS and full.reward <= 0:
        report.findings.append(
            Finding(
                "env",
                f"the oracle won task {report.task_id} of env {info.name!r} and earned a total reward of "
                f"{full.reward:g}: rewards are missing, so every episode would score alike and there is nothing to "
                "learn. Use env settings (env_kwargs) that reward success, or another env",
                refuse=True,
            )
        )


def not_finite(info: EnvInfo, bad: Sequence[float]) -> Finding:
    return Finding(
        "env",
        f"env {info.name!r} answered rewards that are not finite numbers ({list(bad)[:3]}); training needs a "
        "number at every step. Fix the env (or its env_kwargs) before training on it",
        refuse=True,
    )
