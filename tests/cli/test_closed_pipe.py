"""A reader that leaves early (``agenthub plugins | head -1``) ends the command as SIGPIPE ends a Unix tool."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agenthub.cli.closed_pipe import SIGPIPE_EXIT


@pytest.mark.parametrize("argv", [["plugins"], ["plugins", "--json"]], ids=["table", "json"])
def test_a_closed_stdout_ends_quietly_with_sigpipes_status(argv: list[str]) -> None:
    child = subprocess.Popen([sys.executable, "-m", "agenthub", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # the reader is gone before the command prints its first line
    with child.stderr:
        err = child.stderr.read().decode()
    assert child.wait(timeout=60) == SIGPIPE_EXIT == 141
    assert err == "", err  # no traceback, no "Exception ignored" at exit


def test_a_reader_that_stays_gets_everything_and_status_0() -> None:
    done = subprocess.run([sys.executable, "-m", "agenthub", "plugins", "--json"], capture_output=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip().startswith(b"[")
