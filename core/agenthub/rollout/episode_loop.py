"""The one loop that plays an episode on an env session, and the one rule for how it came out.

``agenthub play`` (:func:`play_episode`), the :class:`~agenthub.rollout.executor.Executor` (so
``agenthub eval``, the Ray backend and every trainer that rolls out through it) and the
benchmarks all play turns here, so an episode ends the same way whichever path ran it: the
env ends it (:func:`terminal_outcome`), the horizon or the policy's context is reached
(``truncated``), the agent fails (``agent_error``), or the env server fails (``env_error`` or
``timeout``; the executor retries those on a fresh session).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from typing import Any

from agenthub._version import __version__
from agenthub.errors import EnvServerUnavailableError, EnvServiceError
from agenthub.protocols import Agent, AgentEpisode
from agenthub.rollout.token_assembly import ContextLengthExceeded
from agenthub.service.client import EnvClient, RemoteSession
from agenthub.types import (
    PROTOCOL_VERSION,
    AgentReply,
    EnvInfo,
    Observation,
    Outcome,
    Task,
    TaskId,
    TokenTrace,
    Trajectory,
    Turn,
)

TurnCallback = Callable[[int, Turn], None]
"""``on_turn(turn_number, turn)``, called as each turn is played."""

StartCallback = Callable[[TaskId | None, str], None]
"""``on_start(task_id, first_observation)``, called once the env session exists."""


def not_evaluated(info: Mapping[str, Any]) -> str | None:
    """Why the env could not score the episode it ended (its ``info["not_evaluated"]``), or None."""
    reasons = info.get("not_evaluated")
    if not reasons:
        return None
    said = "; ".join(str(r) for r in reasons) if isinstance(reasons, list | tuple) else str(reasons)
    return f"the env could not score this episode: {said}"


def terminal_outcome(reward: float, info: Mapping[str, Any]) -> Outcome:
    """How an episode the env ended (``terminated``) came out: ``env_error`` when the env says it could
    not score it (``info["not_evaluated"]``: neither won nor lost, so neither trained on nor counted),
    else ``info["won"]`` when the env says, else whether the last step's reward is positive."""
    if not_evaluated(info) is not None:
        return Outcome.ENV_ERROR
    won = info.get("won")
    success = bool(won) if won is not None else reward > 0
    return Outcome.SUCCESS if success else Outcome.FAILURE


class EpisodeFailure(Exception):
    """Ends an episode with an infra ``outcome``; ``retry`` says whether a fresh session may help."""

    def __init__(self, outcome: Outcome, message: str, *, retry: bool) -> None:
        super().__init__(message)
        self.outcome = outcome
        self.retry = retry


def env_failure(exc: EnvServiceError | EnvServerUnavailableError, *, during: str) -> EpisodeFailure:
    """What a failed env call means for the episode: a bad action is the agent's, the rest the env's.

    ``during`` names the call in the message; a call named ``"step..."`` (``"step of seat 1"``)
    sent an action, so its 400/413/422 blames the action."""
    if isinstance(exc, EnvServerUnavailableError):
        return EpisodeFailure(Outcome.ENV_ERROR, f"{during}: {exc}", retry=True)
    if exc.status == 504:
        return EpisodeFailure(Outcome.TIMEOUT, f"{during}: {exc}", retry=True)
    if exc.status >= 500 or exc.status in (404, 409, 429, 503):  # crashed, restarted, expired, busy
        return EpisodeFailure(Outcome.ENV_ERROR, f"{during}: {exc}", retry=True)
    if exc.status in (401, 403):  # the run's token, not the action: a fresh session is refused the same way
        return EpisodeFailure(Outcome.ENV_ERROR, f"{during}: {exc}", retry=False)
    if during.startswith("step"):  # 400/413/422 on a step: the action itself was malformed
        return EpisodeFailure(Outcome.AGENT_ERROR, f"the env rejected the action: {exc}", retry=False)
    return EpisodeFailure(Outcome.ENV_ERROR, f"{during}: {exc}", retry=False)


def episode_provenance(
    info: EnvInfo, task: Task, task_id: TaskId | None, max_turns: int, endpoint: str, extra: Mapping[str, Any]
) -> dict[str, Any]:
    """What a trajectory records of where it was played: versions, the task, the horizon, the server."""
    return {
        "agenthub_version": __version__,
        "protocol": PROTOCOL_VERSION,
        "env": info.name,
        "env_version": info.version,
        "task_id": task_id,
        "split": task.split,
        "seed": task.seed,
        "max_turns": max_turns,
        "endpoint": endpoint,
        **extra,
    }


class EpisodePlay:
    """One episode of ``agent`` on ``task``, played on one env session: its turns so far and its end.

    :meth:`play` fills it in place, so that what was played before a caller's timeout or
    cancellation is still here: the executor keeps those turns in the trajectory it stores.
    """

    def __init__(
        self,
        agent: Agent,
        task: Task,
        info: EnvInfo,
        *,
        on_start: StartCallback | None = None,
        on_turn: TurnCallback | None = None,
        act_limit: asyncio.Semaphore | None = None,
    ) -> None:
        self.agent = agent
        self.task = task
        self.info = info
        self.max_turns = task.max_turns or info.default_max_turns
        self.on_start = on_start
        self.on_turn = on_turn
        self.act_limit = act_limit
        self.task_id: TaskId | None = task.task_id
        self.first_observation = ""
        self.turns: list[Turn] = []
        self.tokens: TokenTrace | None = None
        self.outcome = Outcome.TRUNCATED
        self.error: str | None = None
        self.retry = False

    def fail(self, failure: EpisodeFailure) -> None:
        self.outcome, self.error, self.retry = failure.outcome, str(failure), failure.retry

    async def play(
        self, client: EnvClient, *, on_unavailable: Callable[[EnvServerUnavailableError], None] | None = None
    ) -> None:
        """Create a session on ``client``, play it to its end, close it.

        Env and agent failures end the episode (``outcome``, ``error``, ``retry``); they never
        become observation text and never raise. ``on_unavailable`` hears of a server that
        did not answer, so a pool can stop sending episodes there.
        """
        try:
            try:
                session = await client.create_session(
                    self.task.task_id, split=self.task.split, seed=self.task.seed, options=self.task.options
                )
            except (EnvServiceError, EnvServerUnavailableError) as exc:
                _tell(on_unavailable, exc)
                raise env_failure(exc, during="create session") from exc
            try:
                await self._play_session(session, on_unavailable)
            finally:
                # If the server is gone, its TTL reaper or its restart frees the session.
                with contextlib.suppress(EnvServiceError, EnvServerUnavailableError):
                    await session.close()
        except EpisodeFailure as failure:
            self.fail(failure)

    async def _play_session(
        self, session: RemoteSession, on_unavailable: Callable[[EnvServerUnavailableError], None] | None
    ) -> None:
        self.task_id, self.first_observation = session.task_id, session.observation
        if self.on_start is not None:
            self.on_start(session.task_id, session.observation)
        episode = self.agent.start_episode(self.task.model_copy(update={"task_id": session.task_id}), self.info)
        try:
            self.outcome = await self._turns(episode, session, on_unavailable)
        finally:
            trace = getattr(episode, "token_trace", None)
            self.tokens = trace.model_copy(deep=True) if isinstance(trace, TokenTrace) else None

    async def _turns(
        self,
        episode: AgentEpisode,
        session: RemoteSession,
        on_unavailable: Callable[[EnvServerUnavailableError], None] | None,
    ) -> Outcome:
        observation = Observation(text=session.observation, info=session.info)
        while len(self.turns) < self.max_turns:
            try:
                reply = await self._act(episode, observation)
            except ContextLengthExceeded:
                return Outcome.TRUNCATED  # the policy's context is full: a normal, trainable end
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # any agent failure is the agent's outcome, never a crash of the run
                message = f"the agent failed: {type(exc).__name__}: {exc}"
                raise EpisodeFailure(Outcome.AGENT_ERROR, message, retry=False) from exc
            try:
                result = await session.step(reply.action)
            except (EnvServiceError, EnvServerUnavailableError) as exc:
                _tell(on_unavailable, exc)
                raise env_failure(exc, during="step") from exc
            turn = Turn(
                action=reply.action,
                observation=result.observation,
                reward=result.reward,
                terminated=result.terminated,
                truncated=result.truncated,
                info=result.info,
                text=reply.text if reply.text != reply.action else None,
                token_ids=reply.token_ids,
                logprobs=reply.logprobs,
            )
            self.turns.append(turn)
            if self.on_turn is not None:
                self.on_turn(len(self.turns), turn)
            if result.terminated:
                self.error = not_evaluated(result.info)  # an unscored end is stored with the env's reason
                return terminal_outcome(result.reward, result.info)
            if result.truncated:
                return Outcome.TRUNCATED
            observation = Observation(text=result.observation, info=result.info)
        return Outcome.TRUNCATED

    async def _act(self, episode: AgentEpisode, observation: Observation) -> AgentReply:
        if self.act_limit is None:
            return await episode.act(observation)
        async with self.act_limit:  # the policy endpoint's concurrency limit
            return await episode.act(observation)

    def trajectory(
        self, *, endpoint: str, provenance: Mapping[str, Any], key: str | None = None, duration_s: float | None = None
    ) -> Trajectory:
        """The episode as the store keeps it."""
        return Trajectory(
            task=self.task.model_copy(update={"task_id": self.task_id}),
            first_observation=self.first_observation,
            turns=self.turns,
            reward=sum(t.reward for t in self.turns),
            outcome=self.outcome,
            error=self.error,
            provenance=episode_provenance(self.info, self.task, self.task_id, self.max_turns, endpoint, provenance),
            key=key,
            tokens=self.tokens,
            duration_s=duration_s,
        )


def agent_provenance(agent: Agent) -> dict[str, Any]:
    """What the agent says of itself (its ``describe()``: model, sampling), when it can."""
    describe = getattr(agent, "describe", None)
    return dict(describe()) if callable(describe) else {}


def _tell(
    on_unavailable: Callable[[EnvServerUnavailableError], None] | None,
    exc: EnvServiceError | EnvServerUnavailableError,
) -> None:
    if on_unavailable is not None and isinstance(exc, EnvServerUnavailableError):
        on_unavailable(exc)


async def play_episode(
    client: EnvClient,
    agent: Agent,
    task: Task,
    *,
    env_info: EnvInfo | None = None,
    on_turn: TurnCallback | None = None,
    on_start: StartCallback | None = None,
) -> Trajectory:
    """Create a session for ``task``, let ``agent`` act until the episode ends or hits
    ``task.max_turns`` (default: the env's), close the session, return the trajectory.

    The same loop as the executor's, once and without retries: environment and agent
    failures end the episode with ``env_error``, ``timeout`` or ``agent_error``; they never
    become observation text.
    """
    info = env_info or await client.info()
    play = EpisodePlay(agent, task, info, on_start=on_start, on_turn=on_turn)
    started = asyncio.get_running_loop().time()
    await play.play(client)
    duration_s = round(asyncio.get_running_loop().time() - started, 6)
    return play.trajectory(endpoint=client.base_url, provenance=agent_provenance(agent), duration_s=duration_s)
