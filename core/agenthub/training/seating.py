"""Who plays a multi-player env's seats, from :class:`agenthub.config.MultiPlayerConfig`'s keys.

:func:`seating` turns ``seat=``, ``opponent=`` and ``opponent.KEY=`` and the env's
:class:`~agenthub.types.EnvInfo` into what :class:`~agenthub.rollout.Executor` takes: ``opponents``
(the agent of each seat the policy does not play) and ``seats`` (the seats whose trajectories a
trainer learns from). Settings that do not fit the env are refused in words, before anything runs.

Example (a trainer's rollout)::

    seated = seating(config, await pool.info())
    seated.require_one_trajectory("trl")  # GRPO: one trajectory per prompt
    executor = Executor(pool, policy, opponents=seated.opponents, seats=seated.seats)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agenthub.config import MultiPlayerConfig
from agenthub.errors import ConfigError, UnknownNameError
from agenthub.plugins import ORACLE, PluginHost, get_plugin_host
from agenthub.protocols import Agent
from agenthub.specs import AgentSpec
from agenthub.types import EnvInfo


@dataclass(frozen=True)
class Seating:
    """Who plays which seat of one env: what a trainer hands its :class:`~agenthub.rollout.Executor`."""

    env: str
    players: int
    seats: frozenset[int] | None
    """The seats the policy plays and learns from (``Executor(seats=...)``); None on a single-player env."""
    opponents: dict[int, Agent] = field(default_factory=dict)
    """The agent of each seat the policy does not play (``Executor(opponents=...)``); empty in self-play."""
    opponent: str | None = None
    """The opponent's registered name; None in self-play and on a single-player env."""
    seat_names: tuple[str, ...] = ()

    @property
    def multi_player(self) -> bool:
        return self.players > 1

    @property
    def trajectories_per_episode(self) -> int:
        """How many trajectories an episode gives to train on: one per kept seat."""
        return 1 if self.seats is None else len(self.seats)

    def require_one_trajectory(self, trainer: str) -> None:
        """Refuse more than one trained seat per episode, for a trainer that takes one trajectory per prompt."""
        if self.trajectories_per_episode > 1:
            assert self.seats is not None
            one = " or ".join(f"seat={s}" for s in sorted(self.seats))
            raise ConfigError(
                f"seat={sorted(self.seats)} trains on {len(self.seats)} seats of each {self.env!r} episode, but "
                f"{trainer} takes one trajectory per prompt; train one seat ({one}): in self-play the policy "
                "still plays the others"
            )

    def provenance(self) -> dict[str, Any]:
        """What each stored trajectory records of the seating (nothing on a single-player env)."""
        if self.seats is None:
            return {}
        out: dict[str, Any] = {"trained_seats": sorted(self.seats)}
        out["opponent"] = self.opponent if self.opponent is not None else "self-play"
        return out

    def describe(self) -> str:
        """One line for a plan or a log: who plays which seat."""
        if self.seats is None:
            return f"env {self.env!r} is single-player"
        names = self.seat_names or tuple(f"seat {s}" for s in range(self.players))
        trained = ", ".join(f"{s} ({names[s]})" for s in sorted(self.seats))
        others = "the policy too (self-play)" if self.opponent is None else f"opponent {self.opponent!r}"
        return f"the policy plays and learns from seat {trained}; the other seats: {others}"


def seating(
    config: MultiPlayerConfig, info: EnvInfo, *, host: PluginHost | None = None, make_opponent: bool = True
) -> Seating:
    """The executor's ``opponents`` and ``seats`` for ``config`` on the env ``info`` describes.

    ``make_opponent=False`` checks the opponent's name and settings without building it (a dry run,
    or a process that hands the settings on to the workers that play)."""
    seats = config.seats
    if info.players == 1:
        given = [f"{key}=" for key, value in (("seat", seats), ("opponent", config.opponent)) if value is not None]
        if config.opponent_kwargs:
            given.append("opponent.KEY=")
        if given:
            keys = " and ".join(given)
            raise ConfigError(
                f"env {info.name!r} is single-player; {keys} {'is' if len(given) == 1 else 'are'} for multi-player "
                f"envs (tictactoe, ...): leave {'it' if len(given) == 1 else 'them'} out"
            )
        return Seating(env=info.name, players=1, seats=None)
    names = tuple(info.seats or ())
    played = seats if seats is not None else [0]
    missing = [s for s in played if s >= info.players]
    if missing:
        raise ConfigError(
            f"env {info.name!r} has seats 0 to {info.players - 1}; seat={missing[0]} does not exist"
            + (f" (seats: {', '.join(f'{i}={n}' for i, n in enumerate(names))})" if names else "")
        )
    if config.opponent is None:
        if config.opponent_kwargs:
            raise ConfigError("opponent.KEY= settings go with opponent=NAME, the agent of the other seats; add it")
        return Seating(env=info.name, players=info.players, seats=frozenset(played), seat_names=names)
    others = [s for s in range(info.players) if s not in played]
    if not others:
        raise ConfigError(
            f"seat={sorted(played)} gives the policy every seat of {info.name!r}, leaving none for "
            f"opponent={config.opponent}; name fewer seats, or leave opponent= out for self-play"
        )
    spec = opponent_spec(config.opponent, info, host=host)
    opponent: Agent | None = None
    if make_opponent:
        try:
            opponent = spec.make(**config.opponent_kwargs)
        except TypeError as exc:
            raise ConfigError(
                f"opponent={config.opponent} does not take the settings {config.opponent_kwargs}: {exc}; "
                "fix or drop the opponent.KEY= settings"
            ) from None
    return Seating(
        env=info.name,
        players=info.players,
        seats=frozenset(played),
        opponents=dict.fromkeys(others, opponent) if opponent is not None else {},
        opponent=spec.name,
        seat_names=names,
    )


def opponent_spec(name: str, info: EnvInfo, *, host: PluginHost | None = None) -> AgentSpec:
    """The registered agent ``name`` names as ``info``'s opponent: ``oracle`` is the env's own."""
    host = host or get_plugin_host()
    try:
        if name == ORACLE or info.name in host.envs:
            spec = host.agent_for(host.env(info.name), name)
        else:  # an env served elsewhere (url=) and not installed here: any agent but its oracle
            spec = host.agent(name)
    except UnknownNameError as exc:
        raise ConfigError(f"opponent={name}: {exc}") from None
    if spec.env is not None and spec.env != info.name:
        raise ConfigError(
            f"opponent={name} plays env {spec.env!r} only, not {info.name!r}; choose an agent for {info.name!r} "
            "(oracle, random, ...) or leave opponent= out for self-play"
        )
    return spec
