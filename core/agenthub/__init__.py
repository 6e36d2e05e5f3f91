"""agenthub: a plugin-based, gym-style environment hub for training LLM agents.

Light names are imported eagerly; the service, client and launcher (FastAPI,
uvicorn, httpx, gymnasium) load on first use, so that a plugin module that
only does ``from agenthub import hookimpl, EnvSpec`` stays cheap to import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from agenthub._version import __version__
from agenthub.errors import (
    AgenthubError,
    ConfigError,
    EnvServerUnavailableError,
    EnvServiceError,
    EpisodeDoneError,
    PluginError,
    ServerBusyError,
    SessionNotFoundError,
    UnknownNameError,
)
from agenthub.hookimpl import hookimpl
from agenthub.plugins import PluginHost, get_plugin_host
from agenthub.protocols import Agent, AgentEpisode, Environment, StepTuple, Trainer
from agenthub.specs import AgentSpec, CommandSpec, EnvSpec, TrainerSpec
from agenthub.types import (
    PROTOCOL_VERSION,
    Action,
    AgentReply,
    EnvInfo,
    Observation,
    Outcome,
    StepResult,
    Task,
    TaskId,
    TaskSplit,
    TokenTrace,
    ToolCall,
    Trajectory,
    Turn,
)

if TYPE_CHECKING:
    from agenthub.make import make
    from agenthub.rollout.episode import play_episode
    from agenthub.rollout.tokens import ContextLengthExceeded
    from agenthub.service.client import EnvClient, RemoteSession, SyncEnvClient
    from agenthub.service.gym_adapter import RemoteGymEnv
    from agenthub.service.launcher import LocalServer, ThreadedServer
    from agenthub.service.server import create_app
    from agenthub.service.settings import ServiceSettings

_LAZY = {
    "make": "agenthub.make",
    "ContextLengthExceeded": "agenthub.rollout.tokens",
    "play_episode": "agenthub.rollout.episode",
    "EnvClient": "agenthub.service.client",
    "RemoteSession": "agenthub.service.client",
    "SyncEnvClient": "agenthub.service.client",
    "RemoteGymEnv": "agenthub.service.gym_adapter",
    "LocalServer": "agenthub.service.launcher",
    "ThreadedServer": "agenthub.service.launcher",
    "create_app": "agenthub.service.server",
    "ServiceSettings": "agenthub.service.settings",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agenthub' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "PROTOCOL_VERSION",
    "Action",
    "Agent",
    "AgentEpisode",
    "AgentReply",
    "AgentSpec",
    "AgenthubError",
    "CommandSpec",
    "ConfigError",
    "ContextLengthExceeded",
    "EnvClient",
    "EnvInfo",
    "EnvServerUnavailableError",
    "EnvServiceError",
    "EnvSpec",
    "Environment",
    "EpisodeDoneError",
    "LocalServer",
    "Observation",
    "Outcome",
    "PluginError",
    "PluginHost",
    "RemoteGymEnv",
    "RemoteSession",
    "ServerBusyError",
    "ServiceSettings",
    "SessionNotFoundError",
    "StepResult",
    "StepTuple",
    "SyncEnvClient",
    "Task",
    "TaskId",
    "TaskSplit",
    "ThreadedServer",
    "TokenTrace",
    "ToolCall",
    "Trainer",
    "TrainerSpec",
    "Trajectory",
    "Turn",
    "UnknownNameError",
    "__version__",
    "create_app",
    "get_plugin_host",
    "hookimpl",
    "make",
    "play_episode",
]
