"""A hub trajectory as verl's :class:`AgentLoopOutput`.

* ``prompt_ids``: system prompt (the env's instructions) and first observation, in the model's template;
* ``response_ids``: every model turn exactly as sampled, with the env's answers between them;
* ``response_mask``: 1 on sampled tokens, 0 on env and template tokens;
* ``response_logprobs``: the engine's logprobs, aligned with ``response_ids`` (0.0 where the mask is 0);
* ``reward_score``: the episode's env reward (verl puts it on the last response token);
* ``num_turns``: chat messages in the sequence (first observation, model turns, env turns between them).

Infrastructure failures (env_error, agent_error, timeout) are never trained on:
their ``response_mask`` is all zeros. verl leaves fully masked sequences out of
the policy loss in every ``loss_agg_mode`` (``agg_loss``: "exclude fully masked
sequences") and multiplies advantages by the mask, so the sample carries no
gradient. It still counts in its GRPO group's mean with reward 0; see the README.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agenthub import Trajectory
from verl.experimental.agent_loop import AgentLoopOutput

DROPPED_REWARD = 0.0
"""The reward of a sample that is not trained on: it has no gradient, but verl needs a number."""


@dataclass(frozen=True)
class Limits:
    """verl's padded shapes: ``rollout.prompt_length`` and ``rollout.response_length``."""

    prompt_length: int
    response_length: int
    pad_token_id: int


@dataclass
class EpisodeReport:
    """Why a sample is or is not trained on, for ``extra_fields`` and logs."""

    trainable: bool
    reason: str | None = None
    response_truncated: bool = False
    details: dict[str, Any] = field(default_factory=dict)


def message_count(turns: int) -> int:
    """verl's ``num_turns``: the first observation, each model turn, and the env turns between them."""
    return 1 + turns + max(turns - 1, 0)


def to_agent_loop_output(
    trajectory: Trajectory,
    limits: Limits,
    *,
    metrics: Mapping[str, Any] | None = None,
    engine_fields: Mapping[str, Any] | None = None,
    logprobs_missing: bool = False,
) -> tuple[AgentLoopOutput, EpisodeReport]:
    """``trajectory`` as verl wants it, and whether it is trained on."""
    trace = trajectory.tokens
    report = EpisodeReport(trainable=trajectory.trainable)
    if not trajectory.trainable:
        report.reason = trajectory.outcome.value
    if trace is not None and trace.response_ids:
        prompt, response = list(trace.prompt_ids), list(trace.response_ids)
        mask, logprobs = list(trace.response_mask), list(trace.logprobs)
    else:  # no model turn at all (the env failed at reset): one masked pad token, never trained
        prompt = list(trace.prompt_ids) if trace is not None and trace.prompt_ids else [limits.pad_token_id]
        response, mask, logprobs = [limits.pad_token_id], [0], [0.0]
        if report.trainable:
            report.trainable, report.reason = False, "no model turn"
    if len(prompt) > limits.prompt_length:
        # verl pads prompts to prompt_length and cannot hold a longer one: keep the shape, train nothing
        prompt = prompt[-limits.prompt_length :]
        report.trainable, report.reason = False, f"prompt longer than rollout.prompt_length={limits.prompt_length}"
    if len(response) > limits.response_length:
        # as verl's own loops do: the tail past response_length is cut; the kept tokens are exact
        keep = limits.response_length
        response, mask, logprobs = response[:keep], mask[:keep], logprobs[:keep]
        report.response_truncated = True
    if not report.trainable:
        mask = [0] * len(response)
    extra: dict[str, Any] = {
        **dict(engine_fields or {}),
        "turn_scores": [turn.reward for turn in trajectory.turns],
        "tool_rewards": [],
        "agenthub_outcome": trajectory.outcome.value,
        "agenthub_trainable": report.trainable,
        "agenthub_turns": len(trajectory.turns),
        "agenthub_attempts": trajectory.attempts,
        "agenthub_error": trajectory.error,
        "agenthub_task_id": trajectory.task.task_id,
    }
    output = AgentLoopOutput(
        prompt_ids=prompt,
        response_ids=response,
        response_mask=mask,
        response_logprobs=None if logprobs_missing else logprobs,
        reward_score=float(trajectory.reward) if report.trainable else DROPPED_REWARD,
        num_turns=message_count(len(trajectory.turns)),
        metrics=dict(metrics or {}),
        extra_fields=extra,
    )
    return output, report
