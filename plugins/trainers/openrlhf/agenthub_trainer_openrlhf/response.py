"""One hub-executor episode as the response dict OpenRLHF's agent executors return.

OpenRLHF 0.11 (``SamplesGenerator._process_response_into_experience``) reads:

* ``observation_tokens``: the whole token sequence, prompt first;
* ``action_ranges``: ``[start, end)`` spans of ``observation_tokens`` the policy sampled; only
  these get ``action_mask`` 1, so only they are trained on;
* ``rollout_log_probs``: one value per position of ``observation_tokens`` (the sampling logprob
  on sampled tokens, 0.0 elsewhere), or None when vLLM was not asked for logprobs;
* ``reward`` (the training reward), ``scores`` (what dynamic filtering compares), ``truncated``
  (the last turn hit its token limit: OpenRLHF's length penalties), ``extra_logs`` (logged).

An episode with nothing to train on (an infra failure: ``env_error``, ``agent_error``, ``timeout``;
or no sampled token at all) gets no action range, so its loss mask is all zero and OpenRLHF's
loss leaves the sequence out, and ``scores`` NaN: with ``--algo.dynamic_filtering_enable`` (which
``agenthub run`` always sets) NaN fails every range check, so OpenRLHF drops the episode's whole
group and draws a fresh prompt, and no made-up reward enters a group baseline.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from agenthub import Outcome, Trajectory


def action_ranges(mask: Sequence[int], offset: int) -> list[tuple[int, int]]:
    """The maximal runs of 1s in ``mask`` as ``[start, end)`` spans, shifted by ``offset``."""
    spans: list[tuple[int, int]] = []
    start: int | None = None
    for i, bit in enumerate([*mask, 0]):
        if bit and start is None:
            start = i
        elif not bit and start is not None:
            spans.append((offset + start, offset + i))
            start = None
    return spans


def has_training_signal(trajectory: Trajectory) -> bool:
    """A trainable outcome with at least one sampled token."""
    trace = trajectory.tokens
    return trajectory.trainable and trace is not None and any(trace.response_mask)


def openrlhf_response(
    trajectory: Trajectory,
    *,
    prompt: str,
    label: Any,
    images: Any,
    fallback_ids: Sequence[int],
    truncated: bool,
    with_logprobs: bool,
) -> dict[str, Any]:
    """The dict ``AgentExecutorBase.execute`` returns for ``trajectory``.

    ``fallback_ids`` (the dataset prompt's tokens) stand in for an episode that
    failed before its first observation; they are never trained on.
    """
    trace = trajectory.tokens
    usable = has_training_signal(trajectory)
    if usable:
        assert trace is not None
        tokens = [*trace.prompt_ids, *trace.response_ids]
        ranges = action_ranges(trace.response_mask, len(trace.prompt_ids))
        logprobs = [0.0] * len(trace.prompt_ids) + list(trace.logprobs) if with_logprobs else None
        reward: float = trajectory.reward
        score = trajectory.reward
    else:
        tokens = list(trace.prompt_ids) if trace is not None and trace.prompt_ids else list(fallback_ids)
        ranges = []
        logprobs = [0.0] * len(tokens) if with_logprobs else None
        reward, score = 0.0, math.nan
    return {
        "prompt": prompt,
        "label": label,
        "images": images,
        "mm_train_inputs": None,
        "observation_tokens": tokens,
        "action_ranges": ranges,
        "rollout_log_probs": logprobs,
        "reward": reward,
        "scores": score,
        "truncated": bool(truncated and usable),
        # The same keys for every episode: OpenRLHF needs them on all of a batch's samples.
        "extra_logs": {
            "agenthub_success": float(trajectory.outcome is Outcome.SUCCESS),
            "agenthub_turns": float(len(trajectory.turns)),
            "agenthub_infra_failure": float(not trajectory.trainable),
            "agenthub_attempts": float(trajectory.attempts),
        },
    }
