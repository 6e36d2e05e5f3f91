"""One episode of a multi-player env: one policy per seat, one trajectory per seat.

The same rules as the one loop of :mod:`agenthub.rollout.episode_loop` (how an env failure, an
agent failure, a full context and the horizon end an episode; the provenance), with turns
taken by the seat each answer names. Each seat sees the game as a single-player env whose
dynamics include the other seats' moves:

- its first observation is the first one addressed to it;
- each of its turns is its action, then the next observation addressed to it (after the
  other seats have moved) or, when the game ends first, its final observation; the turn's
  reward is the sum of the seat's rewards over the steps in between;
- its outcome is ``success`` when it finished with the single highest return, ``failure``
  otherwise (``seat_result`` says ``win``, ``draw`` or ``loss``). An infra failure or a
  truncation ends every seat's trajectory the same way.

The horizon (``task.max_turns`` or the env's ``default_max_turns``) counts the session's steps,
all seats together, as the server does.

Each seat's trajectory records who played it (:func:`seated_provenance`): ``role`` is ``agent`` for
a seat of the agent under evaluation or training, ``opponent`` for a seat of ``opponent=``; ``agent``
and ``agent_kwargs`` name the agent that played that seat, so an opponent's trajectory never carries
the evaluated agent's name.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agenthub.errors import EnvServerUnavailableError, EnvServiceError
from agenthub.protocols import Agent, AgentEpisode
from agenthub.rollout.episode_loop import EpisodeFailure, agent_provenance, env_failure, episode_provenance
from agenthub.rollout.store import seat_key
from agenthub.rollout.token_assembly import ContextLengthExceeded
from agenthub.service.client import EnvClient, RemoteSession
from agenthub.types import AgentReply, EnvInfo, Observation, Outcome, Task, TaskId, TokenTrace, Trajectory, Turn

SeatResult = Literal["win", "draw", "loss"]

AGENT_IDENTITY = ("agent", "agent_kwargs")
"""The provenance keys that name the agent of a trajectory: an opponent's seat replaces them with its own."""


def seated_provenance(
    provenance: Mapping[str, Any],
    agent: Agent,
    opponents: Mapping[int, Agent],
    players: int,
    opponent_identity: Mapping[int, Mapping[str, Any]] | None = None,
) -> dict[int, dict[str, Any]]:
    """What each seat's trajectory records of who played it.

    ``provenance`` is the run's (the agent's name and settings, the seating, the trainer...): the
    agent's seats keep it whole, with what ``agent`` says of itself, and ``role="agent"``. An opponent's
    seat keeps only its run-wide keys (not :data:`AGENT_IDENTITY`, nor the agent's ``describe()``), then
    what the opponent says of itself, then ``opponent_identity[seat]`` (its registered name and
    settings: ``{"agent": "oracle", "agent_kwargs": {...}}``), and ``role="opponent"``."""
    mine = {**agent_provenance(agent), **provenance, "role": "agent"}
    shared = {k: v for k, v in provenance.items() if k not in AGENT_IDENTITY}
    out: dict[int, dict[str, Any]] = {}
    for seat in range(players):
        opponent = opponents.get(seat)
        if opponent is None:
            out[seat] = dict(mine)
            continue
        # Without a registered name (a trainer's own Agent object), its class says who played.
        identity = {"agent": type(opponent).__name__, **(opponent_identity or {}).get(seat, {})}
        out[seat] = {**shared, **agent_provenance(opponent), **identity, "role": "opponent"}
    return out


def seat_results(returns: Mapping[int, float]) -> dict[int, SeatResult]:
    """Each seat's result: the single highest return wins, a shared highest draws, the rest lose."""
    best = max(returns.values())
    leaders = [s for s, r in returns.items() if r == best]
    return {s: ("win" if len(leaders) == 1 else "draw") if r == best else "loss" for s, r in returns.items()}


@dataclass
class _Seat:
    """One seat's side of the episode, filled in as it is played."""

    episode: AgentEpisode
    first_observation: str | None = None
    turns: list[Turn] = field(default_factory=list)
    open_turn: dict[str, Any] | None = None
    """The seat's last action and reply, waiting for the observation it will see next."""
    pending_reward: float = 0.0


class SeatedEpisodePlay:
    """One episode of a multi-player env on one session; ``agents[seat]`` plays each seat."""

    def __init__(
        self,
        agents: Mapping[int, Agent],
        task: Task,
        info: EnvInfo,
        *,
        act_limit: asyncio.Semaphore | None = None,
    ) -> None:
        missing = [s for s in range(info.players) if s not in agents]
        if missing:
            raise ValueError(f"env {info.name!r} has {info.players} seats; no agent for seat(s) {missing}")
        self.agents = dict(agents)
        self.task = task
        self.info = info
        self.max_turns = task.max_turns or info.default_max_turns
        self.act_limit = act_limit
        self.task_id: TaskId | None = task.task_id
        self.seats: dict[int, _Seat] = {}
        self.steps = 0
        self.returns = dict.fromkeys(range(info.players), 0.0)
        self.outcome = Outcome.TRUNCATED
        self.ended = False
        """True when the env ended the episode (``terminated``); then each seat has a result."""
        self.error: str | None = None
        self.retry = False

    def fail(self, failure: EpisodeFailure) -> None:
        self.outcome, self.error, self.retry = failure.outcome, str(failure), failure.retry

    async def play(
        self, client: EnvClient, *, on_unavailable: Callable[[EnvServerUnavailableError], None] | None = None
    ) -> None:
        """Create a session on ``client``, play every seat to the end, close it; failures end the episode."""
        try:
            try:
                session = await client.create_session(
                    self.task.task_id, split=self.task.split, seed=self.task.seed, options=self.task.options
                )
            except (EnvServiceError, EnvServerUnavailableError) as exc:
                _tell(on_unavailable, exc)
                raise env_failure(exc, during="create session") from exc
            try:
                self.task_id = session.task_id
                task = self.task.model_copy(update={"task_id": session.task_id})
                self.seats = {s: _Seat(agent.start_episode(task, self.info)) for s, agent in self.agents.items()}
                await self._turns(session, on_unavailable)
            finally:
                with contextlib.suppress(EnvServiceError, EnvServerUnavailableError):
                    await session.close()
        except EpisodeFailure as failure:
            self.fail(failure)

    async def _turns(
        self, session: RemoteSession, on_unavailable: Callable[[EnvServerUnavailableError], None] | None
    ) -> None:
        if session.seat is None:
            raise EpisodeFailure(
                Outcome.ENV_ERROR,
                f"env {self.info.name!r} declares {self.info.players} seats but its create answer names none",
                retry=False,
            )
        seat, observation = session.seat, Observation(text=session.observation, info=session.info)
        while self.steps < self.max_turns:
            player = self.seats[seat]
            self._see(seat, observation)
            try:
                reply = await self._act(player.episode, observation)
            except ContextLengthExceeded:
                self.outcome = Outcome.TRUNCATED
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                message = f"the agent of seat {seat} failed: {type(exc).__name__}: {exc}"
                raise EpisodeFailure(Outcome.AGENT_ERROR, message, retry=False) from exc
            try:
                result = await session.step(reply.action, seat=seat)
            except (EnvServiceError, EnvServerUnavailableError) as exc:
                _tell(on_unavailable, exc)
                raise env_failure(exc, during=f"step of seat {seat}") from exc
            self.steps += 1
            player.open_turn = {"reply": reply}
            for other in range(self.info.players):
                reward = result.seat_reward(other)
                self.returns[other] += reward
                self.seats[other].pending_reward += reward
            if result.done:
                finals = result.observations or {}
                for s in range(self.info.players):
                    text = finals.get(str(s), result.observation if s == seat else "")
                    self._close_turn(s, text, result.info, terminated=result.terminated, truncated=result.truncated)
                self.ended = result.terminated
                self.outcome = Outcome.SUCCESS if result.terminated else Outcome.TRUNCATED
                return
            if result.seat is None:
                raise EpisodeFailure(Outcome.ENV_ERROR, "a multi-player step answer names no seat", retry=False)
            seat, observation = result.seat, Observation(text=result.observation, info=result.info)
        for s in range(self.info.players):  # the horizon: every seat's last action stays without an answer
            self._close_turn(s, "", {}, terminated=False, truncated=True)
        self.outcome = Outcome.TRUNCATED

    def _see(self, seat: int, observation: Observation) -> None:
        """``seat`` is on turn with ``observation``: it answers the seat's previous action."""
        player = self.seats[seat]
        if player.first_observation is None:
            player.first_observation = observation.text
        else:
            self._close_turn(seat, observation.text, observation.info, terminated=False, truncated=False)

    def _close_turn(self, seat: int, text: str, info: Mapping[str, Any], *, terminated: bool, truncated: bool) -> None:
        player = self.seats[seat]
        if player.open_turn is None:
            return
        reply: AgentReply = player.open_turn["reply"]
        player.turns.append(
            Turn(
                action=reply.action,
                observation=text,
                reward=player.pending_reward,
                terminated=terminated,
                truncated=truncated,
                info=dict(info),
                text=reply.text if reply.text != reply.action else None,
                token_ids=reply.token_ids,
                logprobs=reply.logprobs,
            )
        )
        player.open_turn = None
        player.pending_reward = 0.0

    async def _act(self, episode: AgentEpisode, observation: Observation) -> AgentReply:
        if self.act_limit is None:
            return await episode.act(observation)
        async with self.act_limit:
            return await episode.act(observation)

    def trajectories(
        self,
        *,
        endpoint: str,
        provenance: Mapping[str, Any],
        key: str,
        duration_s: float | None = None,
        seat_provenance: Mapping[int, Mapping[str, Any]] | None = None,
    ) -> list[Trajectory]:
        """One trajectory per seat, keyed ``"<key>/seat<N>"``; a seat in ``seat_provenance`` (see
        :func:`seated_provenance`) records that instead of ``provenance``."""
        results = seat_results(self.returns) if self.ended else {}
        out = []
        for seat in range(self.info.players):
            player = self.seats.get(seat)
            outcome = self.outcome
            if self.ended:
                outcome = Outcome.SUCCESS if results[seat] == "win" else Outcome.FAILURE
            trace = getattr(player.episode, "token_trace", None) if player else None
            own = (seat_provenance or {}).get(seat, provenance)
            where = episode_provenance(self.info, self.task, self.task_id, self.max_turns, endpoint, own)
            out.append(
                Trajectory(
                    task=self.task.model_copy(update={"task_id": self.task_id}),
                    first_observation=(player.first_observation if player else None) or "",
                    turns=player.turns if player else [],
                    reward=self.returns[seat],
                    outcome=outcome,
                    error=self.error,
                    provenance={**where, "players": self.info.players, "seat_returns": _keyed(self.returns)},
                    key=seat_key(key, seat),
                    tokens=trace.model_copy(deep=True) if isinstance(trace, TokenTrace) else None,
                    duration_s=duration_s,
                    seat=seat,
                    seat_result=results.get(seat),
                )
            )
        return out


def _keyed(returns: Mapping[int, float]) -> dict[str, float]:
    return {str(s): r for s, r in returns.items()}


def _tell(
    on_unavailable: Callable[[EnvServerUnavailableError], None] | None,
    exc: EnvServiceError | EnvServerUnavailableError,
) -> None:
    if on_unavailable is not None and isinstance(exc, EnvServerUnavailableError):
        on_unavailable(exc)
