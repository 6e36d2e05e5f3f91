"""The supervisor of ``agenthub serve workers=N``: binds every socket, starts the workers, restarts one that
exits, and stops them all on SIGTERM or SIGINT.

It binds all sockets itself and keeps them open, so a restarted worker listens on the very same ones: the
connections that arrive while it restarts wait in their backlog instead of being refused.
"""

from __future__ import annotations

import ipaddress
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from urllib.parse import urlsplit

from agenthub.errors import AgenthubError, ConfigError
from agenthub.processes import PARENT_ENV_VAR, popen
from agenthub.service.ready_file import wait_for_ready_file, write_ready_file
from agenthub.service.serve import bind_socket, url_of
from agenthub.service.settings import ServiceSettings
from agenthub.service.workers.plan import WorkerPlan

STARTUP_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 30.0
"""A worker's graceful stop (uvicorn's 10 s, then closing its sessions) before it is killed."""
MAX_BACKOFF_S = 30.0


class WorkerStartError(AgenthubError):
    """A worker process did not come up at the start; the others were stopped."""


@dataclass
class Worker:
    index: int
    public: socket.socket
    own: socket.socket
    url: str
    generation: int = 0
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    backoff_s: float = 0.5
    restart_at: float | None = None
    ready_file: Path = field(default_factory=Path)


def worker_base(settings: ServiceSettings) -> tuple[str, str]:
    """(scheme, host) of the address by which clients reach the workers' own ports."""
    if settings.advertise_url:
        parts = urlsplit(settings.advertise_url)
        return parts.scheme, parts.netloc.rsplit(":", 1)[0] if parts.port else parts.netloc
    host = settings.host.strip("[]")
    try:
        wildcard = host == "" or ipaddress.ip_address(host).is_unspecified
    except ValueError:
        wildcard = False  # a host name: clients reach it by that name
    if wildcard:
        raise ConfigError(
            f"workers with host={settings.host or '(all addresses)'} need the address clients reach this machine "
            "by, to send each session to its worker's own port: set advertise_url=http://ADDRESS:PORT "
            "(or $AGENTHUB_ADVERTISE_URL), or bind one address, e.g. host=127.0.0.1"
        )
    return "http", f"[{host}]" if ":" in host else host


def serve_workers(env: str, settings: ServiceSettings, count: int, *, ready_file: Path | None = None) -> None:
    """Serve ``env`` from ``count`` worker processes on one port until SIGTERM/SIGINT."""
    if count < 2:
        raise ConfigError(f"serve_workers needs 2 or more workers, got {count}; one worker is plain agenthub serve")
    scheme, host = worker_base(settings)
    workers = _bind(settings, count, scheme, host)
    public_url = url_of(workers[0].public)
    stopping: list[int] = []

    def stop(signum: int, frame: FrameType | None) -> None:
        stopping.append(signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    with tempfile.TemporaryDirectory(prefix="agenthub-workers-") as scratch:
        try:
            for worker in workers:
                worker.ready_file = Path(scratch) / f"worker-{worker.index}.json"
                _start(worker, env, settings, workers)
            _wait_ready(workers, stopping)
            if not stopping:
                _announce(env, public_url, workers, ready_file)
                _supervise(workers, env, settings, stopping)
        finally:
            _stop_all(workers)
            for worker in workers:
                worker.public.close()
                worker.own.close()
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _bind(settings: ServiceSettings, count: int, scheme: str, host: str) -> list[Worker]:
    """The shared port's N sockets (one per worker, SO_REUSEPORT) and each worker's own port."""
    if settings.port and settings.port + count > 65535:
        raise ConfigError(
            f"workers={count} listen on port={settings.port} and the {count} ports after it, past 65535; "
            "choose a lower port, or port=0 for free ones"
        )
    if settings.port:
        # A plain bind first: SO_REUSEPORT alone would join another server that holds the port with it too.
        bind_socket(settings.host, settings.port).close()
    bound: list[socket.socket] = []
    try:
        first = bind_socket(settings.host, settings.port, reuse_port=True)
        bound.append(first)
        port = first.getsockname()[1]
        publics = [first] + [bind_socket(settings.host, port, reuse_port=True) for _ in range(count - 1)]
        bound[:] = publics
        workers = []
        for index, public in enumerate(publics):
            # Fixed ports after the shared one, so firewalls and port maps can name them; free ones with port=0.
            own = bind_socket(settings.host, port + 1 + index if settings.port else 0)
            bound.append(own)
            workers.append(Worker(index, public, own, f"{scheme}://{host}:{own.getsockname()[1]}"))
        return workers
    except BaseException:
        for sock in bound:
            sock.close()
        raise


def _start(worker: Worker, env: str, settings: ServiceSettings, workers: list[Worker]) -> None:
    worker.ready_file.unlink(missing_ok=True)
    given = settings.model_dump(include=settings.model_fields_set)  # so the env's service_defaults fill the rest
    plan = WorkerPlan(
        env=env,
        index=worker.index,
        generation=worker.generation,
        urls=[w.url for w in workers],
        public_port=worker.public.getsockname()[1],
        public_fd=worker.public.fileno(),
        own_fd=worker.own.fileno(),
        ready_file=str(worker.ready_file),
        settings={**given, "advertise_url": worker.url},
    )
    process = popen(
        [sys.executable, "-m", "agenthub.service.workers.child"],
        parent_death_signal=signal.SIGTERM,
        stdin=subprocess.PIPE,
        pass_fds=(worker.public.fileno(), worker.own.fileno()),
        env={**os.environ, PARENT_ENV_VAR: str(os.getpid())},
    )
    assert process.stdin is not None
    process.stdin.write(plan.model_dump_json().encode())
    process.stdin.close()
    worker.process, worker.started_at, worker.restart_at = process, time.monotonic(), None


def _wait_ready(workers: list[Worker], stopping: list[int]) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    for worker in workers:
        assert worker.process is not None
        problem = wait_for_ready_file(worker.process, worker.ready_file, deadline, STARTUP_TIMEOUT_S, stopping=stopping)
        if problem is not None:
            raise WorkerStartError(f"worker {worker.index} {problem}; its log is above, on this process's stderr")


def _announce(env: str, public_url: str, workers: list[Worker], ready_file: Path | None) -> None:
    urls = ", ".join(w.url for w in workers)
    print(
        f"agenthub: serving env {env!r} on {public_url} with {len(workers)} workers ({urls}) (pid {os.getpid()})",
        file=sys.stderr,
        flush=True,
    )
    if ready_file is not None:
        ready = {"url": public_url, "pid": os.getpid(), "env": env, "workers": [w.url for w in workers]}
        write_ready_file(ready_file, ready)


def _supervise(workers: list[Worker], env: str, settings: ServiceSettings, stopping: list[int]) -> None:
    """Restart any worker that exits (a worker that keeps dying waits longer each time), until a signal."""
    while not stopping:
        now = time.monotonic()
        for worker in workers:
            assert worker.process is not None
            if worker.restart_at is not None:
                if now >= worker.restart_at:
                    worker.generation += 1
                    _start(worker, env, settings, workers)
                continue
            code = worker.process.poll()
            if code is None:
                continue
            # One that ran a while is restarted at once; one that keeps dying soon waits longer each time.
            ran_long = now - worker.started_at > 60
            worker.restart_at = now + (0.0 if ran_long else worker.backoff_s)
            worker.backoff_s = 0.5 if ran_long else min(MAX_BACKOFF_S, worker.backoff_s * 2)
            print(
                f"agenthub serve: worker {worker.index} (pid {worker.process.pid}) exited with code {code}; "
                f"the sessions it held are lost; restarting it in {worker.restart_at - now:g}s",
                file=sys.stderr,
                flush=True,
            )
        time.sleep(0.1)


def _stop_all(workers: list[Worker]) -> None:
    """SIGTERM to every worker at once (each closes its sessions), then SIGKILL to any still running."""
    running = [w.process for w in workers if w.process is not None and w.process.poll() is None]
    for process in running:
        process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for process in running:
        try:
            process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
