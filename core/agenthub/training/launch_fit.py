"""Whether the run's limits hold what was measured: the split's longest prompt and the oracle's episodes.

A run whose context cannot hold the oracle's episodes cannot score on such
tasks, and one whose horizon stops before any of the oracle's episodes earns a
reward cannot score at all: every limit that must change is refused together,
and :attr:`LaunchReport.advice` holds the values with which they all fit. A
horizon that cuts off only some of the oracle's episodes (a curriculum's short
first rounds) is a warning, and the context is then measured against the
episodes that horizon lets be won. The rule: each of the oracle's actions is counted as it
said it, plus an end-of-turn token and the chat template's close, and before
each turn the policy must have room for it (exactly what
:class:`~agenthub.rollout.policy.TokenPolicy` keeps).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agenthub.rollout.token_assembly import ChatTemplateDeltas
from agenthub.training.launch_measure import EpisodeFit
from agenthub.training.launch_report import Finding, LaunchReport, TokenLimits
from agenthub.types import TaskId


@dataclass(frozen=True)
class PlayedEpisode:
    """One of the oracle's episodes that ended as it should (won; a seated game finished)."""

    task_id: TaskId | None
    fit: EpisodeFit
    turns: int
    first_reward: int
    """The turns (as the horizon counts them) after which the episode has earned a reward above zero."""


def check_fit(
    report: LaunchReport,
    limits: TokenLimits,
    deltas: ChatTemplateDeltas,
    episodes: Sequence[PlayedEpisode],
    max_turns: int,
    *,
    what: str,
    end: str,
) -> None:
    """Refuse each limit too small for the longest prompt or for an episode in ``episodes``; fill the advice."""
    close = len(deltas.assistant_close)
    prompt = report.prompt_tokens or 0
    tokens = limits.max_tokens
    if report.action_tokens and any(f.key == limits.max_tokens_key for f in report.problems):
        tokens = max(tokens, report.action_tokens)
        report.advice[limits.max_tokens_key] = tokens
    # The horizon is refused only when no measured episode earns a reward within it (a curriculum's short
    # horizon still pays on short tasks); the context must then hold every episode the horizon lets be won.
    most = max(episodes, key=lambda e: e.turns, default=None)
    scores = any(e.first_reward <= max_turns for e in episodes)
    horizon = max_turns if scores or most is None else most.turns
    longest = max((e for e in episodes if e.turns <= horizon), key=lambda e: e.fit.context, default=None)
    if longest is not None:
        report.episode_tokens, report.oracle_turns = longest.fit.tokens, longest.turns
        report.episode_task = longest.task_id
    prompt_what = (
        f"the first prompt of task {report.prompt_task} (the longest of the {report.prompts_measured or 1} tasks "
        f"measured; system prompt and first observation in the model's chat template) is {prompt} tokens"
    )
    episode_what = (
        ""
        if longest is None
        else f"{what} (task {longest.task_id}, longest of {len(episodes)} played) takes {longest.fit.tokens} tokens "
        f"over {longest.turns} turns and needs {longest.fit.context} to be played (each action as the oracle said "
        "it, with its end-of-turn token and the template's close)"
    )
    if limits.max_context is not None:
        first_turn = prompt + tokens + close
        need = max(first_turn, longest.fit.context if longest else 0)
        positions = limits.model_positions
        if positions is not None and need > positions:
            told = (
                f"{prompt_what}, {first_turn} with one model turn of {limits.max_tokens_key}={tokens}"
                f"{'; ' + episode_what if episode_what else ''}"
            )
            _refuse_past_the_model(report, limits, positions, told, need, first_turn, episodes, horizon, end)
        elif need > limits.max_context:
            why = (
                "so episodes on such tasks would end before their first turn"
                if first_turn > limits.max_context
                else f"so episodes like it end truncated before they can be {end}"
            )
            told = f"{prompt_what}, {first_turn} with one model turn of {limits.max_tokens_key}={tokens}"
            _refuse_context(
                report,
                limits.max_context_key,
                need,
                f"{told}{'; ' + episode_what if episode_what else ''}: more than {limits.max_context_key}="
                f"{limits.max_context}, {why}.",
            )
    if limits.max_prompt is not None and prompt > limits.max_prompt:
        told = f"{prompt_what}, more than {limits.max_prompt_key}={limits.max_prompt}."
        _refuse_context(report, limits.max_prompt_key, prompt, told)
    if limits.max_response is not None:
        need = max(tokens + close, longest.fit.response_room if longest else 0)
        if need > limits.max_response:
            told = (
                f"{what} (task {longest.task_id}) needs {longest.fit.response_room} tokens after the prompt"
                if longest is not None and longest.fit.response_room > tokens + close
                else f"one model turn of {limits.max_tokens_key}={tokens} needs {tokens + close}"
            )
            _refuse_context(
                report,
                limits.max_response_key,
                need,
                f"{told}, more than {limits.max_response_key}={limits.max_response}: it does not fit.",
                f" (or lower {limits.max_tokens_key} if a turn alone is the cause)",
            )
    if most is not None and most.turns > max_turns:
        told = (
            f"the oracle needs {most.turns} turns on task {most.task_id} but the run allows at most {max_turns}: "
            f"such tasks cannot be {end}"
        )
        if limits.horizon_key in report.advice:
            pass  # refused above with the horizon whose episodes fit the model, and some of them score
        elif scores:
            report.findings.append(
                Finding(
                    limits.horizon_key,
                    f"{told}. Raise {limits.horizon_key} to {most.turns} if that is not intended",
                    refuse=False,
                )
            )
        else:
            report.findings.append(
                Finding(
                    limits.horizon_key,
                    f"{told}, and none of the {len(episodes)} episodes of the oracle measured earns a reward within "
                    f"{max_turns} turns, so the run could not score. Set {limits.horizon_key}={most.turns} or more "
                    f"(a schedule must reach {most.turns} turns)",
                    refuse=True,
                )
            )
            report.advice[limits.horizon_key] = most.turns


def _refuse_past_the_model(
    report: LaunchReport,
    limits: TokenLimits,
    positions: int,
    told: str,
    need: int,
    first_turn: int,
    episodes: Sequence[PlayedEpisode],
    horizon: int,
    end: str,
) -> None:
    """Refuse a context that the model itself cannot read, advising the longest horizon whose episodes fit it."""
    key = limits.max_context_key
    told = (
        f"{told}: more than the {positions} positions the model reads (its max_position_embeddings), so no {key} "
        "holds it."
    )
    # The longest horizon whose winnable episodes all fit the model, if one of them still earns a reward.
    fitting = None
    if first_turn <= positions:
        for turns in sorted({e.turns for e in episodes if e.turns <= horizon}, reverse=True):
            within = [e for e in episodes if e.turns <= turns]
            if all(e.fit.context <= positions for e in within) and any(e.first_reward <= turns for e in within):
                fitting = (turns, max([first_turn, *(e.fit.context for e in within)]), len(within))
                break
    longer_model = (
        f"a model that reads {need} positions (the built-in tiny model: tiny_model.max_position_embeddings={need})"
    )
    if fitting is None:
        advice = f"Use {longer_model}"
        if first_turn > positions:
            advice += f", or lower {limits.max_tokens_key} if a turn alone is the cause"
        report.findings.append(Finding(key, f"{told} {advice}", refuse=True))
    else:
        turns, context, count = fitting
        report.findings.append(
            Finding(
                key,
                f"{told} Set {limits.horizon_key}={turns} and {key} between {context} and {positions}: the "
                f"{count} of the oracle's {len(episodes)} measured episodes that take at most {turns} turns fit, and "
                f"the longer tasks cannot be {end}; or use {longer_model}",
                refuse=True,
            )
        )
        report.advice[limits.horizon_key] = turns
        report.advice[key] = context
    report.context_refused = True


def _refuse_context(report: LaunchReport, key: str, need: int, told: str, after: str = "") -> None:
    """Refuse context limit ``key`` (``told``: what does not fit, as a sentence), advising ``key=need``."""
    report.findings.append(Finding(key, f"{told} Set {key}>={need}{after}", refuse=True))
    report.advice[key] = need
    report.context_refused = True
