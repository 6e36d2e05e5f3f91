"""``agenthub check env=NAME [url=... agent=... agent.KEY=... env_kwargs.KEY=... sessions=N] [--json]``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agenthub._version import __version__
from agenthub.cli.overrides import add_overrides
from agenthub.config import build_config
from agenthub.errors import ConfigError
from agenthub.plugins import get_plugin_host
from agenthub.protocols import Agent
from agenthub.service.settings import ServiceSettings
from agenthub.specs import CommandSpec


class CheckConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    env: str | None = Field(default=None, description="an installed env, served on loopback for the check")
    url: str | None = Field(default=None, description="or a server that is already running")
    token: str | None = None
    agent: str | None = Field(default=None, description="drives an episode to its end; default: the env's oracle")
    agent_kwargs: dict[str, Any] = Field(default_factory=dict, description="settings for the agent (agent.KEY=...)")
    env_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="settings for the env server the check starts (not used with url=)"
    )
    sessions: int = Field(default=8, ge=1)


def configure(parser: argparse.ArgumentParser) -> None:
    add_overrides(parser, "env=guess env_kwargs.high=32 agent=random, or url=http://127.0.0.1:8000 sessions=8")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    # imported here, not for `agenthub --help`
    from agenthub.option_checks import check_agent_kwargs, check_env_kwargs, option_aliases
    from agenthub.testing.conformance import check_env

    config = build_config(CheckConfig, option_aliases(args.overrides), config_file=args.config)
    if config.env is None and config.url is None:
        raise ConfigError("say which env to check: env=NAME (an installed env) or url=http://HOST:PORT")
    if config.url is not None and config.env_kwargs:
        raise ConfigError("env_kwargs configure the server check starts; with url= set them on that server")
    agent: str | Agent | None = config.agent
    settings = None
    if config.env is not None:
        host = get_plugin_host()
        spec = host.env(config.env)
        # the check serves the env in this process and builds the agent here: both are imported anyway
        check_env_kwargs(spec, config.env_kwargs, may_import=True)
        check_agent_kwargs(spec, config.agent, config.agent_kwargs, may_import=True, host=host)
        settings = ServiceSettings(env_kwargs=config.env_kwargs) if config.env_kwargs else None
        if config.agent is not None or config.agent_kwargs:  # agent_for also takes agent=oracle
            agent = host.agent_for(spec, config.agent).make(**config.agent_kwargs)
    elif config.agent_kwargs and config.agent is not None:
        agent = get_plugin_host().agent(config.agent).make(**config.agent_kwargs)
    report = check_env(
        config.env, url=config.url, token=config.token, agent=agent, sessions=config.sessions, settings=settings
    )
    print(json.dumps(report.as_dict(), indent=2) if args.json else report.summary())
    return 0 if report.passed else 1


COMMANDS = (
    CommandSpec(
        "check", "Run the conformance checks on an environment, through its service.", configure, run, __version__
    ),
)
