"""agenthub: a plugin-based, gym-style environment hub for training LLM agents.

This module is the public API for env and agent plugins (CONTRIBUTING.md, "The public
API"); trainer plugins add :mod:`agenthub.rollout`, :mod:`agenthub.training` and
:mod:`agenthub.config`, and tests :mod:`agenthub.testing`. Light names are imported
eagerly; the service, client and launcher (FastAPI, uvicorn, httpx, gymnasium) load on
first use, so that a plugin module that only does ``from agenthub import hookimpl,
EnvSpec`` stays cheap to import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthub._version import __version__
from agenthub.env_reset import ResetStart, begin_reset
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
from agenthub.lazy_exports import lazy_exports
from agenthub.measured_footprints import measured_footprint
from agenthub.plugins import PluginHost, get_plugin_host
from agenthub.protocols import (
    Agent,
    AgentEpisode,
    Environment,
    HorizonSchedule,
    MultiPlayerEnvironment,
    SeatStep,
    StepTuple,
    Trainer,
)
from agenthub.specs import AgentSpec, CommandSpec, EnvSpec, Footprint, HorizonSpec, TrainerSpec
from agenthub.trainer_registration import trainer_hook
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
    TaskList,
    TaskSplit,
    TokenTrace,
    ToolCall,
    Trajectory,
    Turn,
)

if TYPE_CHECKING:
    from agenthub.gymnasium.remote_env import RemoteGymEnv
    from agenthub.make import make
    from agenthub.processes import popen, watch_parent
    from agenthub.rollout.episode_loop import play_episode
    from agenthub.rollout.token_assembly import ContextLengthExceeded
    from agenthub.service.async_client import EnvClient, RemoteSession
    from agenthub.service.launcher import LocalServer, ServerStartError, ThreadedServer
    from agenthub.service.server import create_app
    from agenthub.service.settings import ServiceSettings, apply_env_defaults
    from agenthub.service.sync_client import SyncEnvClient

__getattr__ = lazy_exports(
    __name__,
    {
        "make": "agenthub.make",
        "popen": "agenthub.processes",
        "watch_parent": "agenthub.processes",
        "ContextLengthExceeded": "agenthub.rollout.token_assembly",
        "play_episode": "agenthub.rollout.episode_loop",
        "EnvClient": "agenthub.service.async_client",
        "RemoteSession": "agenthub.service.async_client",
        "SyncEnvClient": "agenthub.service.sync_client",
        "RemoteGymEnv": "agenthub.gymnasium.remote_env",
        "LocalServer": "agenthub.service.launcher",
        "ServerStartError": "agenthub.service.launcher",
        "ThreadedServer": "agenthub.service.launcher",
        "create_app": "agenthub.service.server",
        "ServiceSettings": "agenthub.service.settings",
        "apply_env_defaults": "agenthub.service.settings",
    },
)

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
    "Footprint",
    "HorizonSchedule",
    "HorizonSpec",
    "LocalServer",
    "MultiPlayerEnvironment",
    "Observation",
    "Outcome",
    "PluginError",
    "PluginHost",
    "RemoteGymEnv",
    "RemoteSession",
    "ResetStart",
    "SeatStep",
    "ServerBusyError",
    "ServerStartError",
    "ServiceSettings",
    "SessionNotFoundError",
    "StepResult",
    "StepTuple",
    "SyncEnvClient",
    "Task",
    "TaskId",
    "TaskList",
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
    "apply_env_defaults",
    "begin_reset",
    "create_app",
    "get_plugin_host",
    "hookimpl",
    "lazy_exports",
    "make",
    "measured_footprint",
    "play_episode",
    "popen",
    "trainer_hook",
    "watch_parent",
]
