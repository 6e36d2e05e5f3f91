"""The one loop that plays an episode on an env session, and the one rule for how it came out.

``agenthub play`` (:func:`play_episode`), the :class:`~agenthub.rollout.executor.Executor` (so
``agenthub eval``, the Ray backend and every trainer that rolls out through it), the launch
checks and the benchmarks all play turns here, so an episode ends the same way whichever path
ran it: the env ends it (:func:`terminal_outcome`), the horizon or the policy's context is
reached (``truncated``), the agent fails (``agent_error``), or the env server fails
(``env_error`` or ``timeout``; the executor retries those on a fresh session).

A single-player env is a game of one seat. On a multi-player env one agent plays each seat and
each seat gets its own trajectory; each seat sees the game as a single-player env whose dynamics
include the other seats' moves:

- its first observation is the first one addressed to it;
- each of its turns is its action, then the next observation addressed to it (after the other
  seats have moved) or, when the game ends first, its final observation; the turn's reward is
  the sum of the seat's rewards over the steps in between;
- its outcome is ``success`` when it finished with the single highest return, ``failure``
  otherwise (:func:`seat_results`: ``win``, ``draw`` or ``loss``). An infra failure, a truncation
  or an end the env could not score ends every seat's trajectory the same way.

The horizon (``task.max_turns`` or the env's ``default_max_turns``) counts the session's steps,
all seats together, as the server does.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from agenthub.errors import AgenthubError, EnvServerUnavailableError, EnvServiceError
from agenthub.protocols import Agent, AgentEpisode
from agenthub.rollout.provenance import agent_provenance, episode_provenance
from agenthub.rollout.store import seat_key
from agenthub.rollout.token_assembly import ContextLengthExceeded
from agenthub.service.client import EnvClient, RemoteSession
from agenthub.types import AgentReply, EnvInfo, Observation, Outcome, Task, TaskId, TokenTrace, Trajectory, Turn

if TYPE_CHECKING:
    from agenthub.types import StepResult

TurnCallback = Callable[[str, int, Turn], None]
"""``on_turn(key, turn_number, turn)``, called as each turn is played: ``key`` is the key of the
trajectory the turn belongs to (the episode's, ``"<key>/seat<N>"`` for a seat of a multi-player
env, ``""`` for an episode without one), ``turn_number`` counts that trajectory's turns from 1."""

StartCallback = Callable[[TaskId | None, str], None]
"""``on_start(task_id, first_observation)``, called once the env session exists."""

SeatResult = Literal["win", "draw", "loss"]


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


def seat_results(returns: Mapping[int, float]) -> dict[int, SeatResult]:
    """Each seat's result: the single highest return wins, a shared highest draws, the rest lose."""
    best = max(returns.values())
    leaders = [s for s, r in returns.items() if r == best]
    return {s: ("win" if len(leaders) == 1 else "draw") if r == best else "loss" for s, r in returns.items()}


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


UnavailableCallback = Callable[[EnvServerUnavailableError], None]
"""Hears of an env server that did not answer, so a pool can stop sending episodes there."""


@dataclass
class _Seat:
    """One seat's side of the episode, filled in as it is played."""

    episode: AgentEpisode
    first_observation: str | None = None
    turns: list[Turn] = field(default_factory=list)
    open_turn: AgentReply | None = None
    """The seat's last reply, waiting for the observation that answers it."""
    pending_reward: float = 0.0
    tokens: TokenTrace | None = None


class EpisodePlay:
    """One episode on one env session, ``agents[seat]`` playing each seat (a single-player env has
    one, seat 0): each seat's turns so far, and how the episode ended.

    :meth:`play` fills it in place, so that what was played before a caller's timeout or
    cancellation is still here: the executor keeps those turns in the trajectories it stores.
    ``key`` is the episode's: its trajectories' keys, and what ``on_turn`` is told.
    """

    def __init__(
        self,
        agents: Mapping[int, Agent],
        task: Task,
        info: EnvInfo,
        *,
        key: str | None = None,
        on_start: StartCallback | None = None,
        on_turn: TurnCallback | None = None,
        act_limit: asyncio.Semaphore | None = None,
    ) -> None:
        missing = [s for s in range(info.players) if s not in agents]
        if missing:
            raise ValueError(f"env {info.name!r} has {info.players} seats; no agent for seat(s) {missing}")
        self.agents = {s: agents[s] for s in range(info.players)}
        self.task = task
        self.info = info
        self.key = key
        self.max_turns = task.max_turns or info.default_max_turns
        self.on_start = on_start
        self.on_turn = on_turn
        self.act_limit = act_limit
        self.task_id: TaskId | None = task.task_id
        self.seats: dict[int, _Seat] = {}
        self.steps = 0
        self.returns = dict.fromkeys(range(info.players), 0.0)
        self.outcome = Outcome.TRUNCATED
        self.ended = False
        """True when the env ended the episode (``terminated``) and scored it; then each seat has a result."""
        self.error: str | None = None
        self.retry = False

    def fail(self, failure: EpisodeFailure) -> None:
        self.outcome, self.error, self.retry = failure.outcome, str(failure), failure.retry

    async def play(self, client: EnvClient, *, on_unavailable: UnavailableCallback | None = None) -> None:
        """Create a session on ``client``, play every seat to the end, close the session.

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

    async def _play_session(self, session: RemoteSession, on_unavailable: UnavailableCallback | None) -> None:
        self.task_id = session.task_id
        if self.on_start is not None:
            self.on_start(session.task_id, session.observation)
        task = self.task.model_copy(update={"task_id": session.task_id})
        self.seats = {s: _Seat(agent.start_episode(task, self.info)) for s, agent in self.agents.items()}
        try:
            await self._turns(session, on_unavailable)
        finally:  # also on a failure or a cancellation: what was sampled stays with the turns played
            for player in self.seats.values():
                trace = getattr(player.episode, "token_trace", None)
                player.tokens = trace.model_copy(deep=True) if isinstance(trace, TokenTrace) else None

    async def _turns(self, session: RemoteSession, on_unavailable: UnavailableCallback | None) -> None:
        multi = self.info.multi_player
        seat = session.seat if multi else 0
        if seat is None:
            raise EpisodeFailure(
                Outcome.ENV_ERROR,
                f"env {self.info.name!r} declares {self.info.players} seats but its create answer names none",
                retry=False,
            )
        observation = Observation(text=session.observation, info=session.info)
        self._see(seat, observation)
        while self.steps < self.max_turns:
            player = self.seats[seat]
            try:
                reply = await self._act(player.episode, observation)
            except ContextLengthExceeded:
                break  # the policy's context is full: a normal, trainable end
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # any agent failure is the agent's outcome, never a crash of the run
                who = f"the agent of seat {seat}" if multi else "the agent"
                raise EpisodeFailure(
                    Outcome.AGENT_ERROR, f"{who} failed: {type(exc).__name__}: {exc}", retry=False
                ) from exc
            try:
                result = await session.step(reply.action, seat=seat if multi else None)
            except (EnvServiceError, EnvServerUnavailableError) as exc:
                _tell(on_unavailable, exc)
                raise env_failure(exc, during=f"step of seat {seat}" if multi else "step") from exc
            self.steps += 1
            player.open_turn = reply
            for other, each in self.seats.items():
                reward = result.seat_reward(other)
                self.returns[other] += reward
                each.pending_reward += reward
            if result.done:
                self._end(seat, result)
                return
            if multi:
                if result.seat is None:
                    raise EpisodeFailure(Outcome.ENV_ERROR, "a multi-player step answer names no seat", retry=False)
                seat = result.seat
            observation = Observation(text=result.observation, info=result.info)
            self._see(seat, observation)
        # The horizon or a full context: a seat's last action that nothing answered yet ends it unanswered.
        for other in self.seats:
            self._close_turn(other, "", {}, terminated=False, truncated=True)
        self.outcome = Outcome.TRUNCATED

    def _see(self, seat: int, observation: Observation) -> None:
        """``seat`` is on turn with ``observation``: its first, or the answer to its previous action."""
        player = self.seats[seat]
        if player.first_observation is None:
            player.first_observation = observation.text
        else:
            self._close_turn(seat, observation.text, observation.info, terminated=False, truncated=False)

    def _end(self, seat: int, result: StepResult) -> None:
        """The env ended the episode after ``seat``'s action: every seat sees its final observation."""
        finals = result.observations or {}
        for other in self.seats:
            text = finals.get(str(other), result.observation if other == seat else "")
            self._close_turn(other, text, result.info, terminated=result.terminated, truncated=result.truncated)
        if not result.terminated:
            self.outcome = Outcome.TRUNCATED
            return
        self.error = not_evaluated(result.info)  # an unscored end is stored with the env's reason
        self.ended = self.error is None
        if not self.info.multi_player:
            self.outcome = terminal_outcome(result.reward, result.info)
        else:  # each seat's own outcome is its rank by return (trajectories); this is the game's end
            self.outcome = Outcome.ENV_ERROR if self.error is not None else Outcome.SUCCESS

    def _close_turn(self, seat: int, text: str, info: Mapping[str, Any], *, terminated: bool, truncated: bool) -> None:
        player = self.seats[seat]
        reply = player.open_turn
        if reply is None:
            return
        turn = Turn(
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
        player.turns.append(turn)
        player.open_turn, player.pending_reward = None, 0.0
        if self.on_turn is not None:
            self.on_turn(self._key(seat, self.key) or "", len(player.turns), turn)

    async def _act(self, episode: AgentEpisode, observation: Observation) -> AgentReply:
        if self.act_limit is None:
            return await episode.act(observation)
        async with self.act_limit:  # the policy endpoint's concurrency limit
            return await episode.act(observation)

    def _key(self, seat: int, key: str | None) -> str | None:
        """The key of ``seat``'s trajectory of the episode keyed ``key``: ``"<key>/seat<N>"`` on a multi-player env."""
        if not self.info.multi_player:
            return key
        return seat_key(key or "", seat)

    def trajectories(
        self,
        *,
        endpoint: str,
        provenance: Mapping[str, Any],
        key: str | None = None,
        duration_s: float | None = None,
        seat_provenance: Mapping[int, Mapping[str, Any]] | None = None,
    ) -> list[Trajectory]:
        """The episode as the store keeps it: one trajectory per seat, in seat order.

        ``key`` (default: the episode's) keys a single-player trajectory, and each seat's as
        ``"<key>/seat<N>"``; a seat in ``seat_provenance`` (see
        :func:`~agenthub.rollout.provenance.seated_provenance`) records that instead of ``provenance``."""
        key = self.key if key is None else key
        multi = self.info.multi_player
        results = seat_results(self.returns) if multi and self.ended else {}
        task = self.task.model_copy(update={"task_id": self.task_id})
        out = []
        for seat in range(self.info.players):
            player = self.seats.get(seat)
            outcome = self.outcome
            if results:
                outcome = Outcome.SUCCESS if results[seat] == "win" else Outcome.FAILURE
            own = (seat_provenance or {}).get(seat, provenance)
            where = episode_provenance(self.info, self.task, self.task_id, self.max_turns, endpoint, own)
            if multi:
                where |= {"players": self.info.players, "seat_returns": {str(s): r for s, r in self.returns.items()}}
            out.append(
                Trajectory(
                    task=task,
                    first_observation=(player.first_observation if player else None) or "",
                    turns=player.turns if player else [],
                    reward=self.returns[seat],
                    outcome=outcome,
                    error=self.error,
                    provenance=where,
                    key=self._key(seat, key),
                    tokens=player.tokens if player else None,
                    duration_s=duration_s,
                    seat=seat if multi else None,
                    seat_result=results.get(seat),
                )
            )
        return out


def _tell(on_unavailable: UnavailableCallback | None, exc: EnvServiceError | EnvServerUnavailableError) -> None:
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
    """Create a session for ``task`` on a single-player env, let ``agent`` act until the episode
    ends or hits ``task.max_turns`` (default: the env's), close the session, return the trajectory.

    The same loop as the executor's, once and without retries: environment and agent
    failures end the episode with ``env_error``, ``timeout`` or ``agent_error``; they never
    become observation text. ``on_turn`` is told the key ``""``.
    """
    info = env_info or await client.info()
    if info.multi_player:
        raise AgenthubError(
            f"env {info.name!r} has {info.players} seats, so an episode gives one trajectory per seat; "
            "play it with agenthub.rollout.Executor (run_episode or stream), one agent per seat"
        )
    play = EpisodePlay({0: agent}, task, info, on_start=on_start, on_turn=on_turn)
    started = asyncio.get_running_loop().time()
    await play.play(client)
    duration_s = round(asyncio.get_running_loop().time() - started, 6)
    [trajectory] = play.trajectories(
        endpoint=client.base_url, provenance=agent_provenance(agent), duration_s=duration_s
    )
    return trajectory
