"""AReaL's inference engine as the hub executor's token-in/token-out ``generate``.

Every model turn of an episode is one ``engine.agenerate(ModelRequest(...))``
with the episode's whole context as ``input_ids``; the sampled
``output_tokens`` and ``output_logprobs`` go into the trace as they are.
AReaL also says, per token, which weight version sampled it
(``output_versions``: a generation interrupted by a weight update continues
on the new weights); the trace has no place for that, so each episode keeps
a log of its generations, from which the workflow rebuilds the per-token
versions.

The engine and the log belong to one ``arun_episode`` call: they travel in a
context variable, so one :class:`~agenthub.rollout.policy.TokenPolicy` (and
one executor) serves every episode a rollout worker runs at once.
"""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agenthub import EnvInfo, Task
from agenthub.rollout import Generation, GenerationError, SamplingParams, TokenEpisode, TokenPolicy

from agenthub_trainer_areal.errors import ArealAdapterError


@dataclass
class Sampled:
    """One model turn as AReaL returned it."""

    input_len: int
    tokens: list[int]
    logprobs: list[float]
    versions: list[int]
    stop_reason: str


@dataclass
class EpisodeGenerations:
    """The engine one episode generates with, and what it generated in its current attempt.

    ``rid`` is AReaL's request id: one per episode, so that every turn goes to
    the same inference server and reuses its prefix cache.
    """

    engine: Any
    gconfig: Any
    rid: str = field(default_factory=lambda: uuid.uuid4().hex)
    turns: list[Sampled] = field(default_factory=list)

    def start_attempt(self) -> None:
        """A retry on a fresh session starts the episode over: its earlier turns are not in the trace."""
        self.turns.clear()

    def token_versions(self, response_mask: Sequence[int]) -> list[int]:
        """Per response token: the weight version that sampled it, -1 on env and template tokens."""
        sampled = [v for turn in self.turns for v in turn.versions]
        if len(sampled) != sum(response_mask):
            raise ArealAdapterError(
                f"the trace has {sum(response_mask)} sampled tokens but the engine returned {len(sampled)} in "
                "this attempt; the token log and the trace disagree (a bug in the adapter, please report it)"
            )
        versions = iter(sampled)
        return [next(versions) if m else -1 for m in response_mask]


_current: contextvars.ContextVar[EpisodeGenerations] = contextvars.ContextVar("agenthub_areal_episode")


def bind_episode(episode: EpisodeGenerations) -> contextvars.Token[EpisodeGenerations]:
    """Make ``episode`` the one that ``generate`` calls in this context belong to."""
    return _current.set(episode)


def unbind_episode(token: contextvars.Token[EpisodeGenerations]) -> None:
    _current.reset(token)


def current_episode() -> EpisodeGenerations:
    try:
        return _current.get()
    except LookupError:
        raise ArealAdapterError(
            "generate() was called outside HubWorkflow.arun_episode, so there is no AReaL engine to sample "
            "with; run episodes through HubWorkflow.arun_episode(engine, data)"
        ) from None


class ArealGenerate:
    """``generate(prompt_ids, sampling)`` over the engine of the episode being run.

    ``sampling.max_tokens`` (the room left in the episode's context) caps
    ``max_new_tokens``; every other sampling setting is AReaL's ``gconfig``.
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    async def __call__(self, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        from areal.api.io_struct import ModelRequest

        episode = current_episode()
        gconfig = episode.gconfig.new(
            n_samples=1, max_new_tokens=min(episode.gconfig.max_new_tokens, sampling.max_tokens)
        )
        request = ModelRequest(rid=episode.rid, input_ids=list(prompt_ids), gconfig=gconfig, tokenizer=self.tokenizer)
        response = await episode.engine.agenerate(request)
        tokens = [int(t) for t in response.output_tokens]
        logprobs = [float(x) for x in response.output_logprobs]
        versions = [int(v) for v in response.output_versions]
        if not len(tokens) == len(logprobs) == len(versions):
            raise GenerationError(
                f"AReaL's engine returned {len(tokens)} output_tokens, {len(logprobs)} output_logprobs and "
                f"{len(versions)} output_versions; they must align (is the inference server returning logprobs?)"
            )
        episode.turns.append(Sampled(len(prompt_ids), tokens, logprobs, versions, str(response.stop_reason)))
        return Generation(tokens, logprobs, str(response.stop_reason))


class ArealTokenPolicy(TokenPolicy):
    """A :class:`TokenPolicy` that tells the episode's generation log when an attempt starts."""

    def start_episode(self, task: Task, env: EnvInfo) -> TokenEpisode:
        current_episode().start_attempt()
        return super().start_episode(task, env)
