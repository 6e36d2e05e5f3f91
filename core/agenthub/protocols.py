"""The three things a plugin can provide: Environment, Agent and Trainer.

They are structural (``typing.Protocol``): a plugin never has to subclass
anything from agenthub, only to have the right methods.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol, runtime_checkable

from agenthub.types import Action, AgentReply, EnvInfo, Observation, Task, TaskId

StepTuple = tuple[str, float, bool, bool, dict[str, Any]]
"""``(observation, reward, terminated, truncated, info)``, as in gymnasium."""


@runtime_checkable
class Environment(Protocol):
    """A text environment with gymnasium's semantics.

    One instance serves one session at a time; the service never calls two
    methods of an instance concurrently, but it does call different instances
    from different threads, so an instance must not share mutable state
    (a global RNG, a module-level cache it mutates) with other instances.

    ``info`` may carry ``available_actions`` (list of str), ``score`` and ``won``.
    An invalid action is answered in the environment's own words as a normal
    observation, never by raising.
    """

    def reset(
        self,
        *,
        task_id: TaskId | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode of ``task_id`` and return the first observation and info.

        Raise ``ValueError`` for a task id or option the environment does not know;
        the service answers it as HTTP 422.
        """
        ...

    def step(self, action: Action) -> StepTuple:
        """Apply one action and return ``(observation, reward, terminated, truncated, info)``."""
        ...

    def close(self) -> None:
        """Free what the instance holds. Calling it twice must be harmless."""
        ...


class SeatStep(NamedTuple):
    """What a multi-player env's ``step`` returns.

    ``observations`` maps seats to what they see now: at least the seat on turn next while the
    game goes on, and every seat once it has ended (each seat's final view). ``rewards`` maps
    seats to their reward for this step (a seat left out gets 0). ``seat`` is the seat on turn
    next; once the episode has ended it is ignored.
    """

    observations: dict[int, str]
    rewards: dict[int, float]
    terminated: bool
    truncated: bool
    info: dict[str, Any]
    seat: int


@runtime_checkable
class MultiPlayerEnvironment(Protocol):
    """A text environment with seats: two or more players take turns in one session.

    Its spec declares ``players`` (the number of seats, numbered from 0). ``reset`` returns the
    observation addressed to the seat on turn, the info and that seat; ``step`` is called with
    the acting seat, which the service has checked is the seat on turn. An invalid action is
    answered in the env's own words (the same seat stays on turn, or loses, as the game says),
    never by raising. Instances follow :class:`Environment`'s threading rules.
    """

    def reset(
        self,
        *,
        task_id: TaskId | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any], int]:
        """Start an episode: ``(observation for the seat on turn, info, seat on turn)``.

        Raise ``ValueError`` for a task id or option the environment does not know (HTTP 422).
        """
        ...

    def step(self, seat: int, action: Action) -> SeatStep:
        """Apply ``seat``'s action; see :class:`SeatStep` for the answer."""
        ...

    def close(self) -> None:
        """Free what the instance holds. Calling it twice must be harmless."""
        ...


@runtime_checkable
class AgentEpisode(Protocol):
    """An agent's state for one episode."""

    async def act(self, observation: Observation) -> AgentReply:
        """Choose the next action given the latest observation."""
        ...


@runtime_checkable
class Agent(Protocol):
    """A policy. It starts one :class:`AgentEpisode` per episode it plays."""

    def start_episode(self, task: Task, env: EnvInfo) -> AgentEpisode: ...


@runtime_checkable
class Trainer(Protocol):
    """A training backend driven by ``agenthub run trainer=NAME``."""

    def run(self, config: Mapping[str, Any], *, dry_run: bool = False) -> int:
        """Train with ``config``; with ``dry_run`` print what would run instead. Returns an exit code."""
        ...


@runtime_checkable
class HorizonSchedule(Protocol):
    """Maps a training step to the most turns an episode may take (ScalingInter-RL).

    Must be a pure function of ``step`` so that a resumed run gets the same value.
    """

    def max_turns(self, step: int) -> int:
        """The turn limit for episodes collected at training ``step`` (0-based)."""
        ...
