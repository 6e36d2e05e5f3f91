"""What a plugin registers: a named spec per environment, agent, trainer or command.

Factories may be given as ``"package.module:attribute"`` strings, imported
only on first use, so that listing plugins never imports a heavy package.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agenthub.errors import PluginError
from agenthub.protocols import Agent, Environment, HorizonSchedule, Trainer
from agenthub.types import EnvInfo, TaskSplit

Factory = Callable[..., Any] | str

DEFAULT_MAX_ACTION_CHARS = 32_768
"""The longest action (in characters) an env takes unless its spec says otherwise: about 8,000 tokens
of English, room for a model's whole reply with its reasoning at the per-turn ``max_tokens`` of
multi-turn RL, and 500 times the longest action any seed env's oracle sends (65 characters)."""


def resolve_factory(factory: Factory, *, what: str) -> Callable[..., Any]:
    """Import a ``"module:attr"`` factory, or return a callable unchanged."""
    if callable(factory):
        return factory
    module_name, sep, attr = factory.partition(":")
    if not sep or not module_name or not attr:
        raise PluginError(f"{what}: factory {factory!r} is not of the form 'package.module:attribute'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise PluginError(
            f"{what}: cannot import {module_name!r} ({exc}); is the plugin installed with its dependencies?"
        ) from exc
    try:
        obj = getattr(module, attr)
    except AttributeError as exc:
        raise PluginError(f"{what}: module {module_name!r} has no attribute {attr!r}") from exc
    if not callable(obj):
        raise PluginError(f"{what}: {factory!r} is not callable")
    return obj  # type: ignore[no-any-return]


def _check_name(name: str, kind: str) -> None:
    if kind == "env" and name.startswith("gym:"):  # gymnasium ids: "gym:ALE/Pong-v5", "gym:minigrid:MiniGrid-..."
        name = name[4:].replace("/", "-").replace(":", "-")
    if kind == "env" and name.startswith("reasoning_gym:"):  # reasoning-gym generators: "reasoning_gym:leg_counting"
        name = name.removeprefix("reasoning_gym:")
    if kind == "env" and name.startswith("textarena:"):  # TextArena games: "textarena:TicTacToe-v0"
        name = name.removeprefix("textarena:")
    if not name or not all(c.isalnum() or c in "-_." for c in name):
        raise PluginError(f"{kind} name {name!r} must be non-empty and use only letters, digits, '-', '_' and '.'")


FOOTPRINT_SLACK_MIB = 64
"""Added to a server's measured memory wherever it is reserved (a pod's request, a Ray worker): the allocator,
imported plugins and the HTTP stack beyond the RSS a benchmark saw."""


@dataclass(frozen=True)
class Footprint:
    """What one server of an env costs on a node, as its plugin's benchmark measured it: the figures that
    ``agenthub deploy k8s`` requests for a pod and the Ray backend reserves for a server (docs/kubernetes.md)."""

    base_mib: float
    """Resident memory of a server with no session open (``benchmarks/env_plugins.py``'s ``rss_0_mib``)."""
    per_session_mib: float
    """Memory each open session adds (its ``per_session_kib`` / 1024), rounded up."""
    cpus: float = 1.0
    """CPUs a server keeps busy: a server is one process running one event loop, so 1 unless the env does its
    work in processes of its own."""
    source: str = ""
    """Where the figures come from: the benchmark and its result file."""

    def __post_init__(self) -> None:
        if self.base_mib < 0 or self.per_session_mib <= 0 or self.cpus < 0:
            raise PluginError(
                f"a footprint needs base_mib >= 0, per_session_mib > 0 and cpus >= 0, got base_mib={self.base_mib}, "
                f"per_session_mib={self.per_session_mib}, cpus={self.cpus}; measure them with benchmarks/env_plugins.py"
            )

    def with_per_session_mib(self, per_session_mib: float | None, source: str) -> Footprint:
        """This footprint with a user's figure for a session (None: unchanged)."""
        if per_session_mib is None:
            return self
        return Footprint(self.base_mib, per_session_mib, self.cpus, source)


DEFAULT_FOOTPRINT = Footprint(256.0, 16.0, source="default: the env declares no footprint")
"""For an env that declares none: generous for a pure-Python env. Measure yours (``benchmarks/env_plugins.py``)
and declare it in its ``EnvSpec``."""


@dataclass(frozen=True)
class EnvSpec:
    """An environment: how to build it and what the service advertises about it."""

    name: str
    factory: Factory
    splits: Mapping[str, TaskSplit] | Callable[[], Mapping[str, TaskSplit]]
    default_max_turns: int
    description: str = ""
    version: str | None = None
    action_format: Literal["text", "tool_call"] = "text"
    tools: list[dict[str, Any]] | None = None
    oracle: str | None = None
    """Name of a registered agent that solves (nearly) every task; used by checks and eval."""
    default_kwargs: Mapping[str, Any] = field(default_factory=dict)
    """Keyword arguments for ``factory``; ``agenthub serve env=NAME env_kwargs.x=...`` overrides them."""
    instructions: str | None = None
    """The system prompt a model plays this env with (rules, action format); shipped as data by
    the plugin, served in ``/v1/info``, overridable by agents' ``system_prompt`` setting."""
    inline_calls: bool = False
    """The env's construction, reset, step and close are pure-Python CPU work of well under a
    millisecond (no I/O, no subprocess, no JVM): its server runs them on the event loop instead of
    hopping to a thread, which costs more than such a call. Kinds of call that turn out slower go back
    to the thread pool (see ``agenthub.service.env_calls``)."""
    service_defaults: Mapping[str, Any] = field(default_factory=dict)
    """Server settings this env needs unless the user sets them, e.g. ``{"max_sessions": 16, "idle_envs": 0}``
    for an env that holds a JVM per session (see ``agenthub.service.settings.ServiceSettings``)."""
    players: int = 1
    """Seats per session; more than 1 makes it a multi-player env, whose factory builds an
    ``agenthub.MultiPlayerEnvironment`` (``docs/protocol.md``, Seats)."""
    seats: tuple[str, ...] | None = None
    """The seats' names, one per player (e.g. ``("X", "O")``), shown in ``/v1/info`` and eval reports."""
    max_action_chars: int = DEFAULT_MAX_ACTION_CHARS
    """The longest action the env takes, in characters (a tool call: its name and its arguments as JSON).
    The server answers a longer one as an invalid action before the env sees it, so no parser of the
    env's ever runs on more; advertised in ``/v1/info``. Keep it above the longest reply a model may
    legitimately send: in a text env the model's whole reply, reasoning included, is the action."""
    settings: tuple[str, ...] | None = None
    """The names ``env_kwargs.KEY=`` may use, for a factory that takes ``**kwargs``; None: read from the
    factory's signature (``agenthub.option_checks``), so that a misspelt one is refused before a server starts."""
    footprint: Footprint = DEFAULT_FOOTPRINT
    """A server's memory and CPU, as the plugin's benchmark measured them; Kubernetes and the Ray backend size
    servers by it. Not sent in ``/v1/info``."""
    cpu_recipe: str = ""
    """What a model trained from scratch on a CPU reaches on this env, and through which recipe, as the plugin's
    benchmark measured it (one sentence); empty: no measured CPU recipe. A launch refused for the context
    names every installed env that has one, so no core module lists envs by name."""

    def __post_init__(self) -> None:
        _check_name(self.name, "env")
        if not isinstance(self.footprint, Footprint):
            raise PluginError(f"env {self.name!r}: footprint must be an agenthub.Footprint, got {self.footprint!r}")
        if self.default_max_turns < 1:
            raise PluginError(f"env {self.name!r}: default_max_turns must be >= 1, got {self.default_max_turns}")
        if isinstance(self.max_action_chars, bool) or not isinstance(self.max_action_chars, int):
            raise PluginError(f"env {self.name!r}: max_action_chars must be an integer, got {self.max_action_chars!r}")
        if self.max_action_chars < 1:
            raise PluginError(f"env {self.name!r}: max_action_chars must be >= 1, got {self.max_action_chars}")
        if self.players < 1:
            raise PluginError(f"env {self.name!r}: players must be >= 1, got {self.players}")
        if self.seats is not None and len(self.seats) != self.players:
            raise PluginError(
                f"env {self.name!r}: seats names {len(self.seats)} seats but players is {self.players}; "
                "give one name per seat, or none"
            )

    def make(self, **kwargs: Any) -> Environment:
        """Build one environment instance."""
        build = resolve_factory(self.factory, what=f"env {self.name!r}")
        return build(**{**self.default_kwargs, **kwargs})  # type: ignore[no-any-return]

    def resolved_splits(self) -> dict[str, TaskSplit]:
        splits = self.splits() if callable(self.splits) else self.splits
        if not splits:
            raise PluginError(f"env {self.name!r} declares no task splits")
        return dict(splits)

    def info(self) -> EnvInfo:
        return EnvInfo(
            name=self.name,
            version=self.version or "0",
            action_format=self.action_format,
            default_max_turns=self.default_max_turns,
            splits=list(self.resolved_splits()),
            description=self.description,
            tools=self.tools,
            instructions=self.instructions,
            players=self.players,
            seats=list(self.seats) if self.seats is not None else None,
            max_action_chars=self.max_action_chars,
        )


@dataclass(frozen=True)
class AgentSpec:
    """A policy that ``agenthub eval agent=NAME`` can play with."""

    name: str
    factory: Factory
    description: str = ""
    version: str | None = None
    env: str | None = None
    """Set for agents that only work with one environment, such as its oracle."""
    settings: tuple[str, ...] | None = None
    """The names ``agent.KEY=`` may use, for a factory that takes ``**kwargs``; None: read from its signature."""
    writes_actions: bool = False
    """The agent writes its actions from the observation's text (a model's reply), so it plays any text env; a run
    refused for an agent that needs what the env does not give names every installed agent that does."""

    def __post_init__(self) -> None:
        _check_name(self.name, "agent")

    def make(self, **kwargs: Any) -> Agent:
        return resolve_factory(self.factory, what=f"agent {self.name!r}")(**kwargs)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class TrainerSpec:
    """A training backend that ``agenthub run trainer=NAME`` can start."""

    name: str
    factory: Factory
    description: str = ""
    version: str | None = None
    trains_on_cpu: bool = False
    """The trainer's framework trains on a machine without a GPU; a GPU-only trainer refused on such a machine
    names every installed trainer that does, so that no core module lists trainers by name."""

    def __post_init__(self) -> None:
        _check_name(self.name, "trainer")

    def make(self, **kwargs: Any) -> Trainer:
        return resolve_factory(self.factory, what=f"trainer {self.name!r}")(**kwargs)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class HorizonSpec:
    """A named schedule kind: ``horizon.kind=NAME`` builds ``factory(**the other keys)``."""

    name: str
    factory: Factory
    description: str = ""
    version: str | None = None

    def __post_init__(self) -> None:
        _check_name(self.name, "horizon")

    def make(self, **kwargs: Any) -> HorizonSchedule:
        return resolve_factory(self.factory, what=f"horizon {self.name!r}")(**kwargs)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class CommandSpec:
    """An ``agenthub`` sub-command.

    ``configure`` adds the command's arguments to its parser; ``run`` receives
    the parsed arguments and returns the process exit code.
    """

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    version: str | None = None

    def __post_init__(self) -> None:
        _check_name(self.name, "command")


Spec = EnvSpec | AgentSpec | TrainerSpec | CommandSpec | HorizonSpec
