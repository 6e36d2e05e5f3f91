"""Start and stop local environment servers: as child processes, or in a thread.

A child process reports its URL through a "ready file" once it is listening,
so ports are never guessed (port 0 picks a free one) and a server that
fails to start is reported with the tail of its log.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import uvicorn

from agenthub.errors import AgenthubError
from agenthub.processes import PARENT_ENV_VAR, popen
from agenthub.service.ready_file import wait_for_ready_file
from agenthub.service.serve import bind_socket, loop_factory, url_of, uvicorn_config
from agenthub.service.settings import TOKEN_ENV_VAR, ServiceSettings
from agenthub.specs import EnvSpec


class ServerStartError(AgenthubError):
    """A local environment server did not come up."""


class LocalServer:
    """An environment server in a child process (``agenthub serve``), stopped with SIGTERM.

    The child dies with this process, even if it is killed with SIGKILL (see :mod:`agenthub.processes`).

    Example::

        with LocalServer("guess") as server:
            client = EnvClient(server.url)
    """

    def __init__(
        self,
        env: str,
        *,
        overrides: dict[str, Any] | None = None,
        startup_timeout_s: float = 60.0,
        python: str = sys.executable,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.env = env
        self.overrides = {"port": 0, **(overrides or {})}
        self.startup_timeout_s = startup_timeout_s
        self.python = python
        self.extra_env = extra_env or {}
        self._dir = tempfile.TemporaryDirectory(prefix=f"agenthub-{env}-")
        self.log_path = Path(self._dir.name) / "server.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""

    def command(self, ready_file: Path) -> list[str]:
        # The token goes by environment (child_env), never on the command line, which every local user reads.
        settings = {k: v for k, v in self.overrides.items() if k != "token"}
        args = [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in settings.items()]
        return [self.python, "-m", "agenthub", "serve", f"env={self.env}", *args, f"--ready-file={ready_file}"]

    def child_env(self) -> dict[str, str]:
        """The server's environment: ours, the caller's extras, the parent watch, and the token if one is set."""
        env = {**os.environ, **self.extra_env, PARENT_ENV_VAR: str(os.getpid())}
        token = self.overrides.get("token")
        if token:
            env[TOKEN_ENV_VAR] = str(token)
        return env

    def start(self) -> LocalServer:
        ready = Path(self._dir.name) / "ready.json"
        log = self.log_path.open("wb")
        self.process = popen(
            self.command(ready),
            # SIGTERM: the server closes its sessions (and their own children) as on any stop; the
            # child's parent watch (PARENT_ENV_VAR) exits hard if that stop hangs.
            parent_death_signal=signal.SIGTERM,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=self.child_env(),
        )
        log.close()
        deadline = time.monotonic() + self.startup_timeout_s
        problem = wait_for_ready_file(self.process, ready, deadline, self.startup_timeout_s)
        if problem is not None:
            tail = self.log_tail()
            self.stop()
            raise ServerStartError(f"env server {self.env!r} {problem}; its log ends with:\n{tail}")
        self.url = json.loads(ready.read_text())["url"]
        return self

    @property
    def pid(self) -> int:
        if self.process is None:
            raise ServerStartError("the server has not been started")
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return "(no log)"

    def stop(self, timeout_s: float = 15.0) -> int | None:
        """SIGTERM, then SIGKILL if it does not exit in time; removes the log. Returns the exit code."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._dir.cleanup()
        return self.process.returncode

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def start_local_servers(env: str, count: int, *, overrides: dict[str, Any] | None = None) -> list[LocalServer]:
    """``count`` :class:`LocalServer` of ``env``, started at once (each in a thread); all or none:
    when one fails to start, those that did are stopped and its error is raised."""
    if count < 1:
        raise AgenthubError(f"the number of env server processes must be >= 1, got {count}")
    servers = [LocalServer(env, overrides=overrides) for _ in range(count)]
    errors: list[BaseException] = []

    def start(server: LocalServer) -> None:
        try:
            server.start()
        except BaseException as exc:  # raised below, in the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(s,), name=f"agenthub-start-{env}") for s in servers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        for server in servers:
            server.stop()
        raise errors[0]
    return servers


class ThreadedServer:
    """An environment server on loopback in a background thread of this process.

    Cheaper than a child process; used by the conformance checker and tests.
    """

    def __init__(self, spec: EnvSpec, settings: ServiceSettings | None = None) -> None:
        self.spec = spec
        self.settings = (settings or ServiceSettings()).model_copy(update={"port": 0})
        self.url = ""
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def start(self, timeout_s: float = 30.0) -> ThreadedServer:
        sock = bind_socket(self.settings.host, 0)
        self.url = url_of(sock)
        self._server = uvicorn.Server(uvicorn_config(self.spec, self.settings))

        def run() -> None:
            try:
                with asyncio.Runner(loop_factory=loop_factory()) as runner:
                    runner.run(self._server.serve(sockets=[sock]))  # type: ignore[union-attr]
            except BaseException as exc:  # reported by start()
                self._error = exc
            finally:
                sock.close()

        self._thread = threading.Thread(target=run, name=f"agenthub-server-{self.spec.name}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if self._error is not None or not self._thread.is_alive():
                raise ServerStartError(f"env server {self.spec.name!r} failed to start: {self._error!r}")
            if time.monotonic() > deadline:
                raise ServerStartError(f"env server {self.spec.name!r} was not ready after {timeout_s:g}s")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=30)

    def __enter__(self) -> ThreadedServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
