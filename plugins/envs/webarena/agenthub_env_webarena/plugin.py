"""Registers the ``webarena`` env and its ``webarena-oracle`` agent; starts no browser, reads no task until asked."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from agenthub import AgentSpec, EnvSpec, TaskSplit, hookimpl, measured_footprint

from agenthub_env_webarena import __version__

# WebArena's system prompt for the id-based accessibility-tree action space (its p_cot_id_actree_2s intro),
# shipped as data so that it can be read, diffed and overridden without code.
INSTRUCTIONS = resources.files(__package__).joinpath("prompts/system.md").read_text(encoding="utf-8")

SERVICE_DEFAULTS = {"max_sessions": 32, "idle_envs": 0, "ttl": 600.0}
"""Each open session holds a browser context (a renderer process, tens of MB); ``idle_envs: 0`` closes a
session's context as soon as it ends instead of keeping an instance (and its pages) for reuse."""


def _splits() -> dict[str, TaskSplit]:
    from agenthub_env_webarena.env import task_splits  # imported when a server starts, not at discovery

    return dict(task_splits())


@hookimpl
def agenthub_register_envs(register: Callable[[EnvSpec], None]) -> None:
    register(
        EnvSpec(
            name="webarena",
            instructions=INSTRUCTIONS,
            factory="agenthub_env_webarena.env:WebArenaEnv",
            splits=_splits,
            default_max_turns=30,
            description="WebArena tasks (config files, id-based actions, its evaluators) in a real Chromium; "
            "point it at WebArena's sites with env_kwargs.sites.NAME=URL.",
            version=__version__,
            service_defaults=SERVICE_DEFAULTS,
            oracle="webarena-oracle",
            # The PSS of a server's whole tree (server, Playwright's driver, Chromium, the shop) by open sessions, as
            # benchmarks/webarena_env.py measured it (footprints.json).
            footprint=measured_footprint(__package__, "webarena"),
        )
    )


@hookimpl
def agenthub_register_agents(register: Callable[[AgentSpec], None]) -> None:
    register(
        AgentSpec(
            name="webarena-oracle",
            factory="agenthub_env_webarena.oracle:WebArenaOracle",
            description="Carries out each built-in task's oracle block through the accessibility tree "
            "(ids found by role and name, answers read off the page).",
            version=__version__,
            env="webarena",
        )
    )
