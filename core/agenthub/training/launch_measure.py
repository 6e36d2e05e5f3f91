"""What the checks before launch measure, single-player or seated: prompts over the split, actions, episodes.

* :func:`sample_tasks` and :func:`longest_prompt`: every task's first prompt
  (system prompt and first observation in the model's chat template), over the
  whole split or, for a split larger than :data:`PROMPT_SAMPLE`, that many tasks
  spread evenly over it: sessions are opened a few at a time on the env server;
* :func:`episode_fit`: an episode as one policy's context holds it, and the
  context it needs so that :class:`~agenthub.rollout.policy.TokenPolicy` can play
  every turn of it;
* :class:`CutActions`: the oracle, every action cut to what a model limited to
  ``max_tokens`` tokens could say.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agenthub.errors import ConfigError
from agenthub.protocols import Agent, AgentEpisode
from agenthub.rollout.token_assembly import ChatTemplateDeltas, TokenAssembler
from agenthub.service.client import EnvClient
from agenthub.types import AgentReply, EnvInfo, Observation, Task, TaskId, TaskList, Trajectory

PROMPT_SAMPLE = 512
"""First prompts measured at most: a split this size or smaller is measured whole (textcraft's 444 train tasks:
0.45 s of sessions and 0.56 s of tokenising on a loaded 2-core machine); a larger one (maze's 100,000 generated
tasks) by this many tasks spread evenly over it."""
TEMPLATE_MARGIN = 16
"""Tokens by which the chat template's joins may change an observation's count (a merge at each end): every
observation this close to the longest is rendered in the template and measured exactly."""
OPEN_AT_ONCE = 8
"""Sessions opened at a time while measuring prompts: a server's session cap is rarely below this."""


def encode(tokenizer: Any, text: str) -> list[int]:
    return [int(i) for i in tokenizer.encode(text, add_special_tokens=False)]


def action_text(action: Any) -> str | None:
    return action if isinstance(action, str) else None


def sample_tasks(listing: TaskList, limit: int = PROMPT_SAMPLE) -> list[TaskId]:
    """The split's task ids, all of them or ``limit`` spread evenly from its first to its last."""
    if listing.ids:
        ids: Sequence[TaskId] = listing.ids
    elif listing.start is not None and listing.stop is not None and listing.stop > listing.start:
        ids = range(listing.start, listing.stop)
    else:
        raise ConfigError(f"split {listing.split!r} has no tasks; choose another split (key split)")
    if len(ids) <= limit:
        return list(ids)
    return [ids[(len(ids) - 1) * k // (limit - 1)] for k in range(limit)]


@dataclass(frozen=True)
class PromptMeasure:
    """The longest first prompt over the measured tasks, and the first task's listed actions."""

    tokens: int
    task_id: TaskId
    measured: int
    listed_actions: Any


async def longest_prompt(
    client: EnvClient, ids: Sequence[TaskId], split: str, deltas: ChatTemplateDeltas, tokenizer: Any
) -> PromptMeasure:
    """Open a session on each task (a few at a time) for its first observation; the longest first prompt.

    The observations are tokenised in one batch, and only those within :data:`TEMPLATE_MARGIN` tokens of the
    longest are rendered in the chat template: the template adds the same tokens to every prompt, but
    rendering each one costs ten times more (3.6 s against 0.6 s for textcraft's 444 tasks).
    """
    gate = asyncio.Semaphore(OPEN_AT_ONCE)

    async def first_observation(task_id: TaskId) -> tuple[str, Any]:
        async with gate, await client.create_session(task_id, split=split) as session:
            return session.observation, session.info.get("available_actions")

    seen = await asyncio.gather(*(first_observation(task_id) for task_id in ids))
    texts = [text for text, _ in seen]
    counts = [len(i) for i in tokenizer(texts, add_special_tokens=False)["input_ids"]]
    top = max(counts)
    exact = {i: len(deltas.prompt(texts[i])) for i, n in enumerate(counts) if n >= top - TEMPLATE_MARGIN}
    # max() keeps the first of equals, so a split of equal prompts names its first task.
    index = max(exact, key=lambda i: (exact[i], -i))
    return PromptMeasure(exact[index], ids[index], len(ids), seen[0][1])


@dataclass(frozen=True)
class EpisodeFit:
    """An episode as one policy's context holds it."""

    tokens: int
    """All its tokens: prompt, every turn, every env answer between them."""
    response: int
    """Its tokens after the first prompt (what a split budget's ``response_length`` bounds)."""
    context: int
    """The least ``max_context`` with which TokenPolicy plays every turn of it: before each turn the policy keeps
    room for the action, its end-of-turn token and the template's close."""
    response_room: int
    """The same for a split budget's ``response_length``."""


def episode_fit(deltas: ChatTemplateDeltas, tokenizer: Any, full: Trajectory) -> EpisodeFit:
    """``full`` replayed through the token assembly, each action as the oracle said it plus an end-of-turn token."""
    assembler = TokenAssembler(deltas, full.first_observation, max_context=1 << 40)
    close = len(deltas.assistant_close)
    context = response = 0
    for i, turn in enumerate(full.turns):
        if i:
            assembler.add_env_turn(full.turns[i - 1].observation)
        sampled = [*encode(tokenizer, str(turn.action)), deltas.assistant_close[0]]
        context = max(context, len(assembler.trace) + len(sampled) + close)
        response = max(response, len(assembler.trace.response_ids) + len(sampled) + close)
        assembler.add_model_turn(sampled, None)
    trace = assembler.trace
    return EpisodeFit(
        len(trace), len(trace.response_ids), max(context, len(trace)), max(response, len(trace.response_ids))
    )


def spread(ids: Sequence[TaskId], count: int, first: TaskId) -> list[TaskId]:
    """``first`` and ``count - 1`` more of ``ids`` spread evenly: the tasks the oracle plays whole."""
    others = [t for t in ids if t != first]
    n = count - 1
    if len(others) > n:
        others = [others[len(others) * k // n] for k in range(n)]
    return [first, *others]


class CutActions:
    """The oracle, with every action cut to what a model limited to ``max_tokens`` tokens could say."""

    def __init__(self, agent: Agent, tokenizer: Any, max_tokens: int) -> None:
        self.agent = agent
        self.tokenizer = tokenizer
        self.max_tokens = max_tokens

    def start_episode(self, task: Task, env: EnvInfo) -> AgentEpisode:
        return _CutEpisode(self.agent.start_episode(task, env), self)


class _CutEpisode:
    def __init__(self, episode: AgentEpisode, cut: CutActions) -> None:
        self.episode = episode
        self.cut = cut

    async def act(self, observation: Observation) -> AgentReply:
        reply = await self.episode.act(observation)
        if not isinstance(reply.action, str):
            return reply  # a tool call is not text the model samples token by token here
        ids = encode(self.cut.tokenizer, reply.action)[: self.cut.max_tokens]
        # A model's reply goes through the same strip that TokenPolicy applies before the env sees it.
        text = self.cut.tokenizer.decode(ids, skip_special_tokens=True).strip()
        return AgentReply(action=text, text=text)


def oracle_agent(env: str) -> tuple[str, Agent] | None:
    """The env's registered oracle, built; None when the env has none installed here."""
    from agenthub.plugins import get_plugin_host

    host = get_plugin_host()
    if env not in host.envs.names():
        return None
    name = host.env(env).oracle
    if name is None or name not in host.agents.names():
        return None
    return name, host.agent(name).make()
