"""``agenthub check env=NAME [url=... agent=... sessions=N] [--json]``."""

from __future__ import annotations

import argparse
import json

from pydantic import BaseModel, ConfigDict, Field

from agenthub.config import build_config
from agenthub.errors import ConfigError
from agenthub.testing.conformance import check_env


class CheckConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    env: str | None = Field(default=None, description="an installed env, served on loopback for the check")
    url: str | None = Field(default=None, description="or a server that is already running")
    token: str | None = None
    agent: str | None = Field(default=None, description="drives an episode to its end; default: the env's oracle")
    sessions: int = Field(default=8, ge=1)


def run(args: argparse.Namespace) -> int:
    config = build_config(CheckConfig, args.overrides, config_file=args.config)
    if config.env is None and config.url is None:
        raise ConfigError("say which env to check: env=NAME (an installed env) or url=http://HOST:PORT")
    report = check_env(config.env, url=config.url, token=config.token, agent=config.agent, sessions=config.sessions)
    print(json.dumps(report.as_dict(), indent=2) if args.json else report.summary())
    return 0 if report.passed else 1
