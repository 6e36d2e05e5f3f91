"""A hub-executor episode as swift's ``RolloutOutput``: what a server-mode ``run()`` returns.

The whole episode becomes one assistant message whose content swift replaces
with ``response_token_ids[0]`` when it encodes the sample for training:

* the prompt: ``[system, user: first observation]``, rendered by swift's template
  (the same chat template the tokens were sampled with; see the README);
* ``response_token_ids``: every sampled turn as sampled, with the env's answers
  between them in the model's chat template (``TokenTrace.response_ids``);
* ``response_loss_mask``: 1 on sampled tokens, 0 on env and template tokens;
* ``rollout_logprobs``: the sampling logprobs of the mask-1 tokens (swift aligns
  them with its completion mask), or none when the engine did not report them;
* ``rollout_infos``: ``agenthub_reward``, ``agenthub_outcome``, ``agenthub_trainable``,
  ``num_turns``, read by the ``agenthub_env_reward`` reward function.

An infra failure (env_error, agent_error, timeout) keeps its tokens with an
all-zero mask and no logprobs, so not one of its tokens is trained on, and
``agenthub_trainable: false`` makes the reward give it no advantage.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agenthub import Trajectory

Decode = Callable[[Sequence[int]], str]


def rollout_infos(trajectory: Trajectory) -> dict[str, Any]:
    """What the reward function and swift's logs read about an episode."""
    infos: dict[str, Any] = {
        "num_turns": len(trajectory.turns),
        "agenthub_reward": float(trajectory.reward),
        "agenthub_outcome": trajectory.outcome.value,
        "agenthub_trainable": trajectory.trainable,
        "agenthub_key": trajectory.key,
    }
    if trajectory.error:
        infos["agenthub_error"] = trajectory.error
    return infos


def prompt_messages(system_prompt: str | None, first_observation: str) -> list[dict[str, Any]]:
    head: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}] if system_prompt else []
    return [*head, {"role": "user", "content": first_observation}]


def trained_logprobs(trajectory: Trajectory) -> list[list[float]]:
    """Logprobs of the mask-1 tokens, if every model turn reported them; else none (no IS correction)."""
    trace = trajectory.tokens
    if trace is None or not trajectory.trainable or any(t.logprobs is None for t in trajectory.turns):
        return []
    return [[lp for lp, m in zip(trace.logprobs, trace.response_mask, strict=True) if m]]


def rollout_output(
    trajectory: Trajectory,
    *,
    system_prompt: str | None,
    fallback_messages: list[dict[str, Any]],
    decode: Decode,
    end_token_id: int,
    finish_reason: str | None = None,
) -> Any:
    """Swift's ``RolloutOutput`` for ``trajectory``.

    ``fallback_messages`` (the dataset's prompt) stand in when the episode has
    no tokens at all (it failed before the first model turn); it then carries
    one masked ``end_token_id`` so that swift can still encode the sample.
    """
    from swift.infer_engine.protocol import (
        ChatCompletionResponse,
        ChatCompletionResponseChoice,
        ChatMessage,
        RolloutOutput,
        UsageInfo,
    )

    trace = trajectory.tokens
    if trace is not None and trace.response_ids:
        head = prompt_messages(system_prompt, trajectory.first_observation)
        prompt, ids = trace.prompt_ids, list(trace.response_ids)
        mask = list(trace.response_mask) if trajectory.trainable else [0] * len(ids)
    else:
        head = [m for m in fallback_messages if m.get("role") != "assistant"]
        prompt, ids, mask = [], [end_token_id], [0]
    text = decode(ids)
    last_turn = trajectory.turns[-1].token_ids if trajectory.turns and trajectory.turns[-1].token_ids else []
    reason = "length" if finish_reason == "length" else "stop"  # swift's overlong filter reads "length"
    response = ChatCompletionResponse(
        model="agenthub",
        choices=[
            ChatCompletionResponseChoice(
                index=0,
                message=ChatMessage(role="assistant", content=text),
                finish_reason=reason,
                token_ids=list(last_turn),
            )
        ],
        usage=UsageInfo(prompt_tokens=len(prompt), completion_tokens=len(ids), total_tokens=len(prompt) + len(ids)),
    )
    return RolloutOutput(
        response=response,
        messages=[*head, {"role": "assistant", "content": text}],
        response_token_ids=[ids],
        response_loss_mask=[mask],
        rollout_logprobs=trained_logprobs(trajectory),
        rollout_infos=rollout_infos(trajectory),
    )
