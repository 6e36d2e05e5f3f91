"""Running episodes for training: the public API of trainer plugins.

A trainer replaces its framework's rollout step with the hub executor:

* :class:`Executor`, :class:`EpisodeRequest`, :func:`episode_requests`: many episodes at
  once against a pool of env servers (:class:`EnvPool`); :func:`collect` runs them into a
  :class:`RunStore` with progress and resume (what ``agenthub eval`` runs); :data:`TurnCallback`
  is what ``Executor(on_turn=...)`` and :func:`play_episode` call as each turn is played, for
  every seat of a multi-player env too;
* :class:`TokenPolicy` and its :class:`SamplingParams`, :class:`Generation`: a framework's
  ``generate(prompt_ids, sampling)`` as an agent whose turns keep their exact token ids;
  :func:`inject_generation_fault` (a :data:`GenerationFault`): a test's seam to corrupt every engine answer;
  :func:`render`, :class:`ChatTemplateDeltas` and :class:`Message` tokenize chats the same way;
* :class:`RunStore`: the run directory (config, trajectories, metrics) that resume reads;
* :func:`build_horizon`, :class:`FixedHorizon`: turn-limit schedules (``horizon.*``);
* :func:`terminal_outcome`: the one rule for how an episode the env ended came out
  (``info["won"]`` when given, else reward > 0; ``env_error`` when ``info["not_evaluated"]``
  says the env could not score it, :func:`not_evaluated` its reason), for a trainer that steps
  sessions itself;
  :func:`env_failure` and :class:`EpisodeFailure`: the one rule for how a failed env call
  ends it (``env_error``, ``timeout`` or ``agent_error``, and whether a fresh session may help).

Every name loads on first use, so importing this package costs nothing. The modules
behind it are private: import from ``agenthub.rollout``, not ``agenthub.rollout.policy``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthub.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from agenthub.rollout.collect import EpisodeSource, collect
    from agenthub.rollout.episode_loop import (
        EpisodeFailure,
        TurnCallback,
        env_failure,
        not_evaluated,
        play_episode,
        terminal_outcome,
    )
    from agenthub.rollout.executor import EpisodeRequest, Executor, episode_requests
    from agenthub.rollout.horizon import FixedHorizon, LinearHorizon, StepwiseHorizon, build_horizon
    from agenthub.rollout.policy import (
        GenerateFn,
        Generation,
        GenerationError,
        GenerationFault,
        SamplingParams,
        TokenEpisode,
        TokenPolicy,
        call_generate,
        inject_generation_fault,
    )
    from agenthub.rollout.pool import EnvPool, NoHealthyEndpointError
    from agenthub.rollout.progress import RunSummary
    from agenthub.rollout.store import CONFIG_FILE, RunStore, RunStoreError, new_run_id
    from agenthub.rollout.token_assembly import (
        ChatTemplateDeltas,
        ChatTokenizer,
        ContextLengthExceeded,
        Message,
        render,
    )

__getattr__ = lazy_exports(
    __name__,
    {
        "EpisodeSource": ".collect",
        "collect": ".collect",
        "EpisodeFailure": ".episode_loop",
        "TurnCallback": ".episode_loop",
        "env_failure": ".episode_loop",
        "not_evaluated": ".episode_loop",
        "play_episode": ".episode_loop",
        "terminal_outcome": ".episode_loop",
        "EpisodeRequest": ".executor",
        "Executor": ".executor",
        "episode_requests": ".executor",
        "FixedHorizon": ".horizon",
        "LinearHorizon": ".horizon",
        "StepwiseHorizon": ".horizon",
        "build_horizon": ".horizon",
        "GenerateFn": ".policy",
        "Generation": ".policy",
        "GenerationError": ".policy",
        "GenerationFault": ".policy",
        "SamplingParams": ".policy",
        "TokenEpisode": ".policy",
        "TokenPolicy": ".policy",
        "call_generate": ".policy",
        "inject_generation_fault": ".policy",
        "EnvPool": ".pool",
        "NoHealthyEndpointError": ".pool",
        "RunSummary": ".progress",
        "CONFIG_FILE": ".store",
        "RunStore": ".store",
        "RunStoreError": ".store",
        "new_run_id": ".store",
        "ChatTemplateDeltas": ".token_assembly",
        "ChatTokenizer": ".token_assembly",
        "ContextLengthExceeded": ".token_assembly",
        "Message": ".token_assembly",
        "render": ".token_assembly",
    },
)

__all__ = [
    "CONFIG_FILE",
    "ChatTemplateDeltas",
    "ChatTokenizer",
    "ContextLengthExceeded",
    "EnvPool",
    "EpisodeFailure",
    "EpisodeRequest",
    "EpisodeSource",
    "Executor",
    "FixedHorizon",
    "GenerateFn",
    "Generation",
    "GenerationError",
    "GenerationFault",
    "LinearHorizon",
    "Message",
    "NoHealthyEndpointError",
    "RunStore",
    "RunStoreError",
    "RunSummary",
    "SamplingParams",
    "StepwiseHorizon",
    "TokenEpisode",
    "TokenPolicy",
    "TurnCallback",
    "build_horizon",
    "call_generate",
    "collect",
    "env_failure",
    "episode_requests",
    "inject_generation_fault",
    "new_run_id",
    "not_evaluated",
    "play_episode",
    "render",
    "terminal_outcome",
]
