"""The "ready file": how a server process that was started as a child tells its parent that it listens, and
where. The child writes it once it is listening; the parent waits for it, so ports are never guessed."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Sized
from pathlib import Path
from typing import Any


def write_ready_file(path: Path, ready: dict[str, Any]) -> None:
    """Write ``ready`` as JSON to ``path`` atomically: a reader never sees half a file."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(ready))
    tmp.replace(path)


def wait_for_ready_file(
    process: subprocess.Popen[bytes], path: Path, deadline: float, timeout_s: float, *, stopping: Sized = ()
) -> str | None:
    """Wait until ``process`` writes ``path`` (or ``stopping`` is no longer empty). Returns what went wrong, to
    end an error message that starts with the process's name: it exited first, or ``deadline`` (a
    ``time.monotonic()``, ``timeout_s`` after the start) passed; None when it is ready."""
    while not path.exists() and not stopping:
        code = process.poll()
        if code is not None:
            return f"exited with code {code} before it was ready"
        if time.monotonic() > deadline:
            return f"was not ready after {timeout_s:g}s"
        time.sleep(0.02)
    return None
