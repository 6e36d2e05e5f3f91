"""A reader that leaves early (``agenthub plugins | head -1``): the command ends as a Unix tool does.

A tool whose stdout closes is killed by SIGPIPE: no message, exit status 141. Python turns SIGPIPE into
``BrokenPipeError`` instead, and rich's console turns that into a silent ``exit 1``, which reads as a
failure. Every command's output goes through :func:`console` or ``print``, and ``cli.main`` answers a
``BrokenPipeError`` with :func:`closed_pipe`.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

SIGPIPE_EXIT = 128 + 13


def closed_pipe() -> int:
    """Silence the rest of stdout and return SIGPIPE's exit status."""
    # Python flushes stdout again at exit and prints "Exception ignored ..." when it cannot: point it at
    # /dev/null first (the recipe in the signal module's documentation).
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return SIGPIPE_EXIT


def console(**options: Any) -> Console:
    """A rich console whose closed pipe reaches ``cli.main`` as ``BrokenPipeError`` (rich would exit 1)."""
    from rich.console import Console  # imported here, not for `agenthub --help`

    class _PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return _PipeConsole(**options)
