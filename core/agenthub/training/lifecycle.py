"""What every trainer adapter does around its framework, whatever the framework.

Before a run: the framework's prerequisites and the launch checks, printed and, when they
refuse, raised (:func:`preflight`; in a dry run :func:`print_dry_run_checks`, as comments).
During it: env servers started for the run when no ``url`` names running ones, here or, with
``backend=ray``, on a Ray cluster's nodes (:func:`env_servers`). At its end: the run store records
how it ended, ``finished``, ``failed`` or ``interrupted`` (Ctrl-C or SIGTERM), with the trainer's summary
(:func:`recorded_run`).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import FrameType
from typing import Any, TextIO

from agenthub.config import RolloutBackendConfig, check_rollout_backend
from agenthub.rollout.store import RunStore
from agenthub.training.launch_checks import LaunchReport
from agenthub.training.prerequisites import FrameworkNeeds, check_framework, framework_problems


def print_checks(report: LaunchReport, *, comment: bool = False, file: TextIO | None = None) -> None:
    """The launch checks' summary and warnings; as ``# `` comments in a dry run, whose output stays YAML."""
    out = file or sys.stdout
    print(f"# {report.summary()}" if comment else report.summary(), file=out, flush=True)
    for warning in report.warnings:
        prefix = "# warning" if comment else "warning"
        print(f"{prefix}: {warning.key}: {warning.message}", file=out, flush=True)


def preflight(
    needs: FrameworkNeeds, checks: Callable[[], LaunchReport] | None = None, *, file: TextIO | None = None
) -> LaunchReport | None:
    """Before a real run starts anything: the framework's prerequisites (raises with all that is
    missing), then ``checks()`` (the trainer's launch checks), printed, raised when they refuse."""
    check_framework(needs)
    if checks is None:
        return None
    report = checks()
    print_checks(report, file=file)
    report.raise_if_refused()
    return report


def print_framework_problems(needs: FrameworkNeeds) -> None:
    """A dry run's comment for each thing on this machine that would stop a real run."""
    for problem in framework_problems(needs):
        print(f"# a real run would stop here: {problem}")


def print_dry_run_checks(needs: FrameworkNeeds, checks: Callable[[], LaunchReport]) -> LaunchReport:
    """A dry run's checks, as comments: what would stop a real run here, then ``checks()`` (the
    trainer's launch checks, run in dry-run mode). Returns their report unraised: the caller
    raises ``report.raise_if_refused()`` after printing its plan, so that a refused dry run
    still shows what it would have run."""
    print_framework_problems(needs)
    report = checks()
    print_checks(report, comment=True)
    return report


class RunEnd:
    """How a run ended, as :func:`recorded_run` writes it into the run store."""

    def __init__(self) -> None:
        self.status = "finished"

    def exited(self, code: int) -> int:
        """The framework's exit code: 0 is ``finished``, anything else ``failed``; returns ``code``."""
        self.status = "finished" if code == 0 else "failed"
        return code


class RunTerminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a scheduler's stop) inside :func:`recorded_run`: handled as Ctrl-C is.

    A KeyboardInterrupt, so that every ``except KeyboardInterrupt`` on the way (the framework's, the CLI's)
    unwinds it as it would a Ctrl-C, with the env servers and the run store closed on the way out."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


def resume_line(store: RunStore) -> str:
    """The line printed when a run is interrupted: where it is and the command that continues it.

    One line, the command last and unbroken, so that it can be copied whole."""
    return f"interrupted: run saved in {store.path}; resume with: agenthub run --resume {store.path}"


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM is handled as Ctrl-C in the main thread for the body's length, or raises :class:`RunTerminated`
    where Ctrl-C is ignored (elsewhere: nothing, as Python lets only the main thread set handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def as_ctrl_c(signum: int, frame: FrameType | None) -> None:
        # Whoever handles Ctrl-C now handles this too: inside asyncio.Runner.run that cancels the running
        # task (a KeyboardInterrupt raised into the event loop instead would leave its episodes running
        # while the pool closes); elsewhere Python's handler raises KeyboardInterrupt.
        on_sigint = signal.getsignal(signal.SIGINT)
        if callable(on_sigint):
            on_sigint(signal.SIGINT, frame)
            return
        raise RunTerminated(signum)

    previous = signal.signal(signal.SIGTERM, as_ctrl_c)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """While the run's end is written, a second Ctrl-C or SIGTERM waits: cut short, run.json would stay
    ``running``. The signal is re-raised once the record is written."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous = {s: signal.signal(s, lambda signum, _frame: pending.append(signum)) for s in _STOP_SIGNALS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if pending:
            raise RunTerminated(pending[0]) if pending[0] == signal.SIGTERM else KeyboardInterrupt()


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def recorded_run(
    store: RunStore, summary: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None
) -> Iterator[RunEnd]:
    """Run the body, then always finish ``store`` with its status and ``summary`` (a callable is
    called at the end, so it can sum up what the run did): ``finished``, ``failed`` when the body
    raises or :meth:`RunEnd.exited` saw a non-zero code, ``interrupted`` on Ctrl-C or SIGTERM
    (re-raised as a KeyboardInterrupt, after :func:`resume_line` on stderr)."""
    end = RunEnd()
    try:
        with terminate_as_interrupt():
            yield end
    except KeyboardInterrupt:
        end.status = "interrupted"
        raise
    except BaseException:
        end.status = "failed"
        raise
    finally:
        with _signals_deferred():
            store.finish(_summed(summary), status=end.status)
            if end.status == "interrupted":
                print(resume_line(store), file=sys.stderr, flush=True)


def _summed(summary: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None) -> Mapping[str, Any] | None:
    """The summary; a summary that fails (e.g. over half a run) is reported, not left to keep run.json
    ``running``."""
    if not callable(summary):
        return summary
    try:
        return summary()
    except Exception as exc:
        problem = f"{type(exc).__name__}: {exc}"
        print(f"warning: the run's summary failed ({problem}); run.json records that", file=sys.stderr)
        return {"summary_error": problem}


class ServerUrls(list[str]):
    """The env servers' URLs of a run (a list), and the bearer token they answer to (``token``)."""

    def __init__(self, urls: Iterable[str], token: str | None) -> None:
        super().__init__(urls)
        self.token = token


@contextlib.contextmanager
def env_servers(
    env: str,
    urls: Sequence[str] | None,
    *,
    processes: int,
    max_sessions: int,
    token: str | None = None,
    backend: RolloutBackendConfig | None = None,
) -> Iterator[ServerUrls]:
    """The env servers' URLs for the length of a run: ``urls`` when given (servers that run
    elsewhere), else those of ``processes`` local ``agenthub serve`` servers, started here (at
    once) and stopped when the run ends, however it ends.

    With ``backend=ray`` (a trainer's :class:`~agenthub.config.RolloutBackendConfig`) the servers
    are placed on the Ray cluster at ``backend.address`` instead: ``processes`` on every node with
    room, listening on the node's address, so that the framework's workers on any node reach them;
    they answer to ``token``, or to a new random one (the URLs' ``token``: hand that to the workers),
    and are stopped when the run ends."""
    if backend is not None:
        check_rollout_backend(backend, urls=urls)
    if urls:
        yield ServerUrls(urls, token)
        return
    if backend is not None and backend.backend == "ray":
        with _ray_env_servers(env, backend.address, processes, max_sessions, token) as placed:
            yield placed
        return
    from agenthub.service.launcher import start_local_servers  # uvicorn: only for a run that serves envs

    overrides: dict[str, Any] = {"max_sessions": max_sessions}
    if token:
        overrides["token"] = token
    servers = start_local_servers(env, processes, overrides=overrides)
    try:
        yield ServerUrls([server.url for server in servers], token)
    finally:
        for server in servers:
            server.stop()


@contextlib.contextmanager
def _ray_env_servers(
    env: str, address: str | None, processes: int, max_sessions: int, token: str | None
) -> Iterator[ServerUrls]:
    """``env``'s servers on the Ray cluster's nodes (:func:`agenthub.rollout.ray.launch_on_ray`), one event
    loop from start to stop (the pool's clients belong to it). A Ray the pool started itself (no cluster
    to join) stops with it, after the servers."""
    from agenthub.rollout.ray import launch_on_ray  # Ray: only for a run that asks for it

    token = token or secrets.token_urlsafe(24)
    with asyncio.Runner() as runner:
        pool = runner.run(
            launch_on_ray(
                env,
                address=address,
                processes_per_node=processes,
                capacity=max_sessions,
                overrides={"token": token, "max_sessions": max_sessions},
            )
        )
        try:
            yield ServerUrls([endpoint.url for endpoint in pool.endpoints], token)
        finally:
            runner.run(pool.close())
