"""The horizon schedule inside OpenRLHF's vLLM actors, read at a step this process counts itself.

OpenRLHF 0.11.2 gives its agent executor no training step: ``SamplesGenerator``
calls ``LLMRayActor.generate_responses(prompt, label, sampling_params,
max_length, hf_tokenizer, num_samples, images)`` and that calls
``execute(...)`` with the same arguments, and the weight sync
(``broadcast_to_vllm``) carries no step either. So each vLLM actor counts the
episodes it starts: a rollout gives it about ``episodes_per_step`` of them (the
rollout's episodes over the vLLM engines), and episode ``i`` belongs to step
``i // episodes_per_step``. The count is approximate: OpenRLHF balances
prompts over engines by their load, and groups redrawn by dynamic filtering
add episodes, so an actor may reach the next round a little early; a resumed
run counts from step 0 again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agenthub import HorizonSchedule, get_plugin_host
from agenthub.rollout import build_horizon
from agenthub.training import EpisodeSteps

HorizonConfig = int | Mapping[str, Any]


def schedule(config: HorizonConfig) -> HorizonSchedule:
    """``N`` or ``{kind: stepwise, rounds: [...], every: K}`` (and plugins' kinds) as a schedule."""
    spec = config if isinstance(config, int) else dict(config)
    return build_horizon(spec, get_plugin_host().horizon)


def final_turns(config: HorizonConfig) -> int:
    """The limit the schedule ends at (the checks before launch measure the longest episodes)."""
    return schedule(config).max_turns(10**9)


RolloutSteps = EpisodeSteps
"""The training step of each episode this process starts, counted from its rollouts (see the module)."""
