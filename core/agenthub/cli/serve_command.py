"""``agenthub serve env=NAME [mcp=true] [key=value ...]``.

With ``mcp=true`` the same process also answers MCP (streamable HTTP) at ``/mcp``: an MCP
session's episode is a session of this server, under the same ``max_sessions``, ``ttl`` and
``token`` (``agenthub.service.mcp``).

A server reachable beyond this machine (``host=0.0.0.0``, or any address that is not loopback)
with no ``token`` would let anyone who can reach it run the env: it is refused unless
``--insecure`` says that is meant (a trusted private network), and even then it warns.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from pathlib import Path

from pydantic import Field

from agenthub._version import __version__
from agenthub.cli.overrides import add_overrides
from agenthub.config import build_config
from agenthub.errors import ConfigError
from agenthub.plugins import get_plugin_host
from agenthub.service.settings import TOKEN_ENV_VAR, ServiceSettings
from agenthub.specs import CommandSpec


class ServeConfig(ServiceSettings):
    env: str
    mcp: bool = False
    """Also answer MCP (streamable HTTP) at /mcp, over the same sessions, capacity, ttl and token."""
    workers: int = Field(default=1, ge=1, le=256)
    """Server processes answering the one port, each with its own sessions (max_sessions each); a session's
    calls go to its worker's own port (port+1 .. port+N), named in the create's Location (agenthub.service.workers)."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` only listens on this machine (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a hostname that may resolve to any interface, or "" (all of them)


def refuse_open_exposure(
    host: str, token: str | None, *, insecure: bool, command: str, exposes: str, set_token: str
) -> str | None:
    """The one rule of every server agenthub starts (serve, view, serve-retriever): beyond loopback it needs a
    token, unless ``insecure`` (a trusted network), which returns the warning to print. ``exposes`` says what
    anyone who reaches the port could do; ``set_token`` how to give the server its token."""
    if token or is_loopback(host):
        return None
    if not insecure:
        raise ConfigError(
            f"host={host} serves beyond this machine with no token, so anyone who can reach it can {exposes}; "
            f"{set_token}, use host=127.0.0.1, or add --insecure if the network is trusted"
        )
    warning = f"agenthub {command}: warning: --insecure: serving on {host} with no token"
    return f"{warning}; anyone who can reach this port can {exposes}"


def check_exposure(settings: ServiceSettings, *, insecure: bool) -> str | None:
    """Refuse a server open beyond loopback without a token, unless ``insecure``; then return a warning."""
    return refuse_open_exposure(
        settings.host,
        settings.token,
        insecure=insecure,
        command="serve",
        exposes="create sessions and run the env",
        set_token=f"set token=SECRET (or ${TOKEN_ENV_VAR}) and give clients the same token",
    )


def configure(parser: argparse.ArgumentParser) -> None:
    add_overrides(parser, "env=guess port=8000 max_sessions=256 ttl=600 token=SECRET mcp=true env_kwargs.high=32")
    parser.epilog = (
        "mcp=true: the same server also answers MCP (streamable HTTP) at /mcp, with the tools list_tasks, "
        "start_episode, act and end_episode; an MCP episode is one of its sessions, under the same max_sessions, "
        "ttl and token (needs agenthub[mcp]). agenthub mcp serves MCP alone, over stdio or HTTP. "
        "workers=N: N server processes answer the one port, each with its own sessions (max_sessions each) and "
        "its own port (port+1 .. port+N, which clients must reach); a create's Location names the session's "
        "worker, and EnvClient sends its calls there; a worker that exits is restarted, losing its sessions "
        "(docs/serving.md)."
    )
    parser.add_argument("--ready-file", default=None, help="write {url, pid} here once listening (used by launchers)")
    parser.add_argument(
        "--insecure",
        action="store_true",
        help="allow a host beyond loopback (e.g. host=0.0.0.0) with no token, on a trusted network",
    )


def run(args: argparse.Namespace) -> int:
    # First: a server started by a LocalServer must not outlive it, even before it listens.
    from agenthub.processes import watch_parent_from_env  # imported here, not for `agenthub --help`

    watch_parent_from_env()
    # after the watch: importing the server takes a while
    from agenthub.option_checks import check_env_kwargs
    from agenthub.service.serve import serve

    config = build_config(ServeConfig, args.overrides, config_file=args.config)
    spec = get_plugin_host().env(config.env)
    check_env_kwargs(spec, config.env_kwargs, may_import=True)  # the server imports the env's factory anyway
    # Only what the user set, so the env's own service_defaults can fill the rest.
    own = {"env", "mcp", "workers"}
    settings = ServiceSettings.model_validate(config.model_dump(include=config.model_fields_set - own))
    warning = check_exposure(settings, insecure=args.insecure)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    ready_file = Path(args.ready_file) if args.ready_file else None
    if config.workers > 1:
        if config.mcp:
            raise ConfigError(
                "mcp=true with workers=N is not supported: an MCP session lives in one worker and MCP clients "
                "do not follow Location; serve MCP with workers=1, or run agenthub mcp beside this server"
            )
        from agenthub.service.workers import serve_workers

        serve_workers(config.env, settings, config.workers, ready_file=ready_file)
        return 0
    if config.mcp:
        import agenthub.service.mcp  # noqa: F401 (refuse now, in one line, if the mcp SDK is missing)
    serve(spec, settings, ready_file=ready_file, mcp=config.mcp)
    return 0


COMMANDS = (
    CommandSpec(
        "serve",
        "Serve an environment over HTTP (protocol v1) until SIGTERM.",
        configure,
        run,
        __version__,
    ),
)
