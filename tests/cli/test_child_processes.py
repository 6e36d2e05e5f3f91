"""Env servers die with the process that started them, even when it is killed with SIGKILL.

Real processes throughout: a parent Python starts an ``agenthub serve`` child through the hub's
launcher, prints the child's pid, and is killed with ``kill -9``; the child must be gone in seconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agenthub import LocalServer
from agenthub.processes import PARENT_ENV_VAR, parent_death_supported, popen

GONE_WITHIN_S = 15.0  # a loaded CI machine; an idle one takes well under a second


def dead(pid: int) -> bool:
    """Gone, or a zombie (exited, waiting for a reaper that PID 1 in a container may never be)."""
    stat = Path(f"/proc/{pid}/stat")
    if stat.parent.parent.is_dir() and Path("/proc/self").exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
        except (FileNotFoundError, ProcessLookupError):
            return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def wait_dead(pid: int, timeout_s: float = GONE_WITHIN_S) -> float:
    start = time.monotonic()
    while not dead(pid):
        if time.monotonic() - start > timeout_s:
            os.kill(pid, signal.SIGKILL)  # leave nothing behind, then fail
            pytest.fail(f"child {pid} still alive {timeout_s:g}s after its parent was killed")
        time.sleep(0.05)
    return time.monotonic() - start


@contextlib.contextmanager
def parent_of_a_child(code: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """A parent Python running ``code``, which prints its child's pid as one JSON line and then waits."""
    with subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as parent:
        assert parent.stdout is not None and parent.stderr is not None
        try:
            line = parent.stdout.readline()
            if not line:
                parent.wait(timeout=30)
                pytest.fail(f"the parent did not start its child: {parent.stderr.read()}")
            yield parent, int(json.loads(line)["child"])
        finally:
            if parent.poll() is None:
                parent.kill()


LAUNCHER_PARENT = """
    import json, threading, time
    from agenthub import LocalServer
    server = LocalServer("guess")
    # started from a thread that then ends, as EnvPool.launch does (asyncio.to_thread): the child must
    # still be tied to the process, not to that thread
    threading.Thread(target=server.start).start()
    while not server.url:
        time.sleep(0.01)
    print(json.dumps({"child": server.pid, "url": server.url}), flush=True)
    time.sleep(600)
"""


def test_env_server_dies_when_its_parent_is_killed_with_sigkill() -> None:
    with parent_of_a_child(LAUNCHER_PARENT) as (parent, child):
        assert not dead(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        took = wait_dead(child)
    print(f"child gone {took:.2f}s after kill -9 of its parent")


def test_without_kernel_help_the_server_watches_its_parent(tmp_path: Path) -> None:
    """The fallback off Linux: a plain Popen (no PR_SET_PDEATHSIG), only $AGENTHUB_PARENT_PID."""
    ready = tmp_path / "ready.json"
    code = f"""
        import json, os, subprocess, sys, time
        from pathlib import Path
        env = {{**os.environ, {PARENT_ENV_VAR!r}: str(os.getpid())}}
        child = subprocess.Popen(
            [sys.executable, "-m", "agenthub", "serve", "env=guess", "port=0", "--ready-file={ready}"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        while not Path({str(ready)!r}).exists():
            time.sleep(0.02)
        print(json.dumps({{"child": child.pid}}), flush=True)
        time.sleep(600)
    """
    with parent_of_a_child(code) as (parent, child):
        url = json.loads(ready.read_text())["url"]
        assert httpx.get(f"{url}/healthz").status_code == 200
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        wait_dead(child)


@pytest.mark.skipif(not parent_death_supported(), reason="PR_SET_PDEATHSIG is Linux only")
def test_a_server_started_in_a_thread_outlives_that_thread() -> None:
    """PR_SET_PDEATHSIG fires when the forking *thread* exits: the launcher forks from one that never does."""
    server = LocalServer("guess")
    starter = threading.Thread(target=server.start)
    starter.start()
    starter.join()
    try:
        time.sleep(1.0)  # a signal sent at the thread's exit would have landed by now
        assert server.alive()
        assert httpx.get(f"{server.url}/healthz").status_code == 200
    finally:
        server.stop()


def test_serve_ignores_a_parent_pid_that_is_not_a_number(tmp_path: Path) -> None:
    ready = tmp_path / "ready.json"
    env = {**os.environ, PARENT_ENV_VAR: "not-a-pid"}
    with subprocess.Popen(
        [sys.executable, "-m", "agenthub", "serve", "env=guess", "port=0", f"--ready-file={ready}"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        try:
            deadline = time.monotonic() + 60
            while not ready.exists():
                assert child.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
        finally:
            child.terminate()
            _, stderr = child.communicate(timeout=30)
    assert f"ignoring ${PARENT_ENV_VAR}='not-a-pid': not a process id" in stderr


def children_of(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] not in ("Z", "X"):
            found.append(int(stat.parent.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the children through /proc")
def test_kill_9_of_agenthub_eval_leaves_no_env_server_behind(tmp_path: Path) -> None:
    """The issue's case: `agenthub eval` killed mid-run with two env server processes."""
    with subprocess.Popen(
        [sys.executable, "-m", "agenthub", "eval", "env=guess", "processes=2", "n=500", "k=50", "concurrency=1",
         "progress=false"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    ) as evaluation:  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while not (tmp_path / "runs").exists():  # the run directory is made once both servers answer
                assert evaluation.poll() is None and time.monotonic() < deadline, "eval ended or hung before its run"
                time.sleep(0.1)
            servers = children_of(evaluation.pid)
            assert len(servers) == 2, servers
            evaluation.send_signal(signal.SIGKILL)
            evaluation.wait(timeout=10)
        finally:
            if evaluation.poll() is None:
                evaluation.kill()
    for server in servers:
        wait_dead(server)


def _popen_in_fork() -> None:
    assert popen([sys.executable, "-c", "pass"]).wait(timeout=30) == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")
def test_popen_works_in_a_forked_child_of_a_process_that_already_used_it() -> None:
    """fork copies no threads: a forked child must start its own spawner, not wait on its parent's."""
    import multiprocessing

    assert popen([sys.executable, "-c", "pass"]).wait(timeout=30) == 0  # this process's spawner exists now
    child = multiprocessing.get_context("fork").Process(target=_popen_in_fork)
    with warnings.catch_warnings():  # Python 3.12+ warns of fork in a threaded process: that is the point here
        warnings.simplefilter("ignore", DeprecationWarning)
        child.start()
    child.join(timeout=60)
    if child.is_alive():
        child.kill()
        pytest.fail("popen hung in a forked child")
    assert child.exitcode == 0
