"""``agenthub play env=NAME [agent=NAME|human task_id=... url=... env_kwargs.KEY=...] [opponent=NAME seat=N]``:
one episode, printed turn by turn.

``agent=human`` is you: each turn shows the observation and reads your action from stdin (one line).

A multi-player env (``tictactoe``, ...) is played seat by seat, each turn headed by the seat on
turn: ``agent`` plays every seat (``agent=human``: you play both sides), or, with
``opponent=NAME``, ``agent`` plays seat ``seat`` (default 0) and ``opponent`` every other seat,
e.g. ``agenthub play env=tictactoe agent=human seat=1 opponent=oracle`` to play O against the
oracle. The game ends with each seat's result (win, draw or loss) and return.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import textwrap
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agenthub._version import __version__
from agenthub.cli.overrides import add_overrides
from agenthub.config import build_config
from agenthub.errors import AgenthubError, ConfigError
from agenthub.plugins import get_plugin_host
from agenthub.protocols import Agent, AgentEpisode
from agenthub.specs import CommandSpec, EnvSpec
from agenthub.types import AgentReply, EnvInfo, Observation, Task, TaskId, Trajectory, Turn

HUMAN = "human"
"""The agent name of the person at the terminal: actions are read from stdin."""


class PlayConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    env: str = "guess"
    agent: str | None = Field(
        default=None, description="default (or 'oracle'): the env's oracle; 'human': you, typing each action"
    )
    agent_kwargs: dict[str, Any] = Field(default_factory=dict)
    opponent: str | None = Field(
        default=None,
        description="multi-player envs: the agent of every seat but `seat` ('human' too); default: `agent` "
        "plays every seat",
    )
    opponent_kwargs: dict[str, Any] = Field(default_factory=dict)
    seat: int = Field(default=0, ge=0, description="multi-player envs with an opponent: the seat `agent` plays")
    task_id: TaskId | None = None
    split: str | None = None
    seed: int | None = None
    max_turns: int | None = Field(default=None, ge=1)
    env_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="settings for the env server this play starts (not used with url=)"
    )
    url: str | None = Field(default=None, description="an already running server; default: start one")
    token: str | None = None


class HumanAgent:
    """The person at the terminal: each action is one line read from stdin."""

    def __init__(self, prompt: str = "your action> ") -> None:
        self.prompt = prompt

    def start_episode(self, task: Task, env: EnvInfo) -> HumanEpisode:
        return HumanEpisode(self.prompt)


class HumanEpisode:
    def __init__(self, prompt: str) -> None:
        self.prompt = prompt

    async def act(self, observation: Observation) -> AgentReply:
        import asyncio

        actions = observation.info.get("available_actions")
        if isinstance(actions, list) and actions:
            print(f"    (actions: {', '.join(map(str, actions))})")
        while True:
            print(self.prompt, end="", flush=True)
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line:
                print()
                raise AgenthubError("stdin ended before the episode did; type one action per line (Ctrl-D quits)")
            action = line.strip()
            if action:
                if not sys.stdin.isatty():
                    print(action)  # a scripted stdin is not echoed: show what was played
                return AgentReply(action=action, text=action)


def configure(parser: argparse.ArgumentParser) -> None:
    add_overrides(parser, "env=guess agent=random agent.seed=1 task_id=3 split=test env_kwargs.high=32 url=http://...")


def run(args: argparse.Namespace) -> int:
    # imported here, not for `agenthub --help`
    import asyncio

    from agenthub.option_checks import check_run_options, option_aliases
    from agenthub.service.launcher import LocalServer

    config = build_config(PlayConfig, option_aliases(args.overrides), config_file=args.config)
    spec = get_plugin_host().env(config.env)
    check_run_options(spec, config, import_agents=True)  # a misspelt setting, before a server starts
    task = Task(env=spec.name, task_id=config.task_id, split=config.split, seed=config.seed, max_turns=config.max_turns)
    seats = _seat_agents(config, spec)  # refuses a bad agent, opponent or seat before a server starts
    if config.url is not None and config.env_kwargs:
        raise ConfigError("env_kwargs configure the server play starts; with url= set them on that server")
    with contextlib.ExitStack() as stack:
        url = config.url
        if url is None:
            server = stack.enter_context(LocalServer(spec.name, overrides=_server_overrides(config)))
            url = server.url
        if seats is None:
            agent, agent_name = _agent(spec, config.agent, config.agent_kwargs, "your action> ")
            print(f"env {spec.name!r} at {url}, agent {agent_name!r}")
            return _report(asyncio.run(_play(url, config.token, agent, task)))
        print(f"env {spec.name!r} at {url}, " + ", ".join(label for _, label in seats.values()))
        return asyncio.run(_play_seats(url, config.token, seats, task))


def _server_overrides(config: PlayConfig) -> dict[str, Any]:
    """The settings of the server play starts (as ``agenthub serve`` takes them)."""
    overrides: dict[str, Any] = {"token": config.token} if config.token else {}
    if config.env_kwargs:
        overrides["env_kwargs"] = config.env_kwargs
    return overrides


def _agent(spec: EnvSpec, name: str | None, kwargs: dict[str, Any], prompt: str) -> tuple[Agent, str]:
    """The agent ``name`` names, built, and its name; ``human`` is the terminal, asking with ``prompt``."""
    if name == HUMAN:
        if kwargs:
            raise ConfigError(f"agent 'human' takes no settings (got {sorted(kwargs)}); leave them out")
        return HumanAgent(prompt), HUMAN
    agent_spec = get_plugin_host().agent_for(spec, name)
    return agent_spec.make(**kwargs), agent_spec.name


def _seat_agents(config: PlayConfig, spec: EnvSpec) -> dict[int, tuple[Agent, str]] | None:
    """Multi-player envs: each seat's agent and its label (``X (seat 0): human``); None for a single-player env."""
    if spec.players == 1:
        if config.opponent is not None or config.seat or config.opponent_kwargs:
            raise ConfigError(
                f"env {spec.name!r} is single-player; opponent= and seat= are for multi-player envs (tictactoe, ...)"
            )
        if config.agent != HUMAN:
            get_plugin_host().agent_for(spec, config.agent)  # an unknown agent is refused before a server starts
        return None
    if config.opponent is None and (config.seat or config.opponent_kwargs):
        raise ConfigError("seat= and opponent_kwargs go with opponent=NAME, the agent of the other seats")
    if config.seat >= spec.players:
        raise ConfigError(f"env {spec.name!r} has seats 0 to {spec.players - 1}; seat={config.seat} does not exist")
    names = list(spec.seats or (f"seat {s}" for s in range(spec.players)))
    seats: dict[int, tuple[Agent, str]] = {}
    built: dict[str, tuple[Agent, str]] = {}  # one instance of each named agent, for all the seats it plays
    for seat in range(spec.players):
        mine = config.opponent is None or seat == config.seat
        if mine:
            role, name, kwargs = "agent", config.agent, config.agent_kwargs
        else:
            role, name, kwargs = "opponent", config.opponent, config.opponent_kwargs
        where = names[seat] if names[seat] == f"seat {seat}" else f"{names[seat]} (seat {seat})"
        if name == HUMAN:  # a prompt per seat, so that it says whose turn it is
            agent, agent_name = _agent(spec, name, kwargs, f"{where} to move> ")
        else:
            if role not in built:
                built[role] = _agent(spec, name, kwargs, "")
            agent, agent_name = built[role]
        seats[seat] = (agent, f"{where}: {agent_name}")
    return seats


async def _play(url: str, token: str | None, agent: Agent, task: Task) -> Trajectory:
    from agenthub.rollout.episode_loop import play_episode
    from agenthub.service.client import EnvClient

    def show(_key: str, number: int, turn: Turn) -> None:
        print(f"[{number}] > {turn.action}\n    {turn.observation}")

    async with EnvClient(url, token=token) as client:
        return await play_episode(client, agent, task, on_turn=show, on_start=_show_start)


def _report(trajectory: Trajectory) -> int:
    print(f"\noutcome: {trajectory.outcome.value}   reward: {trajectory.reward:g}   turns: {len(trajectory.turns)}")
    if trajectory.error:
        print(f"error: {trajectory.error}")
    return 1 if trajectory.outcome.is_infra_failure else 0


def _show_start(task_id: TaskId | None, observation: str) -> None:
    print(f"task {task_id}\n    {observation}")


class _Shown:
    """A seat's agent whose turns are printed: the seat on turn, what it sees, what it plays."""

    def __init__(self, agent: Agent, seat: int, label: str, table: _Table) -> None:
        self.agent = agent
        self.seat = seat
        self.label = label
        self.table = table

    def start_episode(self, task: Task, env: EnvInfo) -> AgentEpisode:
        if not self.table.started:
            self.table.started = True
            print(f"task {task.task_id}")
        return _ShownEpisode(self.agent.start_episode(task, env), self)


class _ShownEpisode:
    def __init__(self, episode: AgentEpisode, shown: _Shown) -> None:
        self.episode = episode
        self.shown = shown

    async def act(self, observation: Observation) -> AgentReply:
        table = self.shown.table
        table.turns += 1
        table.last_seat = self.shown.seat
        print(f"\n[{table.turns}] {self.shown.label}\n{_indent(observation.text)}")
        reply = await self.episode.act(observation)
        if not isinstance(self.shown.agent, HumanAgent):
            print(f"    > {reply.action}")
        return reply


class _Table:
    """What the seats' printers share: whether the task was shown, the turns so far, the last seat to act."""

    def __init__(self) -> None:
        self.started = False
        self.turns = 0
        self.last_seat: int | None = None


async def _play_seats(url: str, token: str | None, seats: Mapping[int, tuple[Agent, str]], task: Task) -> int:
    from agenthub.rollout.episode_loop import EpisodePlay as SeatedEpisodePlay
    from agenthub.service.client import EnvClient

    table = _Table()
    agents = {s: _Shown(agent, s, label, table) for s, (agent, label) in seats.items()}
    async with EnvClient(url, token=token) as client:
        info = await client.info()
        play = SeatedEpisodePlay(agents, task, info)
        await play.play(client)
        trajectories = play.trajectories(endpoint=client.base_url, provenance={}, key="play")
    last = trajectories[table.last_seat] if table.last_seat is not None else None
    if play.ended and last is not None and last.turns and last.turns[-1].observation:
        print(f"\n{_indent(last.turns[-1].observation)}")
    print()
    for trajectory in trajectories:
        assert trajectory.seat is not None
        result = trajectory.seat_result or trajectory.outcome.value
        label = seats[trajectory.seat][1]
        print(f"{label}   {result}   return: {trajectory.reward:g}   turns: {len(trajectory.turns)}")
    winners = [seats[t.seat][1].split(":")[0] for t in trajectories if t.seat is not None and t.seat_result == "win"]
    ended = f"game over, {winners[0]} won" if winners else "game over, a draw"
    print(f"outcome: {ended if play.ended else play.outcome.value}   steps: {play.steps}")
    if play.error:
        print(f"error: {play.error}")
    return 1 if play.outcome.is_infra_failure else 0


def _indent(text: str) -> str:
    return textwrap.indent(text, "    ", lambda _: True)


COMMANDS = (
    CommandSpec(
        "play",
        "Serve an environment locally and play one episode with an agent (default: the env's oracle).",
        configure,
        run,
        __version__,
    ),
)
