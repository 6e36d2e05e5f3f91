"""``agenthub view RUN_DIR [host=127.0.0.1 port=8765 tokenizer=PATH token=SECRET] [--insecure]``: browse runs
in a local web page.

RUN_DIR is one run (``runs/<run-id>``) or a ``runs/`` root. The page lists the
episodes (filters, paging), replays one turn by turn with its tokens, and shows
the per-task table and the learning curves; see :mod:`agenthub.viewer`. It
binds to loopback unless told otherwise and serves until Ctrl-C or SIGTERM.
``port=0`` picks a free port; the URL is printed, and written with the pid to
``--ready-file`` once the server is listening (for scripts and tests).

As with ``agenthub serve``, a viewer reachable beyond this machine (``host=0.0.0.0``) is refused
without ``token=`` unless ``--insecure`` says the network is trusted. With a token, every API route
needs it; the printed URL carries it once (``/?token=...``) and the page keeps it in a cookie
(:mod:`agenthub.viewer.auth`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from agenthub._version import __version__
from agenthub.cli.serve_command import refuse_open_exposure
from agenthub.config import build_config
from agenthub.errors import ConfigError
from agenthub.specs import CommandSpec


class ViewConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    host: str = Field(default="127.0.0.1", description="the address to listen on; loopback by default")
    port: int = Field(default=8765, ge=0, le=65535, description="0 picks a free port")
    tokenizer: str | None = Field(default=None, description="a local tokenizer to show token text (default: found)")
    token: str | None = Field(
        default=None, description="needed by every API route; required beyond loopback unless --insecure"
    )


_TOKEN_CHARS = re.compile(r"[A-Za-z0-9._~-]{16,}")
"""URL- and cookie-safe, and long enough to guess at no faster than the network allows."""


def check_view_exposure(config: ViewConfig, *, insecure: bool) -> str | None:
    """Refuse a viewer open beyond loopback without a token, unless ``insecure``; then return a warning.

    The same rule as ``agenthub serve`` (``serve_command.check_exposure``): run data is as private as env access.
    """
    if config.token is not None and not _TOKEN_CHARS.fullmatch(config.token):
        raise ConfigError(
            "token= must be at least 16 characters of letters, digits and -._~ (it travels in a URL and a cookie); "
            "make one with: python -c 'import secrets; print(secrets.token_urlsafe())'"
        )
    return refuse_open_exposure(
        config.host,
        config.token,
        insecure=insecure,
        command="view",
        exposes="read these runs",
        set_token="set token=SECRET (open the printed URL, which carries it)",
    )


async def serve_viewer(
    run_dir: Path, config: ViewConfig, *, ready_file: Path | None = None, insecure: bool = False
) -> None:
    # imported here, not for `agenthub --help`
    import asyncio

    import uvicorn

    from agenthub.service.serve import bind_socket, url_of
    from agenthub.viewer.api import create_app

    warning = check_view_exposure(config, insecure=insecure)
    app = create_app(run_dir, tokenizer=config.tokenizer, token=config.token)  # refuses a wrong RUN_DIR before binding
    try:
        sock = bind_socket(config.host, config.port)
    except OSError as exc:
        raise ConfigError(str(exc)) from None  # already says what to do; shown without a traceback
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", log_config=None, access_log=False))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():  # noqa: ASYNC110 - uvicorn offers no startup event
        await asyncio.sleep(0.01)
    if server.started:
        url = url_of(sock) + "/"
        # The token is printed once, in the URL to open (as Jupyter does): that visit keeps it in a cookie.
        shown = f"{url}?token={config.token}" if config.token else url
        print(f"agenthub view: {run_dir} on {shown}  (Ctrl-C to stop)", file=sys.stderr, flush=True)
        if warning:
            print(warning, file=sys.stderr, flush=True)
        if ready_file is not None:
            tmp = ready_file.with_suffix(".tmp")
            tmp.write_text(json.dumps({"url": url, "pid": os.getpid(), "run_dir": str(run_dir)}))
            tmp.replace(ready_file)  # atomic: a reader never sees half a file
    await task
    sock.close()


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory (runs/<run-id>) or a runs/ root")
    parser.add_argument(
        "overrides", nargs="*", metavar="key=value", help="settings, e.g. port=8765 host=127.0.0.1 tokenizer=PATH"
    )
    parser.add_argument("--ready-file", default=None, help="write {url, pid} here once listening (used by scripts)")
    parser.add_argument("--insecure", action="store_true", help="allow a host beyond loopback with no token")


def run(args: argparse.Namespace) -> int:
    import asyncio

    from agenthub.service.serve import loop_factory

    config = build_config(ViewConfig, args.overrides)
    ready = Path(args.ready_file) if args.ready_file else None
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        runner.run(
            serve_viewer(Path(args.run_dir), config, ready_file=ready, insecure=getattr(args, "insecure", False))
        )
    return 0


COMMANDS = (
    CommandSpec(
        "view",
        "Browse runs in a local web page: episodes, turn-by-turn replay with tokens, per-task table, curves.",
        configure,
        run,
        __version__,
    ),
)
