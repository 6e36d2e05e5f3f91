"""hub -> gymnasium: a ``gymnasium.Env`` over an environment server, with text spaces.

The other direction, a gymnasium env served as a hub env, is :mod:`agenthub.gymnasium.importer`.

A multi-player env (``players`` > 1, e.g. ``tictactoe``) is one seat's game: the gymnasium env
plays ``seat`` (default 0) and ``opponent``, a hub agent (``agenthub.make("tictactoe",
opponent="oracle")``), plays every other seat inside ``reset`` and ``step``, so each observation
is the one addressed to ``seat`` on its turn, each reward is ``seat``'s own (summed over the
opponent's moves in between), and the final observation is ``seat``'s view of how the game
ended. Without an opponent such an env is refused at construction, in words: to play every
seat, drive the protocol with ``agenthub.EnvClient`` (``step(..., seat=N)``) or ``agenthub eval``.
"""

from __future__ import annotations

from collections.abc import Coroutine, Mapping
from typing import Any, Protocol, TypeVar

import gymnasium as gym
from gymnasium import spaces

from agenthub.errors import AgenthubError, ConfigError
from agenthub.protocols import Agent, AgentEpisode
from agenthub.service.loop_thread import LoopThread
from agenthub.types import Action, EnvInfo, Observation, ResetResult, StepResult, Task, TaskId

T = TypeVar("T")

# Every character a text observation may contain: tab, newline, carriage return
# and all printable code points of the Basic Multilingual Plane (no surrogates).
TEXT_CHARSET = "\t\n\r" + "".join(
    ch for ch in map(chr, range(0x20, 0xFFFE)) if ch.isprintable() and not 0xD800 <= ord(ch) <= 0xDFFF
)
MAX_OBSERVATION_CHARS = 1 << 20
MAX_ACTION_CHARS = 2048


class _Session(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def observation(self) -> str: ...

    @property
    def info(self) -> Mapping[str, Any]: ...

    @property
    def task_id(self) -> TaskId | None: ...

    @property
    def seat(self) -> int | None: ...


class GymSessionClient(Protocol):
    """What :class:`RemoteGymEnv` needs of a client: ``agenthub.SyncEnvClient`` is one.

    A protocol rather than the client class, so that this module does not import the client
    module, which imports this one for ``as_gym()``.
    """

    def info(self) -> EnvInfo: ...

    def create_session(
        self,
        task_id: TaskId | None = ...,
        *,
        split: str | None = ...,
        seed: int | None = ...,
        options: dict[str, Any] | None = ...,
    ) -> _Session: ...

    def reset(
        self,
        session_id: str,
        task_id: TaskId | None = ...,
        *,
        seed: int | None = ...,
        options: dict[str, Any] | None = ...,
    ) -> ResetResult: ...

    def step(self, session_id: str, action: Action, *, seat: int | None = ...) -> StepResult: ...

    def close_session(self, session_id: str) -> None: ...

    def close(self) -> None: ...


class RemoteGymEnv(gym.Env[str, str]):
    """One server-side session seen through gymnasium's API.

    ``reset(seed=..., options={"task_id": ..., "split": ...})`` starts an episode
    (the first reset creates the session, later ones reuse it); ``step`` sends
    the text action. ``close`` deletes the session and, if this object owns it,
    the client.

    On a multi-player env, this env plays ``seat`` and ``opponent`` (an agent, or the name of
    an installed one, ``oracle`` the env's own) every other seat, inside ``reset`` and ``step``.
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 - gymnasium's declared class attribute

    def __init__(
        self,
        client: GymSessionClient,
        *,
        task_id: TaskId | None = None,
        split: str | None = None,
        owns_client: bool = False,
        on_close: Any = None,
        opponent: Agent | str | None = None,
        seat: int | None = None,
    ) -> None:
        self.client = client
        self.task_id = task_id
        self.split = split
        self.owns_client = owns_client
        self._on_close = on_close
        self._session_id: str | None = None
        self._closed = False
        self.env_info = client.info()
        self.opponent, self.seat = seated(self.env_info, opponent, seat)
        """Multi-player envs: the agent of the other seats, and the seat this env plays; None, None otherwise."""
        self._opponent_loop: LoopThread | None = None
        self._opponent_episodes: dict[int, AgentEpisode] = {}
        self._on_turn: int | None = None
        self.observation_space = spaces.Text(max_length=MAX_OBSERVATION_CHARS, min_length=0, charset=TEXT_CHARSET)
        self.action_space = spaces.Text(max_length=MAX_ACTION_CHARS, min_length=1, charset=TEXT_CHARSET)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        task_id = options.pop("task_id", self.task_id)
        split = options.pop("split", self.split)
        if self._session_id is None:
            session = self.client.create_session(task_id, split=split, seed=seed, options=options)
            self._session_id = session.id
            return self._seated_start(session.task_id, split, session.observation, dict(session.info), session.seat)
        if task_id is None:
            # Same rule as a new session: the seed picks the task, so reset(seed=s) is reproducible.
            self.client.close_session(self._session_id)
            self._session_id = None
            return self.reset(seed=seed, options={**options, "split": split})
        result = self.client.reset(self._session_id, task_id, seed=seed, options=options)
        return self._seated_start(task_id, split, result.observation, dict(result.info), result.seat)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._session_id is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self.seat is None:
            result = self.client.step(self._session_id, action)
            return result.observation, result.reward, result.terminated, result.truncated, dict(result.info)
        if self._on_turn is None:
            raise gym.error.ResetNeeded("the game is over; call reset() to play another")
        result = self.client.step(self._session_id, action, seat=self.seat)
        reward = result.seat_reward(self.seat)
        result, rewards, cut = self._opponents_move(result)
        return self._seat_view(result, reward + rewards, cut)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._session_id is not None:
                self.client.close_session(self._session_id)
                self._session_id = None
        finally:
            if self._opponent_loop is not None:
                self._opponent_loop.stop()
            if self.owns_client:
                self.client.close()
            if self._on_close is not None:
                self._on_close()

    # -- multi-player envs: the opponent's seats ----------------------------------------

    def _seated_start(
        self, task_id: TaskId | None, split: str | None, observation: str, info: dict[str, Any], on_turn: int | None
    ) -> tuple[str, dict[str, Any]]:
        """A (re)started episode, played by the opponent up to this env's seat's first turn."""
        if self.seat is None or self.opponent is None:
            return observation, info
        task = Task(env=self.env_info.name, task_id=task_id, split=split)
        opponent = self.opponent
        self._opponent_episodes = {
            s: opponent.start_episode(task, self.env_info) for s in range(self.env_info.players) if s != self.seat
        }
        if on_turn is None:
            raise AgenthubError(f"env {self.env_info.name!r} declares seats but its reset answer names none")
        self._on_turn = on_turn
        if on_turn == self.seat:
            return observation, info
        first = StepResult(
            observation=observation, reward=0.0, terminated=False, truncated=False, info=info, seat=on_turn
        )
        result, _, cut = self._opponents_move(first)
        if result.terminated or result.truncated or cut:
            raise AgenthubError(
                f"the game of env {self.env_info.name!r} ended before seat {self.seat} had a turn; "
                "reset again, or play another seat (seat=N)"
            )
        return result.observation, dict(result.info)

    def _opponents_move(self, result: StepResult) -> tuple[StepResult, float, bool]:
        """The opponent's moves until this env's seat is on turn or the game ends: the last answer, this
        seat's rewards over them, and whether the opponent was cut off (as many moves as the env's turn limit)."""
        assert self._session_id is not None and self.seat is not None
        rewards = 0.0
        for _ in range(self.env_info.default_max_turns):
            if result.terminated or result.truncated or result.seat is None:
                self._on_turn = None
                return result, rewards, False
            if result.seat == self.seat:
                self._on_turn = self.seat
                return result, rewards, False
            acting = result.seat
            episode = self._opponent_episodes[acting]
            reply = self._run(episode.act(Observation(text=result.observation, info=result.info)))
            result = self.client.step(self._session_id, reply.action, seat=acting)
            rewards += result.seat_reward(self.seat)
        self._on_turn = None  # an opponent that never hands the turn back: the episode is cut here
        return result, rewards, True

    def _seat_view(self, result: StepResult, reward: float, cut: bool) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """``result`` as this env's seat sees it: on its turn, or its final observation once the game is over."""
        assert self.seat is not None
        done = result.terminated or result.truncated
        observation = (
            (result.observations or {}).get(str(self.seat), result.observation) if done else result.observation
        )
        return observation, reward, result.terminated, result.truncated or cut, dict(result.info)

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._opponent_loop is None:
            # an agent's act is async, gymnasium's step is not (and may be called where a loop runs, as in Jupyter)
            self._opponent_loop = LoopThread("agenthub-gym-opponent")
        return self._opponent_loop.run(coro)


def seated(info: EnvInfo, opponent: Agent | str | None, seat: int | None) -> tuple[Agent | None, int | None]:
    """The opponent's agent (built from its name) and the seat a gymnasium env plays, checked against ``info``;
    None, None for a single-player env."""
    if not info.multi_player:
        if opponent is not None or seat is not None:
            raise ConfigError(
                f"env {info.name!r} is single-player; opponent= and seat= are for multi-player envs (tictactoe, ...)"
            )
        return None, None
    names = ", ".join(
        f"{s} ({name})" for s, name in enumerate(info.seats or [f"seat {s}" for s in range(info.players)])
    )
    if opponent is None:
        raise ConfigError(
            f"env {info.name!r} has {info.players} seats ({names}) and a gymnasium env plays one of them: pass "
            f"opponent=AGENT for the others, e.g. agenthub.make({info.name!r}, opponent='oracle', seat=0); to play "
            "every seat yourself, use agenthub.EnvClient (step(..., seat=N)) or agenthub eval"
        )
    seat = 0 if seat is None else seat
    if not 0 <= seat < info.players:
        raise ConfigError(f"env {info.name!r} has seats {names}; seat={seat} does not exist")
    if isinstance(opponent, str):
        from agenthub.plugins import get_plugin_host

        host = get_plugin_host()
        if info.name in host.envs.names():
            opponent = host.agent_for(host.env(info.name), opponent).make()
        elif opponent != "oracle":
            opponent = host.agent(opponent).make()
        else:
            raise ConfigError(
                f"env {info.name!r} is not installed here, so its oracle is unknown; name the opponent (opponent=NAME)"
            )
    return opponent, seat
