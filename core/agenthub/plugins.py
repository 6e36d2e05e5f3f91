"""Plugin discovery and lookup.

Plugins are modules exposed through the ``agenthub`` entry-point group. The
built-in pieces are plugins too, registered through the same hooks. A plugin
that fails to import or to register is recorded and reported by
``agenthub plugins``; it never breaks the others.

Environment variables:

* ``AGENTHUB_PLUGINS``: comma-separated entry-point names to load; unset loads
  all, empty loads none (the built-ins are always loaded).
* ``AGENTHUB_TRACE_PLUGINS=1``: print every hook call to stderr.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any, Generic, TypeVar

import pluggy

from agenthub import hookspecs
from agenthub._version import __version__
from agenthub.cli.plugin_catalogue import shipped
from agenthub.errors import ConfigError, PluginError, UnknownNameError
from agenthub.specs import AgentSpec, CommandSpec, EnvSpec, HorizonSpec, Spec, TrainerSpec

ENTRY_POINT_GROUP = "agenthub"
PLUGINS_ENV_VAR = "AGENTHUB_PLUGINS"
TRACE_ENV_VAR = "AGENTHUB_TRACE_PLUGINS"
ORACLE = "oracle"
"""The agent name that stands for the env's own oracle (``agent=oracle``)."""
BUILTIN_PLUGINS = {"builtin": "agenthub.builtin.plugin", "builtin-commands": "agenthub.cli.builtin_commands"}

S = TypeVar("S", EnvSpec, AgentSpec, TrainerSpec, CommandSpec, HorizonSpec)


@functools.cache
def _first_party() -> dict[str, str]:
    """Short name -> kind of the first-party plugins (package data: no distribution listing, for the hint is
    built on every lookup), so a missing one's hint names its install command."""
    return dict(shipped())


_HOOKS: dict[str, tuple[str, type[Spec]]] = {
    "agenthub_register_envs": ("env", EnvSpec),
    "agenthub_register_agents": ("agent", AgentSpec),
    "agenthub_register_trainers": ("trainer", TrainerSpec),
    "agenthub_register_commands": ("command", CommandSpec),
    "agenthub_register_horizons": ("horizon", HorizonSpec),
}


@dataclass
class PluginRecord:
    """One loaded (or failed) plugin, as ``agenthub plugins`` reports it."""

    name: str
    distribution: str | None
    version: str | None
    builtin: bool = False
    hooks: list[str] = field(default_factory=list)
    registered: dict[str, list[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "builtin": self.builtin,
            "hooks": self.hooks,
            "registered": self.registered,
            "errors": self.errors,
        }


class SpecTable(Generic[S]):
    """Specs of one kind by name, with "did you mean" lookups."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._specs: dict[str, S] = {}
        self._owner: dict[str, str] = {}

    def add(self, spec: S, owner: str) -> None:
        if spec.name in self._specs:
            raise PluginError(
                f"{self.kind} {spec.name!r} is registered by both {self._owner[spec.name]!r} and {owner!r}; "
                f"{owner!r}'s was ignored. Uninstall one of them, or choose with {PLUGINS_ENV_VAR}."
            )
        self._specs[spec.name] = spec
        self._owner[spec.name] = owner

    def names(self) -> list[str]:
        return sorted(self._specs)

    def owner(self, name: str) -> str:
        return self._owner[name]

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __iter__(self) -> Iterator[S]:
        return iter(self._specs[name] for name in self.names())

    def get(self, name: str, hint: str = "") -> S:
        try:
            return self._specs[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self.names(), hint=hint) from None


class PluginHost:
    """Loads plugins and holds everything they registered."""

    def __init__(self, *, load_entry_points: bool = True, extra_plugins: Iterable[ModuleType | object] = ()) -> None:
        self.manager = pluggy.PluginManager(ENTRY_POINT_GROUP)
        self.manager.add_hookspecs(hookspecs)
        self._trace = bool(os.environ.get(TRACE_ENV_VAR))
        self.records: dict[str, PluginRecord] = {}
        self.envs: SpecTable[EnvSpec] = SpecTable("env")
        self.agents: SpecTable[AgentSpec] = SpecTable("agent")
        self.trainers: SpecTable[TrainerSpec] = SpecTable("trainer")
        self.commands: SpecTable[CommandSpec] = SpecTable("command")
        self.horizons: SpecTable[HorizonSpec] = SpecTable("horizon")
        for name, module_name in BUILTIN_PLUGINS.items():
            self._add_plugin(importlib.import_module(module_name), name, "agenthub", __version__, builtin=True)
        if load_entry_points:
            self._load_entry_points()
        for plugin in extra_plugins:
            name = getattr(plugin, "__name__", None) or type(plugin).__name__
            self._add_plugin(plugin, name, None, None)

    # -- loading ------------------------------------------------------------

    def _load_entry_points(self) -> None:
        wanted = os.environ.get(PLUGINS_ENV_VAR)
        allowed = None if wanted is None else {n.strip() for n in wanted.split(",") if n.strip()}
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if allowed is not None and ep.name not in allowed:
                continue
            dist_name, version = _distribution_of(ep)
            try:
                plugin = ep.load()
            except Exception as exc:  # a broken plugin is reported, never fatal
                self.records[ep.name] = PluginRecord(
                    ep.name, dist_name, version, errors=[f"import failed: {type(exc).__name__}: {exc}"]
                )
                continue
            self._add_plugin(plugin, ep.name, dist_name, version)

    def _add_plugin(
        self, plugin: object, name: str, dist_name: str | None, version: str | None, *, builtin: bool = False
    ) -> None:
        record = PluginRecord(name, dist_name, version, builtin=builtin)
        self.records[name] = record
        try:
            self.manager.register(plugin, name=name)
        except Exception as exc:
            record.errors.append(f"registration failed: {type(exc).__name__}: {exc}")
            return
        for impl_hook in self.manager.get_hookcallers(plugin) or []:
            record.hooks.append(impl_hook.name)
        for hook_name, (kind, spec_type) in _HOOKS.items():
            caller = getattr(self.manager.hook, hook_name)
            for impl in caller.get_hookimpls():
                if impl.plugin is plugin:
                    self._collect(record, impl.function, kind, spec_type, caller)

    def _collect(
        self,
        record: PluginRecord,
        function: Callable[..., object],
        kind: str,
        spec_type: type[Spec],
        caller: pluggy.HookCaller,
    ) -> None:
        table: SpecTable[Any] = getattr(self, kind + "s")

        def register(spec: Spec) -> None:
            if not isinstance(spec, spec_type):
                raise PluginError(
                    f"{caller.name} must register {spec_type.__name__} objects, got {type(spec).__name__}"
                )
            if spec.version is None and record.version is not None:
                object.__setattr__(spec, "version", record.version)  # frozen dataclass, filled once here
            table.add(spec, record.name)
            record.registered.setdefault(kind, []).append(spec.name)

        try:
            function(register=register)
        except Exception as exc:  # keep what was registered before the failure
            record.errors.append(f"{caller.name} failed: {type(exc).__name__}: {exc}")
        if self._trace:
            print(
                f"agenthub: plugin {record.name!r} {caller.name} -> {record.registered.get(kind, [])}"
                + (f" errors: {record.errors}" if record.errors else ""),
                file=sys.stderr,
            )

    # -- lookups ------------------------------------------------------------

    def _failed_hint(self, kind: str = "", name: str = "") -> str:
        failed = [r.name for r in self.records.values() if r.errors]
        hint = "Install more with `agenthub install NAME`"
        if kind and name and _first_party().get(name) == kind:
            hint = f"{kind} {name!r} is a plugin of its own: install it with `agenthub install {kind}-{name}`"
        if failed:
            hint += f"; plugins that failed to load: {', '.join(sorted(failed))} (see `agenthub plugins`)"
        return hint

    def env(self, name: str) -> EnvSpec:
        if name.startswith("gym:") and name not in self.envs:
            from agenthub.gymnasium.importer import gym_env_spec  # gymnasium envs are built on request, not registered

            self.envs.add(gym_env_spec(name), owner="gymnasium")
        if name.startswith("reasoning_gym:") and name not in self.envs:
            from agenthub.reasoning_gym_import import ORACLE_SPEC, reasoning_gym_env_spec  # built on request too

            self.envs.add(reasoning_gym_env_spec(name), owner="reasoning-gym")
            if ORACLE_SPEC.name not in self.agents:
                self.agents.add(ORACLE_SPEC, owner="reasoning-gym")
        if name.startswith("textarena:") and name not in self.envs:
            from agenthub.textarena_import import textarena_env_spec  # TextArena's games, built on request too

            self.envs.add(textarena_env_spec(name), owner="textarena")
        return self.envs.get(name, self._failed_hint("env", name))

    def agent(self, name: str) -> AgentSpec:
        return self.agents.get(name, self._failed_hint("agent", name))

    def agent_for(self, env: EnvSpec, name: str | None) -> AgentSpec:
        """The agent ``name`` names for ``env``: ``oracle`` (or None) is the env's own oracle."""
        if name is None or name == ORACLE:
            if env.oracle is None:
                raise ConfigError(f"env {env.name!r} registers no oracle; choose a policy with agent=NAME")
            return self.agent(env.oracle)
        if name in self.agents:
            return self.agents.get(name)
        # "oracle" is a name too, so that agent=orcale is answered with it
        choices = [ORACLE, *self.agents.names()] if env.oracle else self.agents.names()
        raise UnknownNameError("agent", name, choices, hint=self._failed_hint("agent", name))

    def trainer(self, name: str) -> TrainerSpec:
        return self.trainers.get(name, self._failed_hint("trainer", name))

    def command(self, name: str) -> CommandSpec:
        return self.commands.get(name, self._failed_hint())

    def horizon(self, name: str) -> HorizonSpec:
        return self.horizons.get(name, self._failed_hint())

    def failures(self) -> list[PluginRecord]:
        return [r for r in self.records.values() if r.errors]


def _distribution_of(ep: EntryPoint) -> tuple[str | None, str | None]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return None, None
    return dist.metadata["Name"], dist.version


_host: PluginHost | None = None


def get_plugin_host() -> PluginHost:
    """The process-wide plugin host, loaded on first use."""
    global _host
    if _host is None:
        _host = PluginHost()
    return _host


def set_plugin_host(host: PluginHost | None) -> None:
    """Replace the process-wide host (tests register their own plugins this way); None reloads lazily."""
    global _host
    _host = host
