"""``agenthub mcp env=NAME [transport=stdio|http] [port=8000 token=SECRET max_sessions=256 ttl=600]``."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Literal

from agenthub._version import __version__
from agenthub.cli.overrides import add_overrides
from agenthub.cli.serve_command import check_exposure
from agenthub.config import build_config
from agenthub.plugins import get_plugin_host
from agenthub.service.settings import ServiceSettings
from agenthub.specs import CommandSpec


class MCPConfig(ServiceSettings):
    env: str
    transport: Literal["stdio", "http"] = "stdio"


def configure(parser: argparse.ArgumentParser) -> None:
    add_overrides(parser, "env=guess transport=stdio|http port=8000 max_sessions=256 ttl=600 token=SECRET")
    parser.add_argument("--ready-file", default=None, help="write {url, pid} here once listening (transport=http)")
    parser.add_argument("--insecure", action="store_true", help="allow a host beyond loopback with no token")


def run(args: argparse.Namespace) -> int:
    import asyncio

    from agenthub.service.mcp import EnvMCP  # needs the optional mcp SDK; says how to install it

    config = build_config(MCPConfig, args.overrides, config_file=args.config)
    spec = get_plugin_host().env(config.env)
    settings = ServiceSettings.model_validate(config.model_dump(include=config.model_fields_set - {"env", "transport"}))
    served = EnvMCP.standalone(spec, settings)
    if config.transport == "stdio":
        asyncio.run(served.run_stdio())  # stdout carries the protocol: print nothing else
        return 0
    warning = check_exposure(settings, insecure=args.insecure)
    if warning:
        print(warning, flush=True)

    def ready(url: str) -> None:
        print(f"agenthub mcp: env {spec.name!r} over MCP (streamable HTTP) at {url}", flush=True)
        if args.ready_file:
            Path(args.ready_file).write_text(json.dumps({"url": url, "pid": os.getpid()}))

    asyncio.run(served.run_http(on_ready=ready))
    return 0


COMMANDS = (
    CommandSpec(
        "mcp",
        "Serve an environment as an MCP server (stdio or streamable HTTP): tools to list tasks and play.",
        configure,
        run,
        __version__,
    ),
)
